/**
 * Validation ratcheting, as the API server does for CRD schemas: an UPDATE may keep a violation
 * the stored object already had, as long as it leaves the violating value alone. Objects admitted
 * before a rule existed (or before this webhook was installed) stay editable in every other field.
 */

import type { FieldViolation } from './messages/field-errors.ts'
import type { KubeObject } from './kube/object.ts'
import { jsonEqual } from './kube/object.ts'
import { parseFieldPath, valueAtSegments } from './kube/object-path.ts'
import type { ValidationInput, ValidationResult } from './result.ts'
import { formatViolation } from './messages/render.ts'

/**
 * Runs `validate` on the object; on UPDATE, turns each violation the old object also had (same
 * field, type and detail) at an unchanged value into a warning. Other operations pass through.
 */
export function ratchet(
  input: ValidationInput,
  validate: (object: KubeObject) => ValidationResult,
): ValidationResult {
  const { object, oldObject } = input
  if (object === undefined) return { violations: [], warnings: [] }
  const result = validate(object)
  if (input.operation !== 'UPDATE' || oldObject === undefined || result.violations.length === 0) {
    return result
  }
  const previous = new Set(validate(oldObject).violations.map(violationKey))
  const violations: FieldViolation[] = []
  const warnings = [...result.warnings]
  for (const found of result.violations) {
    if (previous.has(violationKey(found)) && unchanged(oldObject, object, found.field)) {
      warnings.push(keptWarning(found))
    } else {
      violations.push(found)
    }
  }
  return { violations, warnings }
}

/**
 * Field and type identify a violation, and the detail too: one value can break several rules
 * (`http://x#f` lacks https and has a fragment), and fixing one must not excuse a new one.
 */
function violationKey(found: FieldViolation): string {
  return `${found.type}\u0000${found.field}\u0000${found.detail}`
}

/**
 * Whether the value at `field` is the same in both objects. When it is absent from both (a
 * "Required value"), the parent is compared instead: in Kubernetes a required field belongs to
 * its parent's schema, so editing a sibling of a missing required field is not ratcheted. A
 * top-level field absent from both is unchanged (comparing whole objects would always differ in
 * metadata the API server maintains).
 */
function unchanged(oldObject: KubeObject, object: KubeObject, field: string): boolean {
  const segments = parseFieldPath(field)
  // An unparseable path cannot be shown to be untouched; keep the denial.
  if (segments === undefined) return false
  for (let depth = segments.length; depth > 0; depth--) {
    const path = segments.slice(0, depth)
    const before = valueAtSegments(oldObject, path)
    const after = valueAtSegments(object, path)
    if (before !== undefined || after !== undefined) return jsonEqual(before, after)
  }
  return true
}

/** A violation let through, as a warning: `spec.x: pre-existing violation kept: Required value`. */
export function keptWarning(found: FieldViolation, reason = 'pre-existing violation kept'): string {
  const detail = formatViolation({ ...found, field: '' })
  const prefix = found.field === '' ? '' : `${found.field}: `
  return `${prefix}${reason}: ${detail}`
}
