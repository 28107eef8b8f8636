/**
 * A port of Go's url.Parse and url.ParseRequestURI (net/url, Go 1.26, GODEBUG defaults), so that
 * a webhook URL is "a URL" here exactly when it is one to ToolHive: its operator validates
 * MCPWebhookConfig URLs with url.ParseRequestURI (as the API server does for `format: uri`) and
 * its proxy calls them through http.NewRequest, which uses url.Parse. Runs on the UTF-8 bytes
 * (bytes.ts) so that excerpts in errors match Go's; errors carry Go's wording without the
 * `parse "<url>": ` prefix (a field error shows the value already), and name the URL that prefix
 * would quote.
 */

import { fromGoBytes, toGoBytes } from './bytes.ts'
import { parseGoAddr } from './netip.ts'
import { goQuoteBytes } from './quote.ts'

interface GoUrl {
  /** Lower-cased, as Go stores it; empty for a relative reference. */
  readonly scheme: string
  /** `scheme:opaque` URLs (no `//` and no `/` after the scheme). */
  readonly opaque: string
  readonly user?: { readonly username: string; readonly password?: string }
  /** `host` or `host:port`, `[ipv6]:port` (Go's URL.Host). */
  readonly host: string
  readonly path: string
  readonly rawQuery: string
  readonly fragment: string
}

export type GoUrlResult =
  | { readonly ok: true; readonly url: GoUrl }
  | {
      readonly ok: false
      readonly error: string
      /**
       * The URL Go's url.Error names in `parse "<url>": <error>`: url.Parse names the text before
       * the first `#`, or all of it when the fragment is at fault; url.ParseRequestURI all of it.
       */
      readonly input: string
    }

type Mode = 'host' | 'zone' | 'userPassword' | 'path' | 'fragment'

/** A parse failure, thrown inside this module only and turned into a result at its edge. */
class UrlError extends Error {}

/** url.Parse: an absolute URL or a relative reference, with an optional `#fragment`. */
export function parseGoUrl(text: string): GoUrlResult {
  return asText(parseGoUrlBytes(text))
}

/**
 * url.Parse with the URL's fields left as byte strings (bytes.ts), for a caller that quotes them
 * as Go does: a host may hold an escaped byte that is not UTF-8 (`x%ff.example`), which `%q`
 * shows as `\xff`.
 */
export function parseGoUrlBytes(text: string): GoUrlResult {
  // `#` is ASCII: the text splits where its bytes do.
  const hash = text.indexOf('#')
  const beforeHash = hash < 0 ? text : text.slice(0, hash)
  const parsed = attempt(beforeHash, () => parse(toGoBytes(beforeHash), false))
  const fragment = hash < 0 ? '' : text.slice(hash + 1)
  if (!parsed.ok || fragment === '') return parsed
  return attempt(text, () => ({
    ...parsed.url,
    fragment: unescape(toGoBytes(fragment), 'fragment'),
  }))
}

/** url.ParseRequestURI: an absolute URI or an absolute path; a `#` is not special. */
export function parseGoRequestUri(text: string): GoUrlResult {
  return asText(attempt(text, () => parse(toGoBytes(text), true)))
}

/** Go's URL.Hostname(): the host without port and brackets. */
export function goHostname(host: string): string {
  let name = host
  const colon = name.lastIndexOf(':')
  if (colon !== -1 && validOptionalPort(name.slice(colon))) name = name.slice(0, colon)
  return name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name
}

/** The URL `run` parses, its fields still byte strings; a failure names `input` (url.Error). */
function attempt(input: string, run: () => GoUrlBytes): GoUrlResult {
  try {
    return { ok: true, url: run() }
  } catch (error) {
    if (error instanceof UrlError) return { ok: false, error: error.message, input }
    throw error
  }
}

function asText(result: GoUrlResult): GoUrlResult {
  return result.ok ? { ok: true, url: toText(result.url) } : result
}

/** A GoUrl whose strings are still byte strings. */
type GoUrlBytes = GoUrl

