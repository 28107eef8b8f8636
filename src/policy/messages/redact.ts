/**
 * Redaction of secret-shaped parts of text before it leaves the process (render.ts is the only
 * caller that writes output): denial messages are shown to whoever applied the object, logged at
 * info level and copied into status conditions, so `http://admin:hunter2@host` must not reach
 * them as written. It is deliberately conservative: what only looks like a secret goes too.
 *
 * * User-info: everything between an authority's start and its last `@` becomes REDACTED, not
 *   only the password as Go's url.URL.Redacted() does (`admin:xxxxx`): a bare token is often the
 *   user name (`https://<token>@host`). An authority starts after `//` or `\\` anywhere
 *   (scheme-less `//user:pw@h`) and after `:` and one or more slashes (`https:/u:p@h`,
 *   `https:///u:p@h`); it runs to the next `/`, `?` or `#` — across spaces, since a URL that does
 *   not parse (`https://us er:pw@h`) is still someone's password. Without slashes, `a:b@host`
 *   (some clients' `user:password@host`) is taken as user-info too; image digests are not.
 * * Fragments of anything URL-ish (`https://h/cb#access_token=…`): the whole fragment.
 * * Values of `name=value` parameters whose name ends in a secret-like word (`token`,
 *   `access_token`, `client_secret`, `api-key`, `X-Amz-Signature`…), after `?`, `&`, `;` or at
 *   the start of a word.
 * * Percent-encoded segments (between URL delimiters, `=` and word ends) that decode, at any
 *   depth, to any of the above: whole (docs/wire.md).
 *
 * Two readings of the input: a *value* (one user string, as written) where only URL syntax ends a
 * part, and *text* (a message or log line that may quote values, Go `%q` or JSON style) where an
 * unescaped `"` and a line break end every part too, so the quotes around a redacted value stay.
 * Text redaction leaves its own output, and a quoted redacted value, unchanged. All passes run in
 * linear time, as values can be megabytes long.
 */

export const REDACTED = 'REDACTED'

/** How the input is read: one user value, or text that may quote values. */
type Reading = 'value' | 'text'

/** `value` (one user string) with its secret-shaped parts replaced by REDACTED. */
export function redactValue(value: string): string {
  return redact(value, 'value')
}

/** `text` (a message or log line that may quote values) with secret-shaped parts redacted. */
export function redactText(text: string): string {
  return redact(text, 'text')
}

/** True when `value` holds user-info that redactValue would hide. */
export function hasUserInfo(value: string): boolean {
  return value.includes('@') && redactUserInfo(value, 'value') !== value
}

function redact(text: string, reading: Reading): string {
  const out = redactPlain(text, reading)
  return PERCENT_ESCAPE.test(out) ? redactEncodedSegments(out, reading) : out
}

/** The passes on text as written, its percent-escapes taken as they stand. */
function redactPlain(text: string, reading: Reading): string {
  let out = text
  if (out.includes('@')) out = redactBareUserInfo(redactUserInfo(out, reading), reading)
  if (out.includes('#')) out = redactFragments(out, reading)
  if (out.includes('=')) out = redactSecretParameters(out, reading)
  return out
}

const WHITESPACE = /\s/

function isWhitespace(c: string | undefined): boolean {
  return (
    c !== undefined && (c === ' ' || (c <= '\r' && c >= '\t') || (c > '~' && WHITESPACE.test(c)))
  )
}

function isSlash(c: string | undefined): boolean {
  return c === '/' || c === '\\'
}

/** Whether the `"` at `i` closes a quoted string (is not itself escaped by a backslash). */
function isUnescapedQuote(text: string, i: number): boolean {
  if (text[i] !== '"') return false
  let backslashes = 0
  while (i - backslashes - 1 >= 0 && text[i - backslashes - 1] === '\\') backslashes++
  return backslashes % 2 === 0
}

/** Where a quoted value or a line ends in text: every part of a URL ends there too. */
function isTextBoundary(text: string, i: number, reading: Reading): boolean {
  if (reading === 'value') return false
  const c = text[i]
  return c === '\n' || c === '\r' || isUnescapedQuote(text, i)
}

/** Where a word ends: whitespace, and in text a closing quote. */
function isWordEnd(text: string, i: number, reading: Reading): boolean {
  return isWhitespace(text[i]) || isTextBoundary(text, i, reading)
}

/**
 * Replaces the user-info of every authority (see the file comment). When a password holds `/`,
 * `?` or `#` the authority ends inside it, leaving `user:pa` where a `host:port` would be; then
 * everything up to the last `@` of the word is taken as user-info.
 */
