/**
 * DESIGN §5.1: one entry of an MCPWebhookConfig's `validating[]` or `mutating[]` list, apart from
 * its name (names are checked across the whole config, in webhook-config.ts).
 */

import { parseDuration } from './duration.ts'
import { violation } from './field-errors.ts'
import type { FieldViolation } from './field-errors.ts'
import { checkSecretKeyRef } from './k8s-names.ts'
import { isRecord } from './kube.ts'
import type { JsonObject } from './kube.ts'
import { checkRequiredString, isSet, wrongType } from './value-checks.ts'
import { shortWarning } from './warnings.ts'

export const FAILURE_POLICIES = ['fail', 'ignore'] as const
export type FailurePolicy = (typeof FAILURE_POLICIES)[number]

const TIMEOUT_MIN_MS = 1_000
const TIMEOUT_MAX_MS = 30_000

export const URL_MESSAGES = {
  notAbsolute: 'must be an absolute URL with a scheme and host',
  spaces: 'must not contain spaces or control characters',
  scheme: 'scheme must be http or https',
  userInfo: 'must not contain user information',
  fragment: 'must not contain a fragment',
  https: 'must use https unless tlsConfig.insecureSkipVerify is true',
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
  const problems = urlProblems(value, insecure)
  found.violations.push(...problems.map((detail) => violation.invalid(field, value, detail)))
  if (problems.length > 0 || !insecure) return
  found.warnings.push(
    shortWarning(
      value.toLowerCase().startsWith('http:')
        ? `${field}: plain http is unencrypted; allowed only because insecureSkipVerify is true`
        : `${webhookField}.tlsConfig.insecureSkipVerify: TLS certificate verification is disabled`,
    ),
  )
}

/** Every problem with a webhook URL, as violation details. */
function urlProblems(url: string, insecure: boolean): string[] {
  // WHATWG parsing silently drops whitespace and accepts `http:host`; Go's url.Parse, which the
  // proxy uses, does neither, so require a clean string and the literal `scheme://` first.
  if (/[\s\p{Cc}]/u.test(url)) return [URL_MESSAGES.spaces]
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase()
  if (scheme === undefined) return [URL_MESSAGES.notAbsolute]
  // The host is read from the raw text too: WHATWG turns `https:///path` into `https://path/`.
  const authority = url.slice(scheme.length + 3).split(/[/?#\\]/, 1)[0] ?? ''
  const host = authority.slice(authority.lastIndexOf('@') + 1)
  const parsed = URL.parse(url)
  if (parsed === null || parsed.hostname === '' || host === '' || host.startsWith(':')) {
    return [URL_MESSAGES.notAbsolute]
  }
  const problems: string[] = []
  if (scheme !== 'http' && scheme !== 'https') problems.push(URL_MESSAGES.scheme)
  if (authority.includes('@')) problems.push(URL_MESSAGES.userInfo)
  if (url.includes('#')) problems.push(URL_MESSAGES.fragment)
  if (scheme === 'http' && !insecure) problems.push(URL_MESSAGES.https)
  return problems
}

/** A Go duration string between 1s and 30s; `0`, `"0"` or absent select the 10s default. */
export function checkTimeout(field: string, value: unknown): FieldViolation[] {
  if (!isSet(value) || value === 0) return []
  if (typeof value === 'number') {
    return [violation.invalid(field, value, 'must be a duration string such as "5s", not a number')]
  }
  if (typeof value !== 'string') return [wrongType(field, value, 'string')]
  const ms = parseDuration(value)
  if (ms === undefined) {
    return [violation.invalid(field, value, 'must be a duration such as "500ms", "5s" or "1m30s"')]
  }
  if (ms === 0 || (ms >= TIMEOUT_MIN_MS && ms <= TIMEOUT_MAX_MS)) return []
  return [violation.invalid(field, value, 'must be between 1s and 30s, or 0 for the 10s default')]
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
