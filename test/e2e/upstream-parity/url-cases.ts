/**
 * Remote URLs for the differential test of ToolHive's ValidateRemoteURL, each judged with
 * allowPrivateEndpoint true and false: IPv4 literals in every form Go's URL parser passes on (and
 * net.ParseIP reads or does not: octal, hex, short and leading-zero forms are hostnames to it),
 * IPv4-mapped and other IPv6 forms with zones, trailing dots, case, percent-encoding in the host,
 * userinfo, ports, the blocked hostnames and their subdomains and look-alikes, cluster.local,
 * other schemes, no host and what url.Parse refuses.
 */

import type { Random } from './random.ts'
import { seeded } from './random.ts'

export interface UrlCase {
  readonly url: string
  readonly allowPrivateEndpoint: boolean
}

const IPV4 = [
  ...['127.0.0.1', '127.1', '127.0.1', '127.255.255.254', '0x7f.0.0.1', '0x7f000001', '2130706433'],
  ...['0177.0.0.1', '017700000001', '127.000.000.001', '0127.0.0.1', '127.0.0.01', '10.0.0.1'],
  ...['010.0.0.1', '10.1', '0xa.0.0.1', '10.255.255.255', '11.0.0.0', '9.255.255.255'],
  ...['172.16.0.1', '172.31.255.255', '172.32.0.1', '172.15.255.255', '192.168.1.1'],
  ...['192.168.0.0', '192.169.0.1', '192.167.255.255', '169.254.169.254', '169.254.0.0'],
  ...['169.255.0.1', '169.253.255.255', '0.0.0.0', '0.1.2.3', '0', '1.0.0.0', '8.8.8.8'],
  ...['1.1.1.1', '255.255.255.255', '256.0.0.1', '1.2.3', '1.2.3.4.5', '01.02.03.04'],
  ...['100.64.0.1', '224.0.0.1', '127.0.0.1.', '10.0.0.1.', '127.0.0.1..', '192.168.1.1.'],
  ...['1.2.3.4', '203.0.113.7', '127.0.0.%31', '%31%32%37.0.0.1', '1e2.0.0.1', '+1.2.3.4'],
]

const IPV6 = [
  ...['[::1]', '[::]', '[0:0:0:0:0:0:0:1]', '[0:0:0:0:0:0:0:0]', '[::0:1]', '[0000::0001]'],
  ...['[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::FFFF:7F00:1]', '[::ffff:10.0.0.1]'],
  ...['[::ffff:192.168.0.1]', '[::ffff:172.16.5.4]', '[::ffff:169.254.169.254]'],
  ...['[::ffff:8.8.8.8]', '[::ffff:0:0]', '[::ffff:0.0.0.0]', '[::127.0.0.1]', '[::10.0.0.1]'],
  ...['[64:ff9b::127.0.0.1]', '[fe80::1]', '[FE80::1]', '[febf:ffff::1]', '[fec0::1]'],
  ...['[fe80::1%25eth0]', '[::1%25lo]', '[fe80::1%eth0]', '[fe80::1%25]', '[::1%2525]'],
  ...['[fc00::1]', '[fd12:3456::1]', '[FDFF::1]', '[fe00::1]', '[fb00::1]', '[2001:db8::1]'],
  ...['[2606:4700:4700::1111]', '[::2]', '[1::]', '[00001::]', '[::1', '::1', '[::1]]'],
  ...['[127.0.0.1]', '[localhost]', '[::ffff:127.1]', '[::1.2.3.4]', '[0::ffff:7f00:0001]'],
  ...['[::ffff:a9fe:a9fe]', '[::ffff:c0a8:101]', '[%3A%3A1]', '[::%31]'],
]