function redactUserInfo(text: string, reading: Reading): string {
  const out: string[] = []
  let copied = 0
  let word = { end: -1, lastAt: -1 }
  let i = 0
  while (i < text.length) {
    if (!isSlash(text[i])) {
      i++
      continue
    }
    let run = i
    while (isSlash(text[run])) run++
    const authorityStart = run
    const isAuthority = run - i >= 2 || text[i - 1] === ':'
    i = run
    if (!isAuthority) continue
    let end = authorityStart
    let lastAt = -1
    for (; end < text.length; end++) {
      const c = text[end]
      if (c === '/' || c === '?' || c === '#' || isTextBoundary(text, end, reading)) break
      if (c === '@') lastAt = end
    }
    if (lastAt < 0 && looksLikeCutUserInfo(text.slice(authorityStart, end))) {
      if (end > word.end) word = wordAround(text, end, reading)
      if (word.lastAt > end) lastAt = word.lastAt
    }
    if (lastAt >= 0 && authorityStart >= copied) {
      out.push(text.slice(copied, authorityStart), REDACTED)
      copied = lastAt
    }
    i = Math.max(end, lastAt + 1)
  }
  return copied === 0 ? text : out.join('') + text.slice(copied)
}

/** `user:pa`, not `host`, `host:8443` or `[::1]:8443`. */
function looksLikeCutUserInfo(authority: string): boolean {
  const colon = authority.indexOf(':')
  return colon >= 0 && !authority.startsWith('[') && !/^:[0-9]*$/.test(authority.slice(colon))
}

/** Where the word holding `from` ends, and its last `@`. */
function wordAround(text: string, from: number, reading: Reading): { end: number; lastAt: number } {
  let end = from
  let lastAt = -1
  for (; end < text.length && !isWordEnd(text, end, reading); end++) {
    if (text[end] === '@') lastAt = end
  }
  return { end, lastAt }
}

/** Characters that end the look-back from an `@` for `user:password@host` without slashes. */
const BARE_STOP: Record<Reading, RegExp> = {
  // In a value a quote is just another character of the user-info.
  value: /[\s/\\?#&=;,@<>()[\]{}]/,
  text: /[\s/\\?#&=;,@<>()[\]{}"']/,
}

/** `sha256:…` after the `@` of an image reference is a digest, not a host. */
const DIGEST = /[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}/y

/**
 * `user:password@host` with no slashes before it (a Redis address, `https:u:p@h`): the part of
 * the word before the `@` holds a `:`, so it is read as user-info. `mailto:a@b` loses its address
 * too, which nothing here needs.
 */
function redactBareUserInfo(text: string, reading: Reading): string {
  const stop = BARE_STOP[reading]
  const out: string[] = []
  let copied = 0
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at
    let colon = false
    while (start > copied && !stop.test(text[start - 1] ?? '')) {
      start--
      if (text[start] === ':') colon = true
    }
    if (!colon) continue
    DIGEST.lastIndex = at + 1
    if (DIGEST.test(text)) continue
    out.push(text.slice(copied, start), REDACTED)
    copied = at
  }
  return copied === 0 ? text : out.join('') + text.slice(copied)
}

/** Characters that make the word before a `#` URL-ish, so the `#` starts a fragment. */
const URLISH = /[/\\:?.]/

/**
 * Replaces every fragment of a URL-ish word with REDACTED: in a value to its end (a fragment runs
 * to the end of a URL), in text to the end of the word. A `#` at the start of a word (`#26`) or
 * after a plain word (`C#`) is kept.
 */
function redactFragments(text: string, reading: Reading): string {
  const out: string[] = []
  let copied = 0
  let urlish = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? ''
    if (isWordEnd(text, i, reading)) {
      urlish = false
      continue
    }
    if (c !== '#') {
      if (URLISH.test(c)) urlish = true
      continue
    }
    if (!urlish) continue
    let end = i + 1
    if (reading === 'value') end = text.length
    else while (end < text.length && !isWordEnd(text, end, reading)) end++
    if (end > i + 1 && text.slice(i + 1, end) !== REDACTED) {
      out.push(text.slice(copied, i + 1), REDACTED)
      copied = end
    }
    i = end - 1
  }
  return copied === 0 ? text : out.join('') + text.slice(copied)
}

/** Parameter names (lower-cased, letters and digits only) ending in one of these are secret. */
const SECRET_NAME_ENDINGS = [
  'token',
  'secret',
  'password',
  'passwd',
  'pwd',
  'pass',
  'passphrase',
  'key',
  'signature',
  'sig',
  'credential',
  'credentials',
  'auth',
  'authorization',
  'bearer',
  'cookie',
  'session',
  'sessionid',
  'jwt',
]

