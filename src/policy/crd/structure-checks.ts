/**
 * What the API server checks beside the OpenAPI schema (apiextensions-apiserver's listtype and
 * objectmeta packages): `x-kubernetes-list-type: set` items and `map` keys are unique
 * (`spec.env[1]: Duplicate value: {"name":"A"}`), and an embedded resource that is not empty
 * names its `apiVersion` and `kind`.
 */

import { isRecord } from '../kube/object.ts'
import type { JsonObject } from '../kube/object.ts'
import { violation } from '../messages/field-errors.ts'
import type { FieldViolation } from '../messages/field-errors.ts'
import { EXT, isEmbedded, itemsOf, mapValuesOf, propertiesOf } from './structural.ts'
import type { Schema } from './structural.ts'

/** Violations of list types and embedded resources anywhere in `value`. */
export function structureViolations(value: unknown, root: Schema): FieldViolation[] {
  const violations: FieldViolation[] = []
  walk(value, root, '', violations)
  return violations
}

function walk(value: unknown, schema: Schema, path: string, out: FieldViolation[]): void {
  if (Array.isArray(value)) {
    checkListType(value, schema, path, out)
    const items = itemsOf(schema)
    if (items !== undefined)
      value.forEach((item: unknown, i) => {
        walk(item, items, `${path}[${i}]`, out)
      })
    return
  }
  if (!isRecord(value)) return
  if (isEmbedded(schema) && Object.keys(value).length > 0) {
    for (const field of ['apiVersion', 'kind'] as const) {
      if (typeof value[field] !== 'string' || value[field] === '') {
        out.push(violation.required(`${path}.${field}`))
      }
    }
  }
  const properties = propertiesOf(schema)
  const mapValues = mapValuesOf(schema)
  for (const key of Object.keys(value)) {
    const child = Object.hasOwn(properties, key) ? properties[key] : mapValues
    if (child !== undefined) walk(value[key], child, path === '' ? key : `${path}.${key}`, out)
  }
}

function checkListType(list: unknown[], schema: Schema, path: string, out: FieldViolation[]): void {
  const type = schema[EXT.listType]
  if (type !== 'set' && type !== 'map') return
  const keys = schema[EXT.listMapKeys]
  const keyNames = type === 'map' && Array.isArray(keys) ? keys.map(String) : undefined
  // Each repeated value or key is reported once, where it first repeats (as listtype does).
  const seen = new Map<string, number>()
  list.forEach((item: unknown, i) => {
    if (keyNames !== undefined && !isRecord(item)) {
      out.push(
        violation.invalid(`${path}[${i}]`, item, 'must be an object for an array of list-type map'),
      )
      return
    }
    const identity = keyNames === undefined ? item : mapKeyOf(item, keyNames)
    const text = JSON.stringify(identity)
    const times = seen.get(text) ?? 0
    if (times === 1) out.push(violation.duplicate(`${path}[${i}]`, identity))
    seen.set(text, times + 1)
  })
}

/** The item's map keys, sorted by name as Go's JSON prints a map. */
function mapKeyOf(item: unknown, names: readonly string[]): JsonObject {
  const key: JsonObject = {}
  for (const name of [...names].sort()) {
    if (isRecord(item) && Object.hasOwn(item, name)) key[name] = item[name]
  }
  return key
}