function toText(url: GoUrlBytes): GoUrl {
  const user = url.user && {
    username: fromGoBytes(url.user.username),
    ...(url.user.password === undefined ? {} : { password: fromGoBytes(url.user.password) }),
  }
  return {
    scheme: url.scheme,
    opaque: fromGoBytes(url.opaque),
    ...(user ? { user } : {}),
    host: fromGoBytes(url.host),
    path: fromGoBytes(url.path),
    rawQuery: fromGoBytes(url.rawQuery),
    fragment: fromGoBytes(url.fragment),
  }
}

const EMPTY: GoUrlBytes = {
  scheme: '',
  opaque: '',
  host: '',
  path: '',
  rawQuery: '',
  fragment: '',
}

function parse(raw: string, viaRequest: boolean): GoUrlBytes {
  if (hasControlByte(raw)) throw new UrlError('net/url: invalid control character in URL')
  if (raw === '' && viaRequest) throw new UrlError('empty url')
  if (raw === '*') return { ...EMPTY, path: '*' }

  // Split off a leading "http:", "mailto:", etc.; a scheme cannot contain escapes.
  const { scheme: rawScheme, rest: afterScheme } = getScheme(raw)
  const scheme = rawScheme.toLowerCase()
  let rest = afterScheme
  let rawQuery = ''
  const question = rest.indexOf('?')
  if (question >= 0) {
    rawQuery = rest.slice(question + 1)
    rest = rest.slice(0, question)
  }

  if (!rest.startsWith('/')) {
    // A rootless path after a scheme is opaque, per RFC 3986.
    if (scheme !== '') return { ...EMPTY, scheme, opaque: rest, rawQuery }
    if (viaRequest) throw new UrlError('invalid URI for request')
    // A relative path whose first segment has a colon would read as a scheme (golang.org/issue/16822).
    const segment = rest.split('/', 1)[0] ?? ''
    if (segment.includes(':')) {
      throw new UrlError('first path segment in URL cannot contain colon')
    }
  }

  let authority: Pick<GoUrl, 'user' | 'host'> = { host: '' }
  if ((scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2)
    authority = parseAuthority(scheme, rest.slice(2, slash < 0 ? rest.length : slash))
    rest = slash < 0 ? '' : rest.slice(slash)
  }
  return { ...EMPTY, scheme, ...authority, path: unescape(rest, 'path'), rawQuery }
}

/** An ASCII control character (below space, or DEL); non-ASCII ones pass, as in Go. */
function hasControlByte(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}

/** The scheme before the first `:` when it is `[A-Za-z][A-Za-z0-9+.-]*`, else none. */
function getScheme(raw: string): { scheme: string; rest: string } {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] ?? ''
    if (/[A-Za-z]/.test(c)) continue
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) return { scheme: '', rest: raw }
      continue
    }
    if (c === ':') {
      if (i === 0) throw new UrlError('missing protocol scheme')
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) }
    }
    return { scheme: '', rest: raw }
  }
  return { scheme: '', rest: raw }
}

function parseAuthority(scheme: string, authority: string): Pick<GoUrl, 'user' | 'host'> {
  const at = authority.lastIndexOf('@')
  const host = parseHost(scheme, at < 0 ? authority : authority.slice(at + 1))
  if (at < 0) return { host }
  const userinfo = authority.slice(0, at)
  if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) {
    throw new UrlError('net/url: invalid userinfo')
  }
  const colon = userinfo.indexOf(':')
  if (colon < 0) return { host, user: { username: unescape(userinfo, 'userPassword') } }
  return {
    host,
    user: {
      username: unescape(userinfo.slice(0, colon), 'userPassword'),
      password: unescape(userinfo.slice(colon + 1), 'userPassword'),
    },
  }
}

