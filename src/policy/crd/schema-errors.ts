/**
 * ajv's errors in the API server's words (k8s.io/kube-openapi/pkg/validation/errors, through
 * apiextensions-apiserver's ValidateCustomResource), as kube-apiserver v1.37 prints them:
 * `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer:
 * "string"`, `spec.transport: Unsupported value: "x": supported values: "stdio", …`,
 * `spec.groupClaimName: Too long: may not be more than 253 bytes`.
 */

import type { ErrorObject } from 'ajv'
import { goQuote } from '../go/quote.ts'
import { isRecord } from '../kube/object.ts'
import { violation } from '../messages/field-errors.ts'
import type { FieldViolation } from '../messages/field-errors.ts'
import { INTEGER_FORMATS } from './formats.ts'
import { isCheckedFormat, JSON_ENUM } from './schema-compile.ts'
import { jsonTypeName } from './structural.ts'

/** The field path apimachinery's messages use for an error's instance (`spec.env[1].name`). */
function fieldPathOf(root: unknown, instancePath: string): string {
  let path = ''
  let current: unknown = root
  for (const raw of instancePath.split('/').slice(1)) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    if (Array.isArray(current)) {
      path += `[${segment}]`
      current = current[Number(segment)]
    } else {
      path += path === '' ? segment : `.${segment}`
      current = isRecord(current) ? current[segment] : undefined
    }
  }
  return path
}

const join = (path: string, name: string) => (path === '' ? name : `${path}.${name}`)

/** String checks in the order go-openapi's string validator runs them, reporting the first only. */
const STRING_CHECKS = ['maxLength', 'minLength', 'pattern']

/** One violation per ajv error, on the same field and with the same words as the API server. */
export function schemaViolations(root: unknown, errors: readonly ErrorObject[]): FieldViolation[] {
  return firstStringErrors(errors).map((error) =>
    toViolation(fieldPathOf(root, error.instancePath), error),
  )
}

/** A string that fails several of maxLength, minLength and pattern gets one error, the first. */
function firstStringErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const first = new Map<string, ErrorObject>()
  for (const error of errors) {
    const rank = STRING_CHECKS.indexOf(error.keyword)
    if (rank < 0) continue
    const earlier = first.get(error.instancePath)
    if (earlier === undefined || STRING_CHECKS.indexOf(earlier.keyword) > rank) {
      first.set(error.instancePath, error)
    }
  }
  return errors.filter((e) => !STRING_CHECKS.includes(e.keyword) || first.get(e.instancePath) === e)
}

function toViolation(path: string, error: ErrorObject): FieldViolation {
  const data: unknown = error.data
  const params = error.params as Record<string, unknown>
  const limit = Number(params.limit)
  const inBody = `${path} in body`
  switch (error.keyword) {
    case 'type':
      return typeViolation(path, data, error)
    case 'required':
      return violation.required(join(path, String(params.missingProperty)))
    case 'enum':
      return violation.notSupported(
        path,
        data,
        (params.allowedValues as unknown[]).map((v) => (typeof v === 'string' ? v : String(v))),
      )
    case JSON_ENUM:
      return violation.notSupported(
        path,
        data,
        (error.schema as unknown[]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
      )
    case 'pattern':
      return violation.invalid(path, data, `${inBody} should match '${String(params.pattern)}'`)
    case 'minLength':
      return violation.invalid(path, data, `${inBody} should be at least ${limit} chars long`)
    case 'maxLength':
      return violation.tooLong(path, limit)
    case 'minimum':
      return violation.invalid(path, data, `${inBody} should be greater than or equal to ${limit}`)
    case 'exclusiveMinimum':
      return violation.invalid(path, data, `${inBody} should be greater than ${limit}`)
    case 'maximum':
      return violation.invalid(path, data, `${inBody} should be less than or equal to ${limit}`)
    case 'exclusiveMaximum':
      return violation.invalid(path, data, `${inBody} should be less than ${limit}`)
    case 'multipleOf':
      return violation.invalid(
        path,
        data,
        `${inBody} should be a multiple of ${String(params.multipleOf)}`,
      )
    case 'minItems':
      return violation.invalid(path, countOf(data), `${inBody} should have at least ${limit} items`)
    case 'maxItems':
    case 'maxProperties':
      return violation.tooMany(path, countOf(data), limit)
    case 'minProperties':
      return violation.invalid(
        path,
        countOf(data),
        `${inBody} should have at least ${limit} properties`,
      )
    case 'format':
      return formatViolation(path, data, String(params.format))
    default:
      return violation.invalid(path, data, `${inBody} ${error.message ?? 'is invalid'}`)
  }
}

/**
 * `must be of type integer: "string"`, the value's JSON type quoted. A fraction where an int32 or
 * int64 is due is named by Go's type (`must be of type int32: "float64"`), and its format check
 * reports it a second time (formatViolation).
 */
function typeViolation(path: string, data: unknown, error: ErrorObject): FieldViolation {
  const expected = String((error.params as Record<string, unknown>).type)
    .split(',')
    .filter((t) => t !== 'null')
    .join(',')
  const format: unknown = isRecord(error.parentSchema) ? error.parentSchema.format : undefined
  if (
    typeof data === 'number' &&
    typeof format === 'string' &&
    Object.hasOwn(INTEGER_FORMATS, format)
  ) {
    return violation.typeInvalid(
      path,
      'float64',
      `${path} in body must be of type ${format}: "float64"`,
    )
  }
  if (expected === 'string' && typeof format === 'string' && isCheckedFormat(format)) {
    // A string format's check reads the value first, and names Go's type for what it got.
    const goType = goTypeName(data)
    return violation.typeInvalid(
      path,
      goType,
      `${path} in body must be of type ${format}: ${goQuote(goType)}`,
    )
  }
  const actual = jsonTypeName(data)
  return violation.typeInvalid(
    path,
    actual,
    `${path} in body must be of type ${expected}: ${goQuote(actual)}`,
  )
}

/** An integer format's failure has no field; a string format's is a type error on the field. */
function formatViolation(path: string, data: unknown, format: string): FieldViolation {
  if (Object.hasOwn(INTEGER_FORMATS, format)) {
    return violation.invalid(
      '<nil>',
      '',
      `Checked value must be of type integer with format ${format} in ${path}`,
    )
  }
  return violation.typeInvalid(
    path,
    data,
    `${path} in body must be of type ${format}: ${goQuote(String(data))}`,
  )
}

/** The Go type encoding/json decodes a JSON value into, as the API server's format check names it. */
function goTypeName(data: unknown): string {
  if (typeof data === 'number') return Number.isInteger(data) ? 'int64' : 'float64'
  if (typeof data === 'boolean') return 'bool'
  if (Array.isArray(data)) return '[]interface {}'
  if (isRecord(data)) return 'map[string]interface {}'
  return jsonTypeName(data)
}

function countOf(data: unknown): number {
  if (Array.isArray(data)) return data.length
  return isRecord(data) ? Object.keys(data).length : 0
}
