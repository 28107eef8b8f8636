/**
 * JSON values as the API server hands them to CEL (apiextensions-apiserver's UnstructuredToVal):
 * whole numbers of integer (and int-or-string, and untyped) fields are CEL `int`, numbers of
 * `number` fields `double`; object properties are named with Kubernetes' escaping (`x-y` is
 * `x__dash__y`, a reserved word `namespace` is `__namespace__`); map keys are kept as they are.
 */

import { isRecord } from '../kube/object.ts'
import type { JsonObject } from '../kube/object.ts'
import { itemsOf, mapValuesOf, propertiesOf, typeOf } from './structural.ts'
import type { Schema } from './structural.ts'

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
])

/** A property name as CEL code must spell it (apiserver/pkg/cel's Escape). */
export function escapeName(name: string): string {
  if (RESERVED.has(name)) return `__${name}__`
  return name
    .replaceAll('__', '__underscores__')
    .replaceAll('.', '__dot__')
    .replaceAll('-', '__dash__')
    .replaceAll('/', '__slash__')
}

/** The CEL input for `value` under `schema`. */
export function toCel(value: unknown, schema: Schema | undefined): unknown {
  if (typeof value === 'number') {
    const type = schema === undefined ? '' : typeOf(schema)
    return type !== 'number' && Number.isInteger(value) ? BigInt(value) : value
  }
  if (Array.isArray(value)) {
    const items = schema && itemsOf(schema)
    return value.map((item: unknown) => toCel(item, items))
  }
  if (!isRecord(value)) return value
  const properties = schema ? propertiesOf(schema) : {}
  const mapValues = schema && mapValuesOf(schema)
  const out: JsonObject = {}
  for (const [key, child] of Object.entries(value)) {
    if (Object.hasOwn(properties, key)) out[escapeName(key)] = toCel(child, properties[key])
    else out[key] = toCel(child, mapValues)
  }
  return out
}
