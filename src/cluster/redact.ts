/**
 * Credentials out of text that came from elsewhere (an API server's error body, an exec plugin's
 * stderr) before it reaches a message or a log. A server or a proxy in front of it may echo the
 * request, Authorization header included, in a 401 or 403; a plugin may print what it fetched.
 * The exact secrets sent are replaced, and so is anything shaped like a credential: a bearer or
 * basic Authorization value, a JWT (a service account or OIDC token), a bootstrap token.
 */

import type { OutgoingHttpHeaders } from 'node:http'
import type https from 'node:https'

export const REDACTED = '[redacted]'

/** A secret this short would take ordinary words with it; the patterns below still apply. */
const MIN_SECRET_LENGTH = 6

/** An Authorization value as sent: the scheme stays, the credential goes. */
const AUTHORIZATION_VALUE = /\b(Bearer|Basic)(\s+)[^\s"',;]+/gi

const CREDENTIAL_SHAPES: readonly RegExp[] = [
  // A JWT: base64url of `{"` (eyJ), then two more dot-separated base64url parts.
  /\beyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g,
  // A bootstrap token: `[a-z0-9]{6}.[a-z0-9]{16}`.
  /\b[a-z0-9]{6}\.[a-z0-9]{16}\b/g,
]

/** `text` with `secrets` and anything shaped like a credential replaced by `[redacted]`. */
export function redactCredentials(text: string, secrets: readonly string[] = []): string {
  let redacted = text
  // The longest first: a header value holds the token, and must go whole.
  const exact = [...new Set(secrets)]
    .filter((secret) => secret.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length)
  for (const secret of exact) redacted = redacted.split(secret).join(REDACTED)
  redacted = redacted.replace(AUTHORIZATION_VALUE, `$1$2${REDACTED}`)
  for (const shape of CREDENTIAL_SHAPES) redacted = redacted.replace(shape, REDACTED)
  return redacted
}

/**
 * The secrets a request carries: its Authorization header's credential, and basic auth given as
 * `auth` (whole, and the password).
 */
export function requestSecrets(options: https.RequestOptions): string[] {
  const secrets: string[] = []
  const headers = (options.headers ?? {}) as OutgoingHttpHeaders
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'authorization' || typeof value !== 'string') continue
    // The credential after its scheme: `Bearer [redacted]` still says what kind was refused.
    secrets.push(value.replace(/^(Bearer|Basic)\s+/i, ''))
  }
  if (typeof options.auth === 'string' && options.auth !== '') {
    secrets.push(options.auth, options.auth.slice(options.auth.indexOf(':') + 1))
  }
  return secrets.filter((secret) => secret.trim() !== '')
}
