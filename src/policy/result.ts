/**
 * What policies return. Outcomes are values: a mutator either yields the object it changed or
 * refuses with violations; a validator yields violations. Both may add short warnings.
 */

import type { UnprovenStamps } from './kept-stamps.ts'
import type { KubeObject } from './kube/object.ts'
import type { FieldViolation } from './messages/field-errors.ts'

interface Mutated {
  readonly object: KubeObject
  readonly warnings: readonly string[]
  /** The write's own stamps were kept: the live reads that would prove them missed their deadline. */
  readonly unproven?: UnprovenStamps
}

interface Refused {
  readonly violations: readonly FieldViolation[]
  readonly warnings: readonly string[]
}

export type MutationResult = Mutated | Refused

export interface ValidationResult {
  readonly violations: readonly FieldViolation[]
  readonly warnings: readonly string[]
}

/** Narrows a mutation result to the refusal case. */
export function isRefused(result: MutationResult): result is Refused {
  return 'violations' in result
}

/** What a validator sees of a request: plain values, no wire format. */
export interface ValidationInput {
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'
  /** The object being written (absent on DELETE). */
  readonly object: KubeObject | undefined
  /** The stored object (UPDATE and DELETE). */
  readonly oldObject: KubeObject | undefined
}