const HOSTNAMES = [
  ...['localhost', 'LOCALHOST', 'LocalHost', 'localhost.', 'api.localhost', 'a.b.localhost'],
  ...['localhost.example.com', 'mylocalhost', 'localhost-1', 'localhos', '.localhost'],
  ...['kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
  ...['api.kubernetes.default.svc', 'KUBERNETES.DEFAULT', 'kubernetes.default.svc.cluster.local.'],
  ...['kubernetes.default.', 'kubernetes', 'kubernetes.default.svc.cluster', 'xkubernetes.default'],
  ...['metadata.google.internal', 'METADATA.Google.Internal', 'x.metadata.google.internal'],
  ...['metadata.google.internal.', 'metadata', 'google.internal', 'metadata.google.internal.x'],
  ...['my-svc.ns.svc.cluster.local', 'cluster.local', 'CLUSTER.LOCAL', 'foo.cluster.local.'],
  ...['notcluster.local', 'cluster.local.example.com', 'my-svc.ns.svc', 'my-svc', 'svc.cluster'],
  ...['example.com', 'EXAMPLE.com', 'mcp.example.com', 'xn--bcher-kva.example', 'bücher.example'],
  ...['exa%6Dple.com', 'local%68ost', '%6c%6f%63%61%6c%68%6f%73%74', 'localhost%2e', '%zz'],
  ...['kubernetes%2Edefault', 'a_b.example', 'exa mple.com', '*.example.com', '-x.example'],
  ...['a..b', '.', '..', 'x.', 'a%20b', 'ex%41mple.com', 'cluster%2elocal', 'host%00'],
  // Case folding as Go's strings.ToLower does it, which JavaScript's toLowerCase does not always.
  ...[
    'metadata.google.\u0130nternal',
    '\u212Aubernetes.default',
    'ＬＯＣＡＬＨＯＳＴ',
    'ſvc.cluster.local',
  ],
  ...['LOCALHOST\u0130', 'CLUSTER.LOCA\u013F', 'kubernetes.default.svc.cluster.loca\u0130'],
  ...['例え.jp', 'ex!ample.com', 'a$b', "a'b", 'a(b)', 'a*b', 'a+b', 'a,b', 'a;b', 'a=b', 'a~b'],
  ...['a[b', 'a]b', 'a{b', 'a|b', 'a^b', 'a`b', 'a<b', 'a"b', 'a%4Cb', '%E4%BE%8B.jp', '%C0%AF'],
]

const PORTS = ['', ':', ':80', ':0', ':65535', ':65536', ':99999999999999999999', ':abc']
const MORE_PORTS = [':-1', ':8080:80', ':+80', ': 80', ':0x50', ':٨٠']
const USERINFO = ['user@', 'user:pass@', ':@', '@', 'a%40b@', 'u:p%3A@', 'localhost@', '127.0.0.1@']
const SCHEMES = ['http', 'https', 'HTTP', 'Https', 'ftp', 'ws', 'file', 'javascript', 'h-ttp']
const PATHS = ['', '/', '/mcp', '/a/b?c=d#e', '?x', '#frag', '/%zz', '/ space']

/** Whole URLs that are not a scheme, a host and the rest. */
const FORMS = [
  ...['', ' ', 'http://', 'https://', 'http:', 'http:/', 'http:///path', 'http:host'],
  ...['http:/example.com', '//example.com', 'example.com', 'example.com:80', 'localhost:8080'],
  ...['127.0.0.1:80', ' http://example.com', 'http://example.com ', 'http://exam\nple.com'],
  ...['http://example.com/\x7f', 'http://\texample.com', 'http://#', 'http://?', 'http://@'],
  ...['http://\\\\evil.com', 'http:\\\\example.com', '1http://example.com', 'h ttp://x'],
  ...['http://a@b@c', 'http://example.com@127.0.0.1', 'http://127.0.0.1@example.com'],
  ...['http://[::1]@example.com', 'http://example.com:80@localhost', 'mailto:a@b.example'],
  ...['HTTP://LOCALHOST', 'HtTp://10.0.0.1/', 'http+unix://x', 'http://%', 'http://%41'],
  ...['http://x:y:z', 'http://[]', 'http://[:]', 'http://[::1]:', 'http://[::1]:65536'],
  ...['http://[::1]x', 'https://[fe80::1%25en0]:8443/', 'http://example.com/..%2f'],
  ...['http://example.com%2F@127.0.0.1/', 'http://0/', 'http://0x0/', 'http://00/'],
  ...['http://[fe80::1%25%65th0]/', 'http://[fe80::1%25eth0%2e]/', 'http://example.com/%2'],
  ...['http://x/?%', 'http://a b@example.com', 'http://user:p@ss@example.com', 'http://@localhost'],
  ...['http://:@localhost:80', 'http://127.0.0.1:80.', 'http://localhost:8080?x', 'http://x#%zz'],
  ...['http://[::ffff:7f00:1]:0', 'http://0x7f.1', 'http://[::1].', 'http://[::1]%2e'],
]

function decorated(random: Random, host: string): string {
  const scheme = random.pick(SCHEMES.slice(0, 4))
  const userinfo = random.chance(0.3) ? random.pick(USERINFO) : ''
  const port = random.chance(0.5) ? random.pick(PORTS.slice(0, 5)) : ''
  return `${scheme}://${userinfo}${host}${port}${random.pick(PATHS)}`
}

export function urlCases(): UrlCase[] {
  const random = seeded(0x0c0ffee)
  const urls = new Set<string>(FORMS)
  for (const host of [...IPV4, ...IPV6, ...HOSTNAMES]) {
    urls.add(`http://${host}`)
    urls.add(`https://${host}:8443/mcp`)
    urls.add(decorated(random, host))
  }
  for (const port of [...PORTS, ...MORE_PORTS])
    for (const host of ['example.com', '10.0.0.1', '[::1]', 'localhost'])
      urls.add(`http://${host}${port}/`)
  for (const userinfo of USERINFO)
    for (const host of ['example.com', '127.0.0.1', 'my-svc.ns.svc.cluster.local'])
      urls.add(`https://${userinfo}${host}/`)
  for (const scheme of SCHEMES)
    for (const host of ['example.com', '192.168.0.10', 'metadata.google.internal'])
      urls.add(`${scheme}://${host}/`)
  for (const path of PATHS) urls.add(`http://example.com${path}`)
  return [...urls].flatMap((url) => [
    { url, allowPrivateEndpoint: false },
    { url, allowPrivateEndpoint: true },
  ])
}
