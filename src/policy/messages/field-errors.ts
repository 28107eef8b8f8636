/**
 * Field-addressed violations as Kubernetes reports them
 * (k8s.io/apimachinery/pkg/util/validation/field): a type, a dotted field path, the offending
 * value and a detail. They are plain values; render.ts turns them into the words users read.
 */

import { goQuote } from '../go/quote.ts'

export type ViolationType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'

export interface FieldViolation {
  readonly type: ViolationType
  /** Dotted path with indices: `spec.validating[1].url`; empty for the whole object. */
  readonly field: string
  readonly value?: unknown
  readonly detail: string
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
  /** A list or map with more than `max` members: `Too many: 4: must have at most 3 items`. */
  tooMany: (field: string, actual: number, max: number): FieldViolation => ({
    type: 'FieldValueTooMany',
    field,
    value: actual,
    detail: `must have at most ${max} ${max === 1 ? 'item' : 'items'}`,
  }),
  /** A value of the wrong type or format; rendered `Invalid value`, as apimachinery does. */
  typeInvalid: (field: string, value: unknown, detail: string): FieldViolation => ({
    type: 'FieldValueTypeInvalid',
    field,
    value,
    detail,
  }),
}