/** Whether a parameter or field name reads as holding a secret (`access_token`, `X-Api-Key`). */
export function isSecretName(name: string): boolean {
  const normalised = name.toLowerCase().replace(/[^a-z0-9]/g, '')
  return normalised !== '' && SECRET_NAME_ENDINGS.some((ending) => normalised.endsWith(ending))
}

/**
 * Replaces the values of `name=value` parameters with secret names: after `?`, `&` or `;`, or at
 * the start of a word. A value ends at `&`, `;` or `#`; in text also at the end of the word.
 */
function redactSecretParameters(text: string, reading: Reading): string {
  const out: string[] = []
  let copied = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? ''
    const starts = c === '?' || c === '&' || c === ';'
    const wordStart = i === 0 || isWordEnd(text, i - 1, reading)
    if (!starts && !wordStart) continue
    const nameStart = starts ? i + 1 : i
    let equals = nameStart
    while (
      equals < text.length &&
      text[equals] !== '=' &&
      !isParameterEnd(text, equals, reading) &&
      !isWhitespace(text[equals])
    ) {
      equals++
    }
    if (text[equals] !== '=') {
      i = Math.max(i, equals - 1)
      continue
    }
    let end = equals + 1
    while (end < text.length && !isParameterEnd(text, end, reading)) end++
    const value = text.slice(equals + 1, end)
    // A name or value may hide a secret in percent-encoding: `acc%65ss_token=…`, or a whole URL
    // carried in a parameter (`next=https%3A%2F%2Fadmin%3Ahunter2%40host`).
    const secret = isSecretName(percentDecoded(text.slice(nameStart, equals))) || hidesSecret(value)
    if (!secret) {
      i = Math.max(i, equals - 1)
      continue
    }
    if (end > equals + 1 && value !== REDACTED) {
      out.push(text.slice(copied, equals + 1), REDACTED)
      copied = end
    }
    i = end - 1
  }
  return copied === 0 ? text : out.join('') + text.slice(copied)
}

function isParameterEnd(text: string, i: number, reading: Reading): boolean {
  const c = text[i]
  if (c === '&' || c === ';' || c === '#') return true
  return reading === 'text' && isWordEnd(text, i, reading)
}

/** Each `%XX` as the byte's character (one byte at a time: enough to read ASCII names and URLs). */
function percentDecoded(text: string): string {
  if (!text.includes('%')) return text
  return text.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  )
}

const PERCENT_ESCAPE = /%[0-9a-fA-F]{2}/

/** Decodings tried before a segment still encoded is taken for a secret hidden on purpose. */
const MAX_DECODINGS = 8

/**
 * Replaces each segment (between URL delimiters, `=` and the ends of words) that hides, once
 * percent-decoded, what would be redacted: `?token%3Dabc` (an encoded `=`), a path segment
 * holding a whole encoded URL (`/r/https%3A%2F%2Fu%3Ap%40h`), a parameter value encoded more
 * times than hidesSecret decodes. A segment that is still encoded after MAX_DECODINGS goes too:
 * nothing legitimate is encoded that often. The segment goes whole, the encoded name with it.
 */
function redactEncodedSegments(text: string, reading: Reading): string {
  const out: string[] = []
  let copied = 0
  let start = 0
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && !isSegmentEnd(text, i, reading)) continue
    const segment = text.slice(start, i)
    if (PERCENT_ESCAPE.test(segment) && hidesSecretEncoded(segment)) {
      out.push(text.slice(copied, start), REDACTED)
      copied = i
    }
    start = i + 1
  }
  return copied === 0 ? text : out.join('') + text.slice(copied)
}

function isSegmentEnd(text: string, i: number, reading: Reading): boolean {
  const c = text[i]
  return (
    c === '/' ||
    c === '\\' ||
    c === '?' ||
    c === '&' ||
    c === ';' ||
    c === '#' ||
    c === '=' ||
    isWordEnd(text, i, reading)
  )
}

/** Whether `segment`, decoded until nothing changes, would be redacted. */
function hidesSecretEncoded(segment: string): boolean {
  let decoded = segment
  for (let decodings = 0; PERCENT_ESCAPE.test(decoded); decodings++) {
    if (decodings === MAX_DECODINGS) return true
    decoded = percentDecoded(decoded)
  }
  return redactPlain(decoded, 'value') !== decoded
}

/**
 * Whether a percent-encoded parameter value holds, once decoded, what would be redacted: a URL
 * with user-info, a secret parameter, a fragment. Decoded again for a value encoded twice, a few
 * times at most (each decoding shortens it, so this stays linear).
 */
function hidesSecret(value: string, depth = 0): boolean {
  if (depth === 3 || !/%[0-9a-fA-F]{2}/.test(value)) return false
  const decoded = percentDecoded(value)
  return redact(decoded, 'value') !== decoded || hidesSecret(decoded, depth + 1)
}
