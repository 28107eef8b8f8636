/**
 * docs/enforcement.md#mcpwebhookconfig: one entry of an MCPWebhookConfig's `validating[]` or
 * `mutating[]` list, apart from its name (names are checked across the whole config, in
 * webhook-config.ts).
 */

import { violation } from './messages/field-errors.ts'
import type { FieldViolation } from './messages/field-errors.ts'
import { parseGoDuration } from './go/duration.ts'
import { goHostname, parseGoUrl } from './go/url.ts'
import { checkSecretKeyRef } from './kube/names.ts'
import { isRecord } from './kube/object.ts'
import type { JsonObject } from './kube/object.ts'
import { excerpt } from './messages/render.ts'
import { hasUserInfo } from './messages/redact.ts'
import { checkRequiredString, isSet, wrongType } from './kube/value-checks.ts'

const FAILURE_POLICIES = ['fail', 'ignore'] as const

const TIMEOUT_MIN_NS = 1_000_000_000n
const TIMEOUT_MAX_NS = 30_000_000_000n

const URL_MESSAGES = {
  notAbsolute: 'must be an absolute URL with a scheme and host',
  controlCharacters: 'must not contain control characters',
  scheme: 'scheme must be http or https',
  userInfo: 'must not contain user information',
  fragment: 'must not contain a fragment',
  https: 'must use https unless tlsConfig.insecureSkipVerify is true',
} as const

/** A URL Go's net/url rejects, with Go's reason (`invalid character "\\" in host name`). */
function invalidUrlMessage(reason: string): string {
  return `must be a valid URL: ${reason}`
}

const TIMEOUT_MESSAGES = {
  notDuration: 'must be a duration such as "500ms", "5s" or "1m30s"',
  range: 'must be between 1s and 30s, or 0 for the 10s default',
  number: 'must be a duration string such as "5s", not a number',
} as const

export interface Findings {
  readonly violations: FieldViolation[]
  readonly warnings: string[]
}

/** Checks url, timeout, failurePolicy, tlsConfig and hmacSecretRef of the webhook at `field`. */
export function checkWebhookSpec(field: string, webhook: JsonObject, found: Findings): void {
  const tls = webhook.tlsConfig
  const insecure = isRecord(tls) && tls.insecureSkipVerify === true
  checkUrl(field, webhook.url, insecure, found)
  found.violations.push(...checkTimeout(`${field}.timeout`, webhook.timeout))
  found.violations.push(...checkFailurePolicy(`${field}.failurePolicy`, webhook.failurePolicy))
  found.violations.push(...checkTlsConfig(`${field}.tlsConfig`, tls))
  found.violations.push(...checkSecretKeyRef(`${field}.hmacSecretRef`, webhook.hmacSecretRef))
}

function checkUrl(webhookField: string, value: unknown, insecure: boolean, found: Findings): void {
  const field = `${webhookField}.url`
  const shape = checkRequiredString(field, value)
  if (shape.length > 0 || typeof value !== 'string') {
    found.violations.push(...shape)
    return
  }
  const { problems, scheme } = urlProblems(value, insecure)
  found.violations.push(...problems.map((detail) => violation.invalid(field, value, detail)))
  if (problems.length > 0 || !insecure) return
  found.warnings.push(
    scheme === 'http'
      ? `${field}: plain http is unencrypted; allowed only because insecureSkipVerify is true`
      : `${webhookField}.tlsConfig.insecureSkipVerify: TLS certificate verification is disabled`,
  )
}

/**
 * Every problem with a webhook URL, as violation details. What is a URL at all is decided by a
 * port of Go's url.Parse (go/url.ts), which ToolHive's proxy applies when it calls the webhook;
 * the operator's url.ParseRequestURI reads every absolute URL without `#` the same way, and a `#`
 * is denied below. Then the rules of docs/enforcement.md#mcpwebhookconfig apply.
 */
