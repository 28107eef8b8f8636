/**
 * Checks on single untrusted JSON values, rendered as Kubernetes renders schema errors. A value of
 * the wrong type is reported by its JSON type name (`Invalid value: "array": must be of type
 * object`), as the API server does, so a huge or deeply nested value never ends up in a message.
 */

import { violation } from '../messages/field-errors.ts'
import type { FieldViolation } from '../messages/field-errors.ts'

type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object'

/** The JSON Schema type name of a value (`integer` for whole numbers). */
function jsonType(value: unknown): JsonType {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  if (typeof value === 'boolean') return 'boolean'
  if (typeof value === 'string') return 'string'
  return 'object'
}

/** `field: Invalid value: "<type>": must be of type <expected>`. */
export function wrongType(field: string, value: unknown, expected: JsonType): FieldViolation {
  return violation.invalid(field, jsonType(value), `must be of type ${expected}`)
}

/** True unless the value is absent or JSON null (Kubernetes treats both as unset). */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null
}

/** Violations of a required non-empty string, then of `check` on it. */
export function checkRequiredString(
  field: string,
  value: unknown,
  check: (field: string, value: string) => FieldViolation[] = () => [],
): FieldViolation[] {
  if (!isSet(value) || value === '') return [violation.required(field)]
  if (typeof value !== 'string') return [wrongType(field, value, 'string')]
  return check(field, value)
}
