/** Builders for admission responses: allowed, patched, denied and errored verdicts. */

import { formatViolation, formatViolations } from '../policy/field-errors.ts'
import type { FieldViolation } from '../policy/field-errors.ts'
import type { Operation as PatchOperation } from 'fast-json-patch'
import type {
  AdmissionApiVersion,
  AdmissionResponse,
  AdmissionReviewResponse,
  StatusCause,
} from './review.ts'

/** Longest warning we send; the API server and kubectl expect short ones. */
export const MAX_WARNING_LENGTH = 120

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

/** Denies with every violation in the message and in `details.causes`. */
export function denied(
  uid: string,
  violations: readonly FieldViolation[],
  warnings: readonly string[] = [],
): AdmissionResponse {
  const causes: StatusCause[] = violations.map((v) => ({
    reason: v.type,
    message: formatViolation(v),
    field: v.field,
  }))
  return withWarnings(
    {
      uid,
      allowed: false,
      status: {
        status: 'Failure',
        message: formatViolations(violations),
        reason: 'Invalid',
        code: 422,
        details: { causes },
      },
    },
    warnings,
  )
}

/** Denies because the request could not be handled (bad input: 400, our fault: 500). */
export function errored(uid: string, code: number, message: string): AdmissionResponse {
  return {
    uid,
    allowed: false,
    status: {
      status: 'Failure',
      message,
      reason: code >= 500 ? 'InternalError' : 'BadRequest',
      code,
    },
  }
}

/** Wraps a response in a review of the version the request came in. */
export function toReview(
  apiVersion: AdmissionApiVersion,
  response: AdmissionResponse,
): AdmissionReviewResponse {
  return { apiVersion, kind: 'AdmissionReview', response }
}

/** Shortens each warning to MAX_WARNING_LENGTH characters and drops duplicates. */
export function shortWarnings(warnings: readonly string[]): string[] {
  const short = warnings.map((w) =>
    w.length <= MAX_WARNING_LENGTH ? w : `${w.slice(0, MAX_WARNING_LENGTH - 1)}…`,
  )
  return [...new Set(short)]
}

function withWarnings(response: AdmissionResponse, warnings: readonly string[]): AdmissionResponse {
  return warnings.length === 0 ? response : { ...response, warnings: shortWarnings(warnings) }
}
