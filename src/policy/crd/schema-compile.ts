/**
 * A CRD version's OpenAPI v3 schema as a JSON Schema that ajv compiles once: OpenAPI's
 * `nullable`, boolean `exclusiveMinimum`/`exclusiveMaximum` and `x-kubernetes-int-or-string`
 * become their JSON Schema forms; the Kubernetes extensions ajv does not know are left out (list
 * types, embedded resources and CEL rules are checked by their own walks; unknown fields are
 * pruned before validation, so no schema forbids them here).
 */

import { RE2JS } from '@bufbuild/re2'
import { Ajv } from 'ajv'
import type { ValidateFunction } from 'ajv'
import { isRecord } from '../kube/object.ts'
import type { JsonObject } from '../kube/object.ts'
import { INTEGER_FORMATS, STRING_FORMATS } from './formats.ts'
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
  'uniqueItems',
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
    const compiled = RE2JS.compile(pattern)
    // ajv shares compiled patterns by their toString(): it must name the pattern.
    return { test: (text: string) => compiled.test(text), toString: () => `/${pattern}/` }
  },
  { code: 'RE2JS.compile' },
)

let shared: Ajv | undefined

/** One ajv for the process: it holds only compiled schemas and the formats. */
function ajv(): Ajv {
  if (shared !== undefined) return shared
  shared = new Ajv({
    allErrors: true,
    verbose: true,
    strict: false,
    logger: false,
    // Schemas are compiled once per run and validate a few thousand objects at most: ajv's
    // optimisation passes over the generated code cost more than they save here.
    code: { regExp: re2, optimize: false },
  })
  for (const [name, validate] of Object.entries(INTEGER_FORMATS)) {
    shared.addFormat(name, { type: 'number', validate })
  }
  for (const [name, validate] of Object.entries(STRING_FORMATS)) {
    shared.addFormat(name, { type: 'string', validate })
  }
  return shared
}

/** Compiles a version's root schema (throws ajv's error for a schema it cannot compile). */
export function compileSchema(root: Schema): ValidateFunction {
  return ajv().compile(toJsonSchema(root))
}

function toJsonSchema(schema: Schema): JsonObject {
  const out: JsonObject = {}
  const type = typeOf(schema)
  const types = type !== '' ? [type] : schema[EXT.intOrString] === true ? ['integer', 'string'] : []
  if (types.length > 0) {
    if (schema.nullable === true) types.push('null')
    out.type = types.length === 1 ? types[0] : types
  }
  for (const keyword of SAME_KEYWORDS) {
    if (Object.hasOwn(schema, keyword)) out[keyword] = schema[keyword]
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
      if (isRecord(child)) properties[name] = toJsonSchema(child)
    }
    out.properties = properties
  }
  if (isRecord(schema.items)) out.items = toJsonSchema(schema.items)
  if (isRecord(schema.additionalProperties)) {
    out.additionalProperties = toJsonSchema(schema.additionalProperties)
  }
  for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = schema[keyword]
    if (Array.isArray(list)) out[keyword] = list.filter(isRecord).map(toJsonSchema)
  }
  if (isRecord(schema.not)) out.not = toJsonSchema(schema.not)
  return out
}

/** Formats checked here; the API server checks a few more (email, hostname, ip, cidr, mac…). */
export function isCheckedFormat(format: string): boolean {
  return Object.hasOwn(INTEGER_FORMATS, format) || Object.hasOwn(STRING_FORMATS, format)
}
