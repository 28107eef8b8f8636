/** Builders for admission responses: allowed, patched, denied and errored. */

import type { FieldViolation } from '../policy/messages/field-errors.ts'
import {
  renderName,
  renderText,
  renderViolations,
  renderWarnings,
} from '../policy/messages/render.ts'
import type { Operation as PatchOperation } from 'fast-json-patch'
import type { AdmissionApiVersion, AdmissionResponse, AdmissionReviewResponse } from './review.ts'
import type { DeniedSubject } from './verdict.ts'

/** Allows the request unchanged. */
export function allowed(uid: string, warnings: readonly string[] = []): AdmissionResponse {
  return withWarnings({ uid, allowed: true }, warnings)
}

/** Allows the request with a JSON Patch; an empty patch is a plain allow. */
export function patched(
  uid: string,
  patch: readonly PatchOperation[],
  warnings: readonly string[] = [],
): AdmissionResponse {
  if (patch.length === 0) return allowed(uid, warnings)
  return withWarnings(
    {
      uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
    },
    warnings,
  )
}

/**
 * Denies with the violations in the message and, for field violations, in `details.causes`
 * shaped like the API server's own validation errors (422 Invalid; each cause's message without
 * its field, which kubectl prints in front). Violations of no field (a DELETE refused because of
 * other objects) deny as 403 Forbidden with the message alone. Both are rendered (messages/render.ts):
 * past 20 violations or 4 KiB the message ends `and N more errors` and only the listed violations
 * get a cause, so a huge object cannot make a huge response or log line.
 */
export function denied(
  uid: string,
  violations: readonly FieldViolation[],
  warnings: readonly string[] = [],
  subject?: DeniedSubject,
): AdmissionResponse {
  const { message, causes } = renderViolations(violations)
  if (violations.every((v) => v.field === '')) {
    const status = { status: 'Failure', message, reason: 'Forbidden', code: 403 } as const
    return withWarnings({ uid, allowed: false, status }, warnings)
  }
  const details = {
    ...(subject?.name ? { name: renderName(subject.name) } : {}),
    ...(subject?.group ? { group: subject.group } : {}),
    ...(subject ? { kind: subject.kind } : {}),
    causes: [...causes],
  }
  const status = { status: 'Failure', message, reason: 'Invalid', code: 422, details } as const
  return withWarnings({ uid, allowed: false, status }, warnings)
}

/**
 * Denies because the request could not be handled: bad input (400), a fact the API server did
 * not give in time (503, the writer retries), our fault (500). The message is bounded and
 * redacted like a denial's, as it may carry an error's text.
 */
export function errored(uid: string, code: 400 | 500 | 503, message: string): AdmissionResponse {
  const reason = { 400: 'BadRequest', 500: 'InternalError', 503: 'ServiceUnavailable' }[code]
  const status = { status: 'Failure', message: renderText(message), reason, code } as const
  return { uid, allowed: false, status }
}

/** Wraps a response in a review of the version the request came in. */
export function toReview(
  apiVersion: AdmissionApiVersion,
  response: AdmissionResponse,
): AdmissionReviewResponse {
  return { apiVersion, kind: 'AdmissionReview', response }
}

function withWarnings(response: AdmissionResponse, warnings: readonly string[]): AdmissionResponse {
  // Redacted, one line of at most 120 characters each, 4096 in all (messages/render.ts).
  return warnings.length === 0 ? response : { ...response, warnings: renderWarnings(warnings) }
}
