/**
 * The keywords of one CRD schema node as the API server takes them: it decodes a CRD into Go's
 * JSONSchemaProps (each keyword has a type; `null` is unset) and then refuses `type: null`, a
 * type OpenAPI v3 does not have, `items` as a list, `uniqueItems: true` and a pattern Go's RE2
 * does not compile. A keyword that would be refused is a SchemaCompileError naming its place
 * (`schema.openAPIV3Schema.properties[spec].maxLength: Invalid value: "ten": must be an
 * integer`), where ajv would otherwise compile nonsense or throw.
 */

import { RE2JS } from '@bufbuild/re2'
import { isRecord } from '../kube/object.ts'
import { jsonTypeName } from './structural.ts'
import type { Schema } from './structural.ts'

/** A schema that cannot be compiled; the message starts with the keyword's place. */
export class SchemaCompileError extends Error {
  override name = 'SchemaCompileError'
}

/** OpenAPI v3's types, the only ones the API server takes (openapiV3Types). */
const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string']

/** The shapes a keyword can have, as Go decodes it: each with its test and its words. */
const KINDS = {
  string: { holds: (v: unknown) => typeof v === 'string', is: 'a string' },
  integer: { holds: (v: unknown) => Number.isSafeInteger(v), is: 'an integer' },
  number: { holds: (v: unknown) => typeof v === 'number' && Number.isFinite(v), is: 'a number' },
  boolean: { holds: (v: unknown) => typeof v === 'boolean', is: 'a boolean' },
  list: { holds: Array.isArray, is: 'a list' },
  strings: {
    holds: (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === 'string'),
    is: 'a list of strings',
  },
  schema: { holds: isRecord, is: 'a schema (an object)' },
  schemas: {
    holds: (v: unknown) => Array.isArray(v) && v.every(isRecord),
    is: 'a list of schemas (objects)',
  },
  schemasByName: {
    holds: (v: unknown) => isRecord(v) && Object.values(v).every(isRecord),
    is: 'schemas (objects) by name',
  },
  schemaOrBoolean: {
    holds: (v: unknown) => isRecord(v) || typeof v === 'boolean',
    is: 'a schema (an object) or a boolean',
  },
  rules: {
    holds: (v: unknown) => Array.isArray(v) && v.every(isRule),
    is: 'a list of rules (objects with a string rule; message, messageExpression, reason and fieldPath strings)',
  },
} satisfies Record<string, { holds: (value: unknown) => boolean; is: string }>

/** What each keyword must hold. */
const KEYWORD_KINDS: Record<string, keyof typeof KINDS> = {
  type: 'string',
  format: 'string',
  pattern: 'string',
  minLength: 'integer',
  maxLength: 'integer',
  minItems: 'integer',
  maxItems: 'integer',
  minProperties: 'integer',
  maxProperties: 'integer',
  minimum: 'number',
  maximum: 'number',
  multipleOf: 'number',
  exclusiveMinimum: 'boolean',
  exclusiveMaximum: 'boolean',
  uniqueItems: 'boolean',
  nullable: 'boolean',
  enum: 'list',
  required: 'strings',
  properties: 'schemasByName',
  items: 'schema',
  additionalProperties: 'schemaOrBoolean',
  allOf: 'schemas',
  anyOf: 'schemas',
  oneOf: 'schemas',
  not: 'schema',
  'x-kubernetes-int-or-string': 'boolean',
  'x-kubernetes-preserve-unknown-fields': 'boolean',
  'x-kubernetes-embedded-resource': 'boolean',
  'x-kubernetes-list-type': 'string',
  'x-kubernetes-list-map-keys': 'strings',
  'x-kubernetes-validations': 'rules',
}

/** An `x-kubernetes-validations` entry as Go decodes one: a string rule, and the rest typed. */
function isRule(value: unknown): boolean {
  if (!isRecord(value) || typeof value.rule !== 'string') return false
  const texts = ['message', 'messageExpression', 'reason', 'fieldPath'] as const
  return (
    texts.every(
      (key) => value[key] === undefined || value[key] === null || typeof value[key] === 'string',
    ) &&
    (value.optionalOldSelf === undefined ||
      value.optionalOldSelf === null ||
      typeof value.optionalOldSelf === 'boolean')
  )
}

const compiledPatterns = new Map<string, RE2JS>()

/**
 * A pattern compiled by RE2 (Go's syntax), once per text: the check here and ajv's validation
 * share it. Throws RE2's error for a pattern it cannot read.
 */
export function compilePattern(pattern: string): RE2JS {
  let compiled = compiledPatterns.get(pattern)
  if (compiled === undefined) {
    compiled = RE2JS.compile(pattern)
    compiledPatterns.set(pattern, compiled)
  }
  return compiled
}

/** Refuses the node's first keyword the API server would refuse; `place` leads to the node. */
export function checkSchemaKeywords(schema: Schema, place: readonly string[]): void {
  const refuse = (keyword: string, message: string): never => {
    throw new SchemaCompileError(`${schemaPlace([...place, keyword])}: ${message}`)
  }
  // Go decodes a list of schemas here, then refuses it: said as the API server says it.
  if (Array.isArray(schema.items)) {
    refuse('items', 'Forbidden: items must be a schema object and not an array')
  }
  for (const [keyword, kind] of Object.entries(KEYWORD_KINDS)) {
    const value = schema[keyword]
    if (value === undefined || value === null) continue
    if (!KINDS[kind].holds(value)) {
      refuse(keyword, `Invalid value: ${shown(value)}: must be ${KINDS[kind].is}`)
    }
  }
  if (schema.type === 'null') {
    refuse('type', 'Forbidden: type cannot be set to null, use nullable as an alternative')
  }
  if (typeof schema.type === 'string' && schema.type !== '' && !TYPES.includes(schema.type)) {
    refuse(
      'type',
      `Unsupported value: ${JSON.stringify(schema.type)}: supported values: ${TYPES.map((t) => `"${t}"`).join(', ')}`,
    )
  }
  if (schema.uniqueItems === true) {
    refuse(
      'uniqueItems',
      'Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    )
  }
  if (typeof schema.pattern === 'string') {
    try {
      compilePattern(schema.pattern)
    } catch (error) {
      refuse(
        'pattern',
        // RE2's message quotes the pattern as it is: its line breaks are escaped, for one line.
        `Invalid value: ${JSON.stringify(schema.pattern)}: must be a valid regular expression, but isn't: ${(error as Error).message.replaceAll('\n', '\\n').replaceAll('\r', '\\r')}`,
      )
    }
  }
}

/**
 * `schema.openAPIV3Schema.properties[spec].items.pattern`, as the API server names a place in a
 * CRD's schema: property names and list indexes in brackets.
 */
export function schemaPlace(segments: readonly string[]): string {
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
