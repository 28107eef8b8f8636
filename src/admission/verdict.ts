/**
 * What a handler decides about a request, before the service's enforcement settings turn it into
 * a response (enforcement.ts): the same decision is a denial, a warning or an audit record
 * depending on how the service is told to act on it.
 */

import type { DeleteProtection } from '../policy/delete-guard.ts'
import type { UnprovenStamps } from '../policy/kept-stamps.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import type { FieldViolation } from '../policy/messages/field-errors.ts'
import type { PatchOperation } from './patch.ts'
import type { AdmissionRequest } from './review.ts'

/** The object a denial is about, so kubectl can say `The MCPWebhookConfig "x" is invalid`. */
export interface DeniedSubject {
  readonly group: string
  readonly kind: string
  readonly name?: string | undefined
}

export type Verdict =
  /** The rules hold, or hold once `patch` is applied (empty for a validating rule). */
  | {
      readonly kind: 'admitted'
      readonly patch: readonly PatchOperation[]
      readonly warnings: readonly string[]
      /** A mutating rule's result: the request object with `patch` applied (the CLI stores it). */
      readonly object?: KubeObject
      /** A delete guard's: the operator's finalizer holds the object for its referrers. */
      readonly protection?: DeleteProtection
      /** The write's own stamps were kept: the live reads proving them missed their deadline. */
      readonly unproven?: UnprovenStamps
    }
  /** A rule is broken: each violation names its field (or none, for a refusal of a DELETE). */
  | {
      readonly kind: 'refused'
      readonly violations: readonly FieldViolation[]
      readonly warnings: readonly string[]
      readonly subject: DeniedSubject
      /** A delete guard's: referrers nothing holds the object for. */
      readonly protection?: DeleteProtection
    }
  /**
   * Not judged: the request is unreadable to the rule (400), a fact could not be read in time
   * (503: the writer retries), or a bug (500, with the error for the log).
   */
  | {
      readonly kind: 'failed'
      readonly code: 400 | 500 | 503
      readonly message: string
      readonly error?: unknown
    }

/** Admitted, with `patch` (empty: unchanged) and, from a mutating rule, the object it made. */
export function admitted(
  patch: readonly PatchOperation[] = [],
  warnings: readonly string[] = [],
  object?: KubeObject,
): Verdict {
  return { kind: 'admitted', patch, warnings, ...(object ? { object } : {}) }
}

/** Refused for `violations`. */
export function refused(
  violations: readonly FieldViolation[],
  warnings: readonly string[],
  subject: DeniedSubject,
): Verdict {
  return { kind: 'refused', violations, warnings, subject }
}

/** Not judged, for the reason `message` gives. */
export function failed(code: 400 | 500 | 503, message: string, error?: unknown): Verdict {
  return { kind: 'failed', code, message, ...(error === undefined ? {} : { error }) }
}

/** What the request is about, for a denial's details. */
export function subjectOf(request: AdmissionRequest): DeniedSubject {
  return { group: request.kind.group, kind: request.kind.kind, name: request.name }
}
