/**
 * ToolHive's remote URL guard, ported: the operator's ValidateRemoteURL (v0.63.0), which refuses
 * an MCPRemoteProxy's or MCPServerEntry's `spec.remoteUrl` when it reconciles, after the write was
 * accepted (docs/enforcement.md, "Remote URLs"). URLs and IPs are read as Go reads them: url.Parse
 * (`go/url.ts`) and net.ParseIP (netip.ParseAddr refusing zones, `go/netip.ts`), never WHATWG's
 * `URL`, which rewrites `http://2130706433/` to 127.0.0.1 where Go sees a hostname that passes.
 *
 * No DNS is done, by Go or here: a hostname is refused only by name, an IP only as a literal.
 * Operators before the `allowPrivateEndpoint` option (v0.33.0) refuse the private ranges and
 * `cluster.local` always, as this does with the option false.
 */

import { fromGoBytes } from './go/bytes.ts'
import { parseGoAddr } from './go/netip.ts'
import { goQuote, goQuoteBytes } from './go/quote.ts'
import { goHostname, parseGoUrlBytes } from './go/url.ts'

export interface RemoteUrlOptions {
  /** The object's `spec.allowPrivateEndpoint`: private ranges and `cluster.local` pass. */
  readonly allowPrivateEndpoint: boolean
}

export interface RemoteUrlRefusal {
  /** Go's err.Error(), as the operator's condition and event show it. */
  readonly message: string
  /**
   * Its innermost cause, the end of `message` without the wrapping that names the field again
   * (`remote URL host is not allowed: `, `remote URL is invalid: parse "<url>": `).
   */
  readonly cause: string
}

/**
 * ValidateRemoteURL's error text for `rawUrl`, exactly as Go's err.Error() prints it; undefined
 * when Go accepts.
 */
export function remoteUrlRefusal(
  rawUrl: string,
  options: { readonly allowPrivateEndpoint: boolean },
): string | undefined {
  return refuseRemoteUrl(rawUrl, options)?.message
}

/** ValidateRemoteURL's refusal of `rawUrl`, with its cause; undefined when Go accepts. */
export function refuseRemoteUrl(
  rawUrl: string,
  options: RemoteUrlOptions,
): RemoteUrlRefusal | undefined {
  if (rawUrl === '') return whole('remote URL must not be empty')
  const parsed = parseGoUrlBytes(rawUrl)
  if (!parsed.ok) {
    return wrapped(`remote URL is invalid: parse ${goQuote(parsed.input)}: `, parsed.error)
  }
  const { scheme, host } = parsed.url
  if (scheme !== 'http' && scheme !== 'https') {
    return whole(`remote URL must use http or https scheme, got ${goQuote(scheme)}`)
  }
  if (host === '') return whole('remote URL must have a valid host')
  const cause = hostRefusal(goHostname(host), options)
  return cause === undefined ? undefined : wrapped('remote URL host is not allowed: ', cause)
}

function whole(message: string): RemoteUrlRefusal {
  return { message, cause: message }
}

function wrapped(wrapping: string, cause: string): RemoteUrlRefusal {
  return { message: wrapping + cause, cause }
}

/** An IP network as IPNet.Contains compares it. */
interface Network {
  readonly text: string
  /** 4 for an IPv4 network, 16 for an IPv6 one. */
  readonly width: number
  /** The leading bits of its address, as `0` and `1`. */
  readonly prefix: string
}

