/**
 * Redaction of secret-shaped parts of user values before a message quotes them: denial messages
 * are shown to whoever applied the object, logged by this service at info level and copied into
 * status conditions, so `http://admin:hunter2@host` must not reach them as written.
 *
 * The whole user-info becomes REDACTED, not only the password as Go's url.URL.Redacted() does
 * (`admin:xxxxx`): a bare token is often the user name (`https://<token>@host`,
 * `https://oauth2:<token>@host`), and since a webhook URL may not carry user-info at all
 * (DESIGN §5.1) nobody needs to read it back. Values of query parameters whose names end in a
 * secret-like word (`token`, `access_token`, `client_secret`, `api-key`, `X-Amz-Signature`…) are
 * redacted too. Both run in linear time, as values can be megabytes long.
 */

const REDACTED = 'REDACTED'

/** `text` with URL user-info and secret-named query parameter values replaced by REDACTED. */
export function redactSecrets(text: string): string {
  return redactSecretParameters(redactUserInfo(text))
}

/** True when `text` holds something redactUserInfo would hide. */
export function hasUserInfo(text: string): boolean {
  return redactUserInfo(text) !== text
}

const WHITESPACE = /\s/

/**
 * Replaces the user-info of every `scheme://user-info@host` in `text`. The authority ends at the
 * first `/`, `?` or `#` (as in Go's url.Parse) and its user-info at its last `@`. When a password
 * holds one of those characters the authority ends inside it, leaving `user:pa` where a
 * `host:port` would be; then everything up to the last `@` of the word is taken as user-info.
 */
export function redactUserInfo(text: string): string {
  if (!text.includes('@') || !text.includes('://')) return text
  let out = ''
  let copied = 0
  let word = { end: -1, lastAt: -1 }
  for (let mark = text.indexOf('://'); mark !== -1;) {
    const start = mark + 3
    let end = start
    let lastAt = -1
    for (; end < text.length; end++) {
      const c = text[end] ?? ''
      if (c === '/' || c === '?' || c === '#' || WHITESPACE.test(c)) break
      if (c === '@') lastAt = end
    }
    if (lastAt < 0 && looksLikeCutUserInfo(text.slice(start, end))) {
      if (end > word.end) word = wordAround(text, end)
      if (word.lastAt > end) lastAt = word.lastAt
    }
    if (lastAt >= 0) {
      out += `${text.slice(copied, start)}${REDACTED}`
      copied = lastAt
    }
    // From the authority's last character on, so `a://b://c` still finds the second `://`.
    mark = text.indexOf('://', Math.max(end - 1, lastAt + 1))
  }
  return copied === 0 ? text : out + text.slice(copied)
}

/** `user:pa`, not `host`, `host:8443` or `[::1]:8443`. */
function looksLikeCutUserInfo(authority: string): boolean {
  const colon = authority.indexOf(':')
  return colon >= 0 && !authority.startsWith('[') && !/^:[0-9]*$/.test(authority.slice(colon))
}

/** Where the whitespace-delimited word holding `from` ends, and its last `@`. */
function wordAround(text: string, from: number): { end: number; lastAt: number } {
  let end = from
  let lastAt = -1
  for (; end < text.length && !WHITESPACE.test(text[end] ?? ''); end++) {
    if (text[end] === '@') lastAt = end
  }
  return { end, lastAt }
}

/** Parameter names (lower-cased, letters and digits only) ending in one of these are secret. */
const SECRET_NAME_ENDINGS = [
  'token',
  'secret',
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'key',
  'signature',
  'sig',
  'credential',
  'credentials',
  'auth',
  'authorization',
  'session',
  'sessionid',
  'jwt',
]

/** Replaces the values of `name=value` parameters (after `?`, `&` or `;`) with secret names. */
export function redactSecretParameters(text: string): string {
  if (!text.includes('=')) return text
  let out = ''
  let copied = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c !== '?' && c !== '&' && c !== ';') continue
    let equals = i + 1
    while (equals < text.length && !isParameterEnd(text[equals] ?? '') && text[equals] !== '=') {
      equals++
    }
    if (text[equals] !== '=' || !isSecretName(text.slice(i + 1, equals))) {
      i = equals - 1
      continue
    }
    let end = equals + 1
    while (end < text.length && !isParameterEnd(text[end] ?? '')) end++
    if (end > equals + 1) {
      out += `${text.slice(copied, equals + 1)}${REDACTED}`
      copied = end
    }
    i = end - 1
  }
  return copied === 0 ? text : out + text.slice(copied)
}

function isParameterEnd(c: string): boolean {
  return c === '&' || c === ';' || c === '?' || c === '#' || WHITESPACE.test(c)
}

function isSecretName(name: string): boolean {
  const normalised = name.toLowerCase().replace(/[^a-z0-9]/g, '')
  return normalised !== '' && SECRET_NAME_ENDINGS.some((ending) => normalised.endsWith(ending))
}
