import t from 'tap'
import { refuseRemoteUrl, remoteUrlRefusal } from '../../src/policy/remote-url.ts'

const ACCEPTED = undefined
const SAME = 'SAME'

/**
 * [spec.remoteUrl, Go's refusal without allowPrivateEndpoint, with it (SAME: the same)]: every
 * expected value is what ToolHive v0.63.0's ValidateRemoteURL returned under Go 1.26.8 (a copy of
 * the function run on these inputs; v0.33.0's, which has no option, returned the first column).
 */
const GO_ANSWERS: readonly [string, string | undefined, string | undefined][] = [
  // IPv4 literals at each range's edges; the forms Go does not read as IPs are hostnames that pass
  [
    'http://10.0.0.1/',
    'remote URL host is not allowed: IP address 10.0.0.1 falls within blocked range 10.0.0.0/8',
    ACCEPTED,
  ],
  [
    'http://10.255.255.255:8080/mcp',
    'remote URL host is not allowed: IP address 10.255.255.255 falls within blocked range 10.0.0.0/8',
    ACCEPTED,
  ],
  ['http://11.0.0.1/', ACCEPTED, SAME],
  ['http://9.255.255.255/', ACCEPTED, SAME],
  [
    'http://172.16.0.1/',
    'remote URL host is not allowed: IP address 172.16.0.1 falls within blocked range 172.16.0.0/12',
    ACCEPTED,
  ],
  [
    'http://172.31.255.255/',
    'remote URL host is not allowed: IP address 172.31.255.255 falls within blocked range 172.16.0.0/12',
    ACCEPTED,
  ],
  ['http://172.15.255.255/', ACCEPTED, SAME],
  ['http://172.32.0.1/', ACCEPTED, SAME],
  [
    'http://192.168.1.1/',
    'remote URL host is not allowed: IP address 192.168.1.1 falls within blocked range 192.168.0.0/16',
    ACCEPTED,
  ],
  ['http://192.169.0.1/', ACCEPTED, SAME],
  [
    'http://127.0.0.1/',
    'remote URL host is not allowed: IP address 127.0.0.1 falls within blocked range 127.0.0.0/8',
    SAME,
  ],
  [
    'http://127.255.255.254/',
    'remote URL host is not allowed: IP address 127.255.255.254 falls within blocked range 127.0.0.0/8',
    SAME,
  ],
  [
    'http://0.0.0.0:8080/',
    'remote URL host is not allowed: IP address 0.0.0.0 falls within blocked range 0.0.0.0/8',
    SAME,
  ],
  [
    'http://0.1.2.3/',
    'remote URL host is not allowed: IP address 0.1.2.3 falls within blocked range 0.0.0.0/8',
    SAME,
  ],
  [
    'http://169.254.169.254/latest/meta-data/',
    'remote URL host is not allowed: IP address 169.254.169.254 falls within blocked range 169.254.0.0/16',
    SAME,
  ],
  ['http://169.253.255.255/', ACCEPTED, SAME],
  ['https://8.8.8.8/', ACCEPTED, SAME],
  ['http://2130706433/', ACCEPTED, SAME],
  ['http://0x7f000001/', ACCEPTED, SAME],
  ['http://0x7f.0.0.1/', ACCEPTED, SAME],
  ['http://0177.0.0.1/', ACCEPTED, SAME],
  ['http://127.000.000.001/', ACCEPTED, SAME],
  ['http://010.0.0.1/', ACCEPTED, SAME],
  ['http://127.1/', ACCEPTED, SAME],
  ['http://1.2.3.4.5/', ACCEPTED, SAME],
  ['http://256.1.1.1/', ACCEPTED, SAME],
  ['http://127.0.0.1./', ACCEPTED, SAME],
  [
    'http://[127.0.0.1]/',
    'remote URL is invalid: parse "http://[127.0.0.1]/": invalid IP-literal',
    SAME,
  ],
  // IPv6: an IPv4-mapped address is judged as IPv4 (To4), an IPv4-compatible one is not
  [
    'http://[::1]/',
    'remote URL host is not allowed: IP address ::1 falls within blocked range ::1/128',
    SAME,
  ],
  [
    'https://[::1]:443/mcp',
    'remote URL host is not allowed: IP address ::1 falls within blocked range ::1/128',
    SAME,
  ],
  [
    'http://[::]/',
    'remote URL host is not allowed: IP address :: falls within blocked range ::/128',
    SAME,
  ],
  [
    'http://[0:0:0:0:0:0:0:1]/',
    'remote URL host is not allowed: IP address 0:0:0:0:0:0:0:1 falls within blocked range ::1/128',
    SAME,
  ],
  [
    'http://[::ffff:127.0.0.1]/',
    'remote URL host is not allowed: IP address ::ffff:127.0.0.1 falls within blocked range 127.0.0.0/8',
    SAME,
  ],
  [
    'http://[::ffff:10.0.0.1]/',
    'remote URL host is not allowed: IP address ::ffff:10.0.0.1 falls within blocked range 10.0.0.0/8',
    ACCEPTED,
  ],
  [
    'http://[::FFFF:A00:1]/',
    'remote URL host is not allowed: IP address ::FFFF:A00:1 falls within blocked range 10.0.0.0/8',
    ACCEPTED,
  ],
  [
    'http://[::ffff:169.254.169.254]/',
    'remote URL host is not allowed: IP address ::ffff:169.254.169.254 falls within blocked range 169.254.0.0/16',
    SAME,
  ],
  [
    'http://[::ffff:0.0.0.0]/',
    'remote URL host is not allowed: IP address ::ffff:0.0.0.0 falls within blocked range 0.0.0.0/8',
    SAME,
  ],
  ['http://[::10.0.0.1]/', ACCEPTED, SAME],
  ['http://[::127.0.0.1]/', ACCEPTED, SAME],
  [
    'http://[fe80::1]/',
    'remote URL host is not allowed: IP address fe80::1 falls within blocked range fe80::/10',
    SAME,
  ],
  [
    'http://[FE80::1]/',
    'remote URL host is not allowed: IP address FE80::1 falls within blocked range fe80::/10',
    SAME,
  ],
  [
    'http://[febf:ffff::1]/',
    'remote URL host is not allowed: IP address febf:ffff::1 falls within blocked range fe80::/10',
    SAME,
  ],
  ['http://[fec0::1]/', ACCEPTED, SAME],
  [
    'http://[fc00::1]/',
    'remote URL host is not allowed: IP address fc00::1 falls within blocked range fc00::/7',
    ACCEPTED,
  ],
  [
    'http://[fd12:3456::1]:8443/',
    'remote URL host is not allowed: IP address fd12:3456::1 falls within blocked range fc00::/7',
    ACCEPTED,
  ],
  ['http://[fbff::1]/', ACCEPTED, SAME],
  ['http://[2001:db8::1]/', ACCEPTED, SAME],
  [
    'http://[1::2::3]/',
    'remote URL is invalid: parse "http://[1::2::3]/": invalid host: ParseAddr("1::2::3"): multiple :: in address (at ":3")',
    SAME,
  ],
  [
    'http://[::1.2.3]/',
    'remote URL is invalid: parse "http://[::1.2.3]/": invalid host: ParseAddr("::1.2.3"): IPv4 address too short',
    SAME,
  ],
  // An address with a zone is no IP to net.ParseIP, and no blocked name either
  ['http://[fe80::1%25en0]:8080/', ACCEPTED, SAME],
  ['http://[fe80::1%25eth0]/', ACCEPTED, SAME],
  ['http://[::1%25lo]/', ACCEPTED, SAME],
  ['http://[fc00::1%25x]/', ACCEPTED, SAME],
  [
    'http://[fe80::1%eth0]/',
    'remote URL is invalid: parse "http://[fe80::1%eth0]/": invalid URL escape "%et"',
    SAME,
  ],
  [
    'http://[fe80::1%25]/',
    'remote URL is invalid: parse "http://[fe80::1%25]/": invalid host: ParseAddr("fe80::1%"): zone must be a non-empty string',
    SAME,
  ],
  // Hostnames: exact or a subdomain, any case; a trailing dot escapes the match
  [
    'http://localhost/',
    'remote URL host is not allowed: hostname "localhost" matches blocked internal hostname "localhost"',
    SAME,
  ],
  [
    'http://LOCALHOST:8080/',
    'remote URL host is not allowed: hostname "LOCALHOST" matches blocked internal hostname "localhost"',
    SAME,
  ],
  ['http://localhost./', ACCEPTED, SAME],
  [
    'http://x.localhost/',
    'remote URL host is not allowed: hostname "x.localhost" matches blocked internal hostname "localhost"',
    SAME,
  ],
  ['http://xlocalhost/', ACCEPTED, SAME],
  ['http://localhost.example.com/', ACCEPTED, SAME],
  [
    'http://kubernetes.default/',
    'remote URL host is not allowed: hostname "kubernetes.default" matches blocked internal hostname "kubernetes.default"',
    SAME,
  ],
  [
    'http://KUBERNETES.DEFAULT.svc/',
    'remote URL host is not allowed: hostname "KUBERNETES.DEFAULT.svc" matches blocked internal hostname "kubernetes.default.svc"',
    SAME,
  ],
  [
    'http://api.kubernetes.default.svc/',
    'remote URL host is not allowed: hostname "api.kubernetes.default.svc" matches blocked internal hostname "kubernetes.default.svc"',
    SAME,
  ],
  [
    'http://kubernetes.default.svc.cluster.local/',
    'remote URL host is not allowed: hostname "kubernetes.default.svc.cluster.local" matches blocked internal hostname "kubernetes.default.svc.cluster.local"',
    SAME,
  ],
  [
    'http://x.cluster.local/',
    'remote URL host is not allowed: hostname "x.cluster.local" matches blocked internal hostname "cluster.local"',
    ACCEPTED,
  ],
  [
    'http://mcp.tools.svc.cluster.local:8080/mcp',
    'remote URL host is not allowed: hostname "mcp.tools.svc.cluster.local" matches blocked internal hostname "cluster.local"',
    ACCEPTED,
  ],
  [
    'http://cluster.local/',
    'remote URL host is not allowed: hostname "cluster.local" matches blocked internal hostname "cluster.local"',
    ACCEPTED,
  ],
  ['http://xcluster.local/', ACCEPTED, SAME],
  ['http://x.cluster.local./', ACCEPTED, SAME],
  ['http://mcp.tools.svc/', ACCEPTED, SAME],
  [
    'http://metadata.google.internal/',
    'remote URL host is not allowed: hostname "metadata.google.internal" matches blocked internal hostname "metadata.google.internal"',
    SAME,
  ],
  [
    'http://Metadata.Google.Internal/computeMetadata/v1/',
    'remote URL host is not allowed: hostname "Metadata.Google.Internal" matches blocked internal hostname "metadata.google.internal"',
    SAME,
  ],
  ['https://example.com/', ACCEPTED, SAME],
  // Non-ASCII and escapes in the host: strings.ToLower maps K (U+212A) to k and \u0130 to i
  [
    'http://%E2%84%AAubernetes.default/',
    'remote URL host is not allowed: hostname "\u212Aubernetes.default" matches blocked internal hostname "kubernetes.default"',
    SAME,
  ],
  [
    'http://\u212Aubernetes.default/',
    'remote URL host is not allowed: hostname "\u212Aubernetes.default" matches blocked internal hostname "kubernetes.default"',
    SAME,
  ],
  [
    'http://metadata.google.%C4%B0nternal/',
    'remote URL host is not allowed: hostname "metadata.google.\u0130nternal" matches blocked internal hostname "metadata.google.internal"',
    SAME,
  ],
  [
    'http://metadata.google.\u0130nternal/',
    'remote URL host is not allowed: hostname "metadata.google.\u0130nternal" matches blocked internal hostname "metadata.google.internal"',
    SAME,
  ],
  [
    'http://\ud800.localhost/',
    'remote URL host is not allowed: hostname "\uFFFD.localhost" matches blocked internal hostname "localhost"',
    SAME,
  ],
  [
    'http://x%ff.localhost/',
    'remote URL host is not allowed: hostname "x\\xff.localhost" matches blocked internal hostname "localhost"',
    SAME,
  ],
  [
    'http://caf\u00E9.cluster.local/',
    'remote URL host is not allowed: hostname "caf\u00E9.cluster.local" matches blocked internal hostname "cluster.local"',
    ACCEPTED,
  ],
  [
    'http://%41.localhost/',
    'remote URL is invalid: parse "http://%41.localhost/": invalid URL escape "%41"',
    SAME,
  ],
  ['http://x%zz/', 'remote URL is invalid: parse "http://x%zz/": invalid URL escape "%zz"', SAME],
  ['http://%25/', ACCEPTED, SAME],
  // Userinfo: only what follows the last @ is the host
  [
    'http://user:pass@10.0.0.1/',
    'remote URL host is not allowed: IP address 10.0.0.1 falls within blocked range 10.0.0.0/8',
    ACCEPTED,
  ],
  ['http://localhost@example.com/', ACCEPTED, SAME],
  [
    'http://example.com@localhost/',
    'remote URL host is not allowed: hostname "localhost" matches blocked internal hostname "localhost"',
    SAME,
  ],
  [
    'http://a@b@localhost/',
    'remote URL host is not allowed: hostname "localhost" matches blocked internal hostname "localhost"',
    SAME,
  ],
  [
    'http://u%zz@example.com/',
    'remote URL is invalid: parse "http://u%zz@example.com/": invalid URL escape "%zz"',
    SAME,
  ],
  [
    'http://a b@example.com/',
    'remote URL is invalid: parse "http://a b@example.com/": net/url: invalid userinfo',
    SAME,
  ],
  // Ports: empty, bad, two
  [
    'http://10.0.0.1:/',
    'remote URL host is not allowed: IP address 10.0.0.1 falls within blocked range 10.0.0.0/8',
    ACCEPTED,
  ],
  [
    'http://localhost:80/',
    'remote URL host is not allowed: hostname "localhost" matches blocked internal hostname "localhost"',
    SAME,
  ],
  [
    'http://[::1]:/',
    'remote URL host is not allowed: IP address ::1 falls within blocked range ::1/128',
    SAME,
  ],
  [
    'http://example.com:abc/',
    'remote URL is invalid: parse "http://example.com:abc/": invalid port ":abc" after host',
    SAME,
  ],
  [
    'http://example.com:80:90/',
    'remote URL is invalid: parse "http://example.com:80:90/": invalid port ":80:90" after host',
    SAME,
  ],
  [
    'http://[::1]:80:90/',
    'remote URL is invalid: parse "http://[::1]:80:90/": invalid port ":80:90" after host',
    SAME,
  ],
  ['http://example.com:99999/', ACCEPTED, SAME],
  // Empty, hostless, relative, other schemes
  ['', 'remote URL must not be empty', SAME],
  ['http://', 'remote URL must have a valid host', SAME],
  ['http:///10.0.0.1', 'remote URL must have a valid host', SAME],
  ['http://:8080/', ACCEPTED, SAME],
  ['http:10.0.0.1', 'remote URL must have a valid host', SAME],
  ['//10.0.0.1/', 'remote URL must use http or https scheme, got ""', SAME],
  ['10.0.0.1', 'remote URL must use http or https scheme, got ""', SAME],
  ['ftp://example.com/', 'remote URL must use http or https scheme, got "ftp"', SAME],
  ['HTTPS://EXAMPLE.COM/', ACCEPTED, SAME],
  [
    'Http://10.0.0.1/',
    'remote URL host is not allowed: IP address 10.0.0.1 falls within blocked range 10.0.0.0/8',
    ACCEPTED,
  ],
  ['mailto:a@localhost', 'remote URL must use http or https scheme, got "mailto"', SAME],
  ['://10.0.0.1/', 'remote URL is invalid: parse "://10.0.0.1/": missing protocol scheme', SAME],
  [
    '1http://x/',
    'remote URL is invalid: parse "1http://x/": first path segment in URL cannot contain colon',
    SAME,
  ],
  // Spaces and control characters; url.Error names the URL without its fragment unless the fragment is at fault
  [
    'http://exa mple.com/',
    'remote URL is invalid: parse "http://exa mple.com/": invalid character " " in host name',
    SAME,
  ],
  ['http://example.com/a b', ACCEPTED, SAME],
  [
    ' http://example.com/',
    'remote URL is invalid: parse " http://example.com/": first path segment in URL cannot contain colon',
    SAME,
  ],
  [
    'http://example.com\u0000/',
    'remote URL is invalid: parse "http://example.com\\x00/": net/url: invalid control character in URL',
    SAME,
  ],
  [
    'http://example.com/\u007F',
    'remote URL is invalid: parse "http://example.com/\\x7f": net/url: invalid control character in URL',
    SAME,
  ],
  [
    'http://10.0.0.1/#%zz',
    'remote URL is invalid: parse "http://10.0.0.1/#%zz": invalid URL escape "%zz"',
    SAME,
  ],
  [
    'http://x%zz/#%zz',
    'remote URL is invalid: parse "http://x%zz/": invalid URL escape "%zz"',
    SAME,
  ],
  ['http://example.com/?q=%zz', ACCEPTED, SAME],
  ['http://example.com/#@10.0.0.1', ACCEPTED, SAME],
  ['http://example.com/?@localhost', ACCEPTED, SAME],
]

