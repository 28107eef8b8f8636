/**
 * Checks on single untrusted JSON values, rendered as Kubernetes renders schema errors. A value of
 * the wrong type is reported by its JSON type name (`Invalid value: "array": must be of type
 * object`), as the API server does, so a huge or deeply nested value never ends up in a message.
 */

import { violation } from '../messages/field-errors.ts'
import type { FieldViolation } from '../messages/field-errors.ts'

type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object'

const INT32_MAX = 2_147_483_647

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

/** Violations of an optional int32 field bounded below by `min` and above by `max`. */
export function checkInteger(
  field: string,
  value: unknown,
  min: number,
  max: number = INT32_MAX,
): FieldViolation[] {
  if (!isSet(value)) return []
  if (typeof value !== 'number' || !Number.isInteger(value))
    return [wrongType(field, value, 'integer')]
  if (value >= min && value <= max) return []
  // apimachinery's wordings for a bounded range and for a lower bound only.
  const detail =
    max !== INT32_MAX
      ? `must be between ${min} and ${max}, inclusive`
      : value < min
        ? `must be greater than or equal to ${min}`
        : `must be less than or equal to ${max}`
  return [violation.invalid(field, value, detail)]
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