/** What Go refuses: loopback, link-local (cloud metadata), "this network", unspecified. */
const ALWAYS_BLOCKED_NETWORKS = networks([
  '0.0.0.0/8',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '::/128',
  '::1/128',
  'fe80::/10',
])
/** RFC 1918 and IPv6 unique-local: refused unless `allowPrivateEndpoint`. */
const PRIVATE_NETWORKS = networks(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'])

/**
 * Refused with their subdomains whatever the options; checked first, so that
 * `kubernetes.default.svc.cluster.local` is not let through by `allowPrivateEndpoint`.
 */
const ALWAYS_BLOCKED_HOSTNAMES = [
  'localhost',
  'kubernetes.default.svc.cluster.local',
  'kubernetes.default.svc',
  'kubernetes.default',
  'metadata.google.internal',
]
/** Refused with their subdomains unless `allowPrivateEndpoint` (a bare `.svc` name never is). */
const PRIVATE_HOSTNAMES = ['cluster.local']

/** validateHostNotInternal over URL.Hostname() (a byte string): why Go refuses it, if it does. */
function hostRefusal(host: string, options: RemoteUrlOptions): string | undefined {
  const ip = parseIp(host)
  if (ip !== undefined) {
    const blocked = [
      ...ALWAYS_BLOCKED_NETWORKS,
      ...(options.allowPrivateEndpoint ? [] : PRIVATE_NETWORKS),
    ]
    const network = blocked.find((candidate) => contains(candidate, ip))
    return network && `IP address ${host} falls within blocked range ${network.text}`
  }
  const lower = goToLower(host)
  const names = [
    ...ALWAYS_BLOCKED_HOSTNAMES,
    ...(options.allowPrivateEndpoint ? [] : PRIVATE_HOSTNAMES),
  ]
  const name = names.find((blocked) => lower === blocked || lower.endsWith(`.${blocked}`))
  return name && `hostname ${goQuoteBytes(host)} matches blocked internal hostname ${goQuote(name)}`
}

/**
 * net.ParseIP, then To4(): an IPv4 address or an IPv4-mapped IPv6 one (`::ffff:10.0.0.1`) as
 * its 4 bytes, any other IPv6 address as 16; undefined for what is not an IP to Go, which
 * includes an address with a zone (`fe80::1%en0`) and the decimal, hex and octal forms
 * (`2130706433`, `0x7f.1`, `0177.0.0.1`) that C's inet_aton reads: those are hostnames here.
 */
function parseIp(host: string): readonly number[] | undefined {
  const address = parseGoAddr(host)
  if (!address.ok || address.zone !== '') return undefined
  return to4(address.bytes) ?? address.bytes
}

/** IP.To4() of 16 bytes: the last 4 when the first 12 are the IPv4-mapped prefix. */
function to4(bytes: readonly number[]): readonly number[] | undefined {
  const mapped =
    bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff
  return mapped ? bytes.slice(12) : undefined
}

/**
 * IPNet.Contains for an IP already through To4(): an IPv4 address is only in an IPv4 network, an
 * IPv6 one only in an IPv6 network (none of these is IPv4-mapped), compared on the prefix bits.
 */
function contains(network: Network, ip: readonly number[]): boolean {
  return ip.length === network.width && bitsOf(ip).startsWith(network.prefix)
}

function bitsOf(bytes: readonly number[]): string {
  return bytes.map((byte) => byte.toString(2).padStart(8, '0')).join('')
}

/**
 * mustParseCIDRs of the tables' CIDRs, each address read as IPNet.Contains reads it (To4); every
 * one is canonical, so `text` is also IPNet.String().
 */
function networks(texts: readonly string[]): readonly Network[] {
  return texts.map((text) => {
    const [address, bits] = text.split('/') as [string, string]
    // Every entry is an address Go reads: its IPv4 ones as 4 bytes, its IPv6 ones as 16.
    const bytes = parseIp(address) as readonly number[]
    return { text, width: bytes.length, prefix: bitsOf(bytes).slice(0, Number(bits)) }
  })
}

/**
 * strings.ToLower: each rune through unicode.ToLower, a byte that is not UTF-8 read as U+FFFD.
 * Unicode's simple lower-case mapping is JavaScript's for one character, but for U+0130 (İ),
 * whose full mapping adds a combining dot where Go's simple one gives `i`: to Go
 * `metadata.google.İnternal` is the metadata server's name.
 */
function goToLower(bytes: string): string {
  let lower = ''
  for (const char of fromGoBytes(bytes)) lower += char === '\u0130' ? 'i' : char.toLowerCase()
  return lower
}