t.test("ValidateRemoteURL's answers, both ways of allowPrivateEndpoint", async (t) => {
  for (const [input, without, withOption] of GO_ANSWERS) {
    const name = JSON.stringify(input)
    t.equal(remoteUrlRefusal(input, { allowPrivateEndpoint: false }), without, name)
    const expected = withOption === SAME ? without : withOption
    t.equal(remoteUrlRefusal(input, { allowPrivateEndpoint: true }), expected, `${name} allowed`)
  }
})

t.test(
  'the cause is the end of the message, without the wrapping that names the field',
  async (t) => {
    const options = { allowPrivateEndpoint: false }
    t.same(refuseRemoteUrl('http://10.0.0.1/', options), {
      message:
        'remote URL host is not allowed: IP address 10.0.0.1 falls within blocked range 10.0.0.0/8',
      cause: 'IP address 10.0.0.1 falls within blocked range 10.0.0.0/8',
    })
    t.same(refuseRemoteUrl('http://x:y/', options), {
      message: 'remote URL is invalid: parse "http://x:y/": invalid port ":y" after host',
      cause: 'invalid port ":y" after host',
    })
    t.same(refuseRemoteUrl('ftp://x/', options), {
      message: 'remote URL must use http or https scheme, got "ftp"',
      cause: 'remote URL must use http or https scheme, got "ftp"',
    })
    t.equal(refuseRemoteUrl('https://example.com/', options), undefined)
  },
)
