/**
 * A CRD version's OpenAPI v3 schema as a JSON Schema that ajv compiles once: OpenAPI's
 * `nullable`, boolean `exclusiveMinimum`/`exclusiveMaximum` and `x-kubernetes-int-or-string`
 * become their JSON Schema forms; the Kubernetes extensions ajv does not know are left out (list
 * types, embedded resources and CEL rules are checked by their own walks; unknown fields are
 * pruned before validation, so no schema forbids them here).
 * A schema the API server would not have taken (schema-keywords.ts) is a SchemaCompileError
 * naming the keyword's place.
 */

import { Ajv } from 'ajv'
import type { ValidateFunction } from 'ajv'
import { isRecord, jsonEqual, setOwn } from '../kube/object.ts'
import type { JsonObject } from '../kube/object.ts'
import { INTEGER_FORMATS, STRING_FORMATS } from './formats.ts'
import { checkSchemaKeywords, compilePattern, SchemaCompileError } from './schema-keywords.ts'
import { EXT, typeOf } from './structural.ts'
import type { Schema } from './structural.ts'

/** Keywords copied as they are: their meaning is the same in OpenAPI v3 and JSON Schema. */
const SAME_KEYWORDS = [
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
] as const

/**
 * Patterns are Go's RE2 syntax (`[[:space:]]`, no lookarounds), read with the RE2 engine
 * @bufbuild/cel brings: JavaScript's RegExp refuses some and reads others differently.
 */
const re2 = Object.assign(
  (pattern: string) => {
    const compiled = compilePattern(pattern)
    // ajv shares compiled patterns by their toString(): it must name the pattern.
    return { test: (text: string) => compiled.test(text), toString: () => `/${pattern}/` }
  },
  { code: 'RE2JS.compile' },
)

/**
 * `enum` with a list or an object among its values. ajv compares those with fast-deep-equal,
 * which calls a value's own `toString` or `valueOf`, and `{"toString": 1}` is valid JSON: such
 * enums are compared by this keyword instead, with plain JSON equality.
 */
export const JSON_ENUM = 'x-mcp-admission-json-enum'

let shared: Ajv | undefined

/** One ajv for the process: it holds only compiled schemas and the formats. */
function ajv(): Ajv {
  if (shared !== undefined) return shared
  shared = new Ajv({
    allErrors: true,
    verbose: true,
    strict: false,
    logger: false,
    // Not against JSON Schema's meta-schema: the keywords are checked as the API server checks
    // a CRD's (schema-keywords.ts), and the place of a refused one is named.
    validateSchema: false,
    // Schemas are compiled once per run and validate a few thousand objects at most: ajv's
    // optimisation passes over the generated code cost more than they save here.
    code: { regExp: re2, optimize: false },
  })
  shared.addKeyword({
    keyword: JSON_ENUM,
    schemaType: 'array',
    validate: (allowed: unknown[], data: unknown) => allowed.some((v) => jsonEqual(v, data)),
  })
  for (const [name, validate] of Object.entries(INTEGER_FORMATS)) {
    shared.addFormat(name, { type: 'number', validate })
  }
  for (const [name, validate] of Object.entries(STRING_FORMATS)) {
    shared.addFormat(name, { type: 'string', validate })
  }
  return shared
}

/** Compiles a version's root schema; throws SchemaCompileError. */
export function compileSchema(root: Schema): ValidateFunction {
  const schema = toJsonSchema(root, [])
  try {
    return ajv().compile(schema)
  } catch (error) {
    throw new SchemaCompileError(`schema.openAPIV3Schema: ${(error as Error).message}`)
  }
}

function toJsonSchema(schema: Schema, place: readonly string[]): JsonObject {
  checkSchemaKeywords(schema, place)
  const out: JsonObject = {}
  const type = typeOf(schema)
  const types = type !== '' ? [type] : schema[EXT.intOrString] === true ? ['integer', 'string'] : []
  if (types.length > 0) {
    if (schema.nullable === true) types.push('null')
    out.type = types.length === 1 ? types[0] : types
  }
  for (const keyword of SAME_KEYWORDS) {
    if (Object.hasOwn(schema, keyword) && !isUnset(schema[keyword])) out[keyword] = schema[keyword]
  }
  if (Array.isArray(out.enum) && out.enum.some((v) => typeof v === 'object' && v !== null)) {
    out[JSON_ENUM] = out.enum
    delete out.enum
  }
  // OpenAPI v3.0's boolean exclusive bounds are JSON Schema's numeric ones.
  if (schema.exclusiveMinimum === true && typeof schema.minimum === 'number') {
    delete out.minimum
    out.exclusiveMinimum = schema.minimum
  }
  if (schema.exclusiveMaximum === true && typeof schema.maximum === 'number') {
    delete out.maximum
    out.exclusiveMaximum = schema.maximum
  }
  if (typeof schema.format === 'string' && isCheckedFormat(schema.format)) {
    out.format = schema.format
  }
  if (isRecord(schema.properties)) {
    const properties: JsonObject = {}
    for (const [name, child] of Object.entries(schema.properties)) {
      // setOwn: a property may be named `__proto__`.
      if (isRecord(child))
        setOwn(properties, name, toJsonSchema(child, [...place, 'properties', name]))
    }
    out.properties = properties
  }
  if (isRecord(schema.items)) out.items = toJsonSchema(schema.items, [...place, 'items'])
  if (isRecord(schema.additionalProperties)) {
    out.additionalProperties = toJsonSchema(schema.additionalProperties, [
      ...place,
      'additionalProperties',
    ])
  }
  for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = schema[keyword]
    if (Array.isArray(list) && !isUnset(list)) {
      out[keyword] = list.map((item: unknown, i) =>
        toJsonSchema(item as Schema, [...place, keyword, String(i)]),
      )
    }
  }
  if (isRecord(schema.not)) out.not = toJsonSchema(schema.not, [...place, 'not'])
  return out
}

/**
 * A keyword the API server holds as unset: it decodes a CRD into Go structs, where `null` is the
 * zero value and an empty list is left out (`omitempty`), so `enum: []` constrains nothing.
 */
function isUnset(value: unknown): boolean {
  return value === null || (Array.isArray(value) && value.length === 0)
}

/** Formats checked here; the API server checks a few more (email, hostname, ip, cidr, mac…). */
export function isCheckedFormat(format: string): boolean {
  return Object.hasOwn(INTEGER_FORMATS, format) || Object.hasOwn(STRING_FORMATS, format)
}
