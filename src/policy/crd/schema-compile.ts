/**
 * A CRD version's OpenAPI v3 schema as a JSON Schema that ajv compiles once: OpenAPI's
 * `nullable`, boolean `exclusiveMinimum`/`exclusiveMaximum` and `x-kubernetes-int-or-string`
 * become their JSON Schema forms; the Kubernetes extensions ajv does not know are left out (list
 * types, embedded resources and CEL rules are checked by their own walks; unknown fields are
 * pruned before validation, so no schema forbids them here).
 * A schema that cannot be compiled (a keyword of the wrong type, a pattern that is not RE2: the
 * API server would not have taken the CRD) is a SchemaCompileError naming the keyword's place.
 */

import { RE2JS } from '@bufbuild/re2'
import { Ajv } from 'ajv'
import type { ValidateFunction } from 'ajv'
import { isRecord } from '../kube/object.ts'
import type { JsonObject } from '../kube/object.ts'
import { INTEGER_FORMATS, STRING_FORMATS } from './formats.ts'
import { EXT, jsonTypeName, typeOf } from './structural.ts'
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

/** A schema ajv cannot compile; the message starts with the keyword's place in the schema. */
export class SchemaCompileError extends Error {
  override name = 'SchemaCompileError'
}

let shared: Ajv | undefined

/** One ajv for the process: it holds only compiled schemas and the formats. */
function ajv(): Ajv {
  if (shared !== undefined) return shared
  shared = new Ajv({
    allErrors: true,
    verbose: true,
    strict: false,
    logger: false,
    // compileSchema checks the schema against the meta-schema itself, to name the place.
    validateSchema: false,
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

/** Compiles a version's root schema; throws SchemaCompileError. */
export function compileSchema(root: Schema): ValidateFunction {
  const schema = toJsonSchema(root, [])
  const compiler = ajv()
  if (compiler.validateSchema(schema) !== true) {
    const [error] = compiler.errors ?? []
    throw new SchemaCompileError(
      error === undefined
        ? 'schema.openAPIV3Schema: not a valid schema'
        : `${schemaPlace(error.instancePath.split('/').slice(1).map(unescapePointer))}: Invalid value: ${shown(error.data)}: ${error.message ?? 'invalid'}`,
    )
  }
  try {
    return compiler.compile(schema)
  } catch (error) {
    throw new SchemaCompileError(`schema.openAPIV3Schema: ${(error as Error).message}`)
  }
}

/**
 * `schema.openAPIV3Schema.properties[spec].items.pattern`, as the API server names a place in a
 * CRD's schema: the translated schema keeps the CRD's structure, so its path is the CRD's.
 */
function schemaPlace(segments: readonly string[]): string {
  let place = 'schema.openAPIV3Schema'
  segments.forEach((segment, i) => {
    const parent = segments[i - 1]
    place += parent === 'properties' || /^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`
  })
  return place
}

/** A keyword's value in a message: as JSON when short, else its type. */
function shown(value: unknown): string {
  const json = JSON.stringify(value)
  return json.length <= 80 ? json : jsonTypeName(value)
}

const unescapePointer = (segment: string) => segment.replaceAll('~1', '/').replaceAll('~0', '~')

function toJsonSchema(schema: Schema, place: readonly string[]): JsonObject {
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
  if (typeof schema.pattern === 'string') checkPattern(schema.pattern, place)
  if (typeof schema.format === 'string' && isCheckedFormat(schema.format)) {
    out.format = schema.format
  }
  if (isRecord(schema.properties)) {
    const properties: JsonObject = {}
    for (const [name, child] of Object.entries(schema.properties)) {
      if (isRecord(child)) properties[name] = toJsonSchema(child, [...place, 'properties', name])
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
    if (Array.isArray(list)) {
      // Kept in place, schemas or not: the meta-schema refuses what is not one, at its index.
      out[keyword] = list.map((item: unknown, i) =>
        isRecord(item) ? toJsonSchema(item, [...place, keyword, String(i)]) : item,
      )
    }
  }
  if (isRecord(schema.not)) out.not = toJsonSchema(schema.not, [...place, 'not'])
  return out
}

/** A pattern RE2 cannot read (the API server would not have taken the CRD). */
function checkPattern(pattern: string, place: readonly string[]): void {
  try {
    RE2JS.compile(pattern)
  } catch (error) {
    throw new SchemaCompileError(
      `${schemaPlace([...place, 'pattern'])}: Invalid value: ${JSON.stringify(pattern)}: must be a valid regular expression, but isn't: ${(error as Error).message}`,
    )
  }
}

/** Formats checked here; the API server checks a few more (email, hostname, ip, cidr, mac…). */
export function isCheckedFormat(format: string): boolean {
  return Object.hasOwn(INTEGER_FORMATS, format) || Object.hasOwn(STRING_FORMATS, format)
}
