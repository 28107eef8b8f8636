/**
 * Field-addressed violations rendered the way Kubernetes renders them
 * (k8s.io/apimachinery/pkg/util/validation/field), so users read the same words from this webhook
 * as from the API server: `spec.validating[1].url: Invalid value: "http://x": must use https`.
 * String values are quoted as apimachinery quotes them (Go's `%q`), with secrets redacted and long
 * values cut (quoted-value.ts).
 */

import { goQuote } from './go-quote.ts'
import { MAX_QUOTED_CHARS, clipText, quoteValue } from './quoted-value.ts'

type ViolationType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'

export interface FieldViolation {
  readonly type: ViolationType
  /** Dotted path with indices: `spec.validating[1].url`; empty for the whole object. */
  readonly field: string
  readonly value?: unknown
  readonly detail: string
}

const LABELS: Record<ViolationType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
}

/** Types whose rendering includes the offending value, as in apimachinery. */
const SHOWS_VALUE = new Set<ViolationType>([
  'FieldValueInvalid',
  'FieldValueNotSupported',
  'FieldValueDuplicate',
])

/** Renders one violation as `field: Label: "value": detail`. */
export function formatViolation(violation: FieldViolation): string {
  const body = formatViolationBody(violation)
  return violation.field === '' ? body : `${violation.field}: ${body}`
}

/** The part after the field, `Label: "value": detail`, as a Status cause's message carries it. */
export function formatViolationBody(violation: FieldViolation): string {
  const parts: string[] = [LABELS[violation.type]]
  if (SHOWS_VALUE.has(violation.type) && violation.value !== undefined) {
    parts.push(renderValue(violation.value))
  }
  if (violation.detail !== '') parts.push(violation.detail)
  return parts.join(': ')
}

/** Renders a list like apimachinery's aggregate: one message, violations joined by `, `. */
export function formatViolations(violations: readonly FieldViolation[]): string {
  const messages = violations.map(formatViolation)
  return messages.length === 1 ? (messages[0] ?? '') : `[${messages.join(', ')}]`
}

function renderValue(value: unknown): string {
  // Values come from JSON: numbers and booleans render as is, strings as Go's %q, containers as
  // JSON (apimachinery's json.Marshal fallback).
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (typeof value === 'string') return quoteValue(value)
  return clipText(JSON.stringify(value), MAX_QUOTED_CHARS)
}

export const violation = {
  required: (field: string, detail = ''): FieldViolation => ({
    type: 'FieldValueRequired',
    field,
    detail,
  }),
  invalid: (field: string, value: unknown, detail: string): FieldViolation => ({
    type: 'FieldValueInvalid',
    field,
    value,
    detail,
  }),
  notSupported: (field: string, value: unknown, supported: readonly string[]): FieldViolation => ({
    type: 'FieldValueNotSupported',
    field,
    value,
    detail: `supported values: ${supported.map(goQuote).join(', ')}`,
  }),
  duplicate: (field: string, value: unknown): FieldViolation => ({
    type: 'FieldValueDuplicate',
    field,
    value,
    detail: '',
  }),
  forbidden: (field: string, detail: string): FieldViolation => ({
    type: 'FieldValueForbidden',
    field,
    detail,
  }),
  tooLong: (field: string, max: number): FieldViolation => ({
    type: 'FieldValueTooLong',
    field,
    detail: `may not be more than ${max} bytes`,
  }),
}