/** host[:port], or [IP-literal][:port] (RFC 3986, RFC 6874 zones). */
function parseHost(scheme: string, host: string): string {
  const open = host.lastIndexOf('[')
  if (open > 0) throw new UrlError('invalid IP-literal')
  if (open === 0) {
    const close = host.lastIndexOf(']')
    if (close < 0) throw new UrlError("missing ']' in host")
    const colonPort = host.slice(close + 1)
    if (!validOptionalPort(colonPort)) {
      throw new UrlError(`invalid port ${goQuoteBytes(colonPort)} after host`)
    }
    const hostname = host.slice(1, close)
    // %25 starts the zone, which may escape what the address part may not.
    const zone = hostname.indexOf('%25')
    const unescaped =
      zone >= 0
        ? unescape(hostname.slice(0, zone), 'host') + unescape(hostname.slice(zone), 'zone')
        : unescape(hostname, 'host')
    const address = parseGoAddr(unescaped)
    if (!address.ok) throw new UrlError(`invalid host: ${address.error}`)
    // Only an IPv6 address may be bracketed (an IPv4-mapped one is IPv6).
    if (address.is4) throw new UrlError('invalid IP-literal')
    return `[${unescaped}]${colonPort}`
  }
  let colon = host.indexOf(':')
  if (colon !== -1) {
    // http and https get Go 1.26's strict colons (urlstrictcolons=1): `host:80:90` is an error.
    const last = host.lastIndexOf(':')
    if (last !== colon && scheme !== 'http' && scheme !== 'https') colon = last
    const colonPort = host.slice(colon)
    if (!validOptionalPort(colonPort)) {
      throw new UrlError(`invalid port ${goQuoteBytes(colonPort)} after host`)
    }
  }
  return unescape(host, 'host')
}

/** Empty, or `:` followed by decimal digits only. */
function validOptionalPort(port: string): boolean {
  return /^(?::[0-9]*)?$/.test(port)
}

const HEX = /^[0-9A-Fa-f]$/

/**
 * Checks `%XX` escapes and, in a host, the characters Go allows there; returns the decoded bytes.
 * A host may escape only non-ASCII bytes (and `%25` before a zone); a zone may escape any byte it
 * could hold unescaped, or a space.
 */
function unescape(s: string, mode: Mode): string {
  const inHost = mode === 'host' || mode === 'zone'
  let escapes = 0
  for (let i = 0; i < s.length;) {
    const c = s[i] ?? ''
    if (c === '%') {
      escapes++
      if (i + 2 >= s.length || !HEX.test(s[i + 1] ?? '') || !HEX.test(s[i + 2] ?? '')) {
        throw escapeError(s.slice(i, i + 3))
      }
      const escaped = s.slice(i, i + 3)
      const byte = Number.parseInt(s.slice(i + 1, i + 3), 16)
      if (mode === 'host' && byte < 0x80 && escaped !== '%25') throw escapeError(escaped)
      // A zone may escape only bytes it could hold unescaped (or a space: Windows zones).
      if (
        mode === 'zone' &&
        escaped !== '%25' &&
        byte !== 0x20 &&
        !ASCII_ALLOWED_IN_HOST.test(String.fromCharCode(byte))
      ) {
        throw escapeError(escaped)
      }
      i += 3
      continue
    }
    if (inHost && c.charCodeAt(0) < 0x80 && !ASCII_ALLOWED_IN_HOST.test(c)) {
      throw new UrlError(`invalid character ${goQuoteBytes(c)} in host name`)
    }
    i++
  }
  if (escapes === 0) return s
  return s.replace(/%([0-9A-Fa-f]{2})/g, (_, digits: string) =>
    String.fromCharCode(Number.parseInt(digits, 16)),
  )
}

function escapeError(excerpt: string): UrlError {
  return new UrlError(`invalid URL escape ${goQuoteBytes(excerpt)}`)
}

/**
 * ASCII allowed unescaped in a host (Go's shouldEscape in host mode): unreserved characters,
 * RFC 3986 sub-delims, `:` for the port, `[` `]` for IPv6, and `<` `>` `"` which Go tolerates.
 * Non-ASCII bytes are allowed unescaped too, but not as escapes in a zone.
 */
const ASCII_ALLOWED_IN_HOST = /^[A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"]$/