function urlProblems(url: string, insecure: boolean): { problems: string[]; scheme: string } {
  const parsed = parseGoUrl(url)
  if (!parsed.ok) return { problems: [unparsableUrlProblem(url, parsed.error)], scheme: '' }
  const { scheme, host, user } = parsed.url
  // `https:host` (opaque), `https:///path` and `https://:8443` parse, but name no host.
  if (scheme === '' || goHostname(host) === '') {
    return { problems: [URL_MESSAGES.notAbsolute], scheme }
  }
  const problems: string[] = []
  if (scheme !== 'http' && scheme !== 'https') problems.push(URL_MESSAGES.scheme)
  if (user !== undefined) problems.push(URL_MESSAGES.userInfo)
  // Even an empty fragment (`https://host/#`): the rule is about the `#`.
  if (url.includes('#')) problems.push(URL_MESSAGES.fragment)
  if (scheme === 'http' && !insecure) problems.push(URL_MESSAGES.https)
  return { problems, scheme }
}

/** The detail for a URL Go rejects, with our wording where Go's would mislead or leak. */
function unparsableUrlProblem(url: string, reason: string): string {
  // Go's reason may quote a piece of the user-info (a bad escape in a password, or a password
  // with a `/` read as a port); user-info is not allowed anyway, so say that instead.
  if (hasUserInfo(url)) return URL_MESSAGES.userInfo
  if (reason === 'net/url: invalid control character in URL') {
    return URL_MESSAGES.controlCharacters
  }
  // Without a scheme Go reads a relative reference, and only complains about a colon in it.
  if (reason === 'missing protocol scheme' || reason.startsWith('first path segment')) {
    return URL_MESSAGES.notAbsolute
  }
  // Go quotes an excerpt (`invalid port ":…" after host`), which can be as long as the value.
  return invalidUrlMessage(excerpt(reason))
}

/**
 * A Go duration string (time.ParseDuration, as ToolHive reads metav1.Duration) between 1s and
 * 30s; `0` in any form (`0`, `"0"`, `"-0s"`) or absent selects the 10s default. A negative
 * duration is a duration, just out of range, as ToolHive reports it.
 */
function checkTimeout(field: string, value: unknown): FieldViolation[] {
  if (!isSet(value) || value === 0) return []
  if (typeof value === 'number') return [violation.invalid(field, value, TIMEOUT_MESSAGES.number)]
  if (typeof value !== 'string') return [wrongType(field, value, 'string')]
  const parsed = parseGoDuration(value)
  if (!parsed.ok) return [violation.invalid(field, value, TIMEOUT_MESSAGES.notDuration)]
  const ns = parsed.nanoseconds
  if (ns === 0n || (ns >= TIMEOUT_MIN_NS && ns <= TIMEOUT_MAX_NS)) return []
  return [violation.invalid(field, value, TIMEOUT_MESSAGES.range)]
}

function checkFailurePolicy(field: string, value: unknown): FieldViolation[] {
  if (!isSet(value)) return []
  if (typeof value !== 'string') return [wrongType(field, value, 'string')]
  return (FAILURE_POLICIES as readonly string[]).includes(value)
    ? []
    : [violation.notSupported(field, value, FAILURE_POLICIES)]
}

function checkTlsConfig(field: string, tls: unknown): FieldViolation[] {
  if (!isSet(tls)) return []
  if (!isRecord(tls)) return [wrongType(field, tls, 'object')]
  // A client certificate without its key (or the reverse) cannot be used for mutual TLS.
  const paired = (name: string, partner: string): FieldViolation[] =>
    isSet(tls[partner]) && !isSet(tls[name])
      ? [violation.required(`${field}.${name}`, `required when ${partner} is set`)]
      : checkSecretKeyRef(`${field}.${name}`, tls[name])
  const violations = [
    ...checkSecretKeyRef(`${field}.caSecretRef`, tls.caSecretRef),
    ...paired('clientCertSecretRef', 'clientKeySecretRef'),
    ...paired('clientKeySecretRef', 'clientCertSecretRef'),
  ]
  const skip = tls.insecureSkipVerify
  if (isSet(skip) && typeof skip !== 'boolean') {
    violations.push(wrongType(`${field}.insecureSkipVerify`, skip, 'boolean'))
  }
  return violations
}
