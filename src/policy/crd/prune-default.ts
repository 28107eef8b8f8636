/**
 * What the API server does to a custom resource as it decodes it, before any validation: fields
 * the schema does not name are pruned (and named in a warning, or refused under strict field
 * validation), nulls of non-nullable fields without a default are dropped, and defaults are
 * applied (apiextensions-apiserver's structural pruning and defaulting, in that order). The
 * result is a new value; the input is never changed.
 */

import { isRecord } from '../kube/object.ts'
import type { JsonObject } from '../kube/object.ts'
import { isEmbedded, itemsOf, mapValuesOf, preservesUnknown, propertiesOf } from './structural.ts'
import type { Schema } from './structural.ts'

/** ObjectMeta's fields: the API server keeps these in any `metadata` and drops the rest. */
const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
])

/** Fields every object (and every embedded resource) has whatever its schema says. */
const TYPE_META_FIELDS = ['apiVersion', 'kind', 'metadata'] as const

interface Decoded {
  readonly value: JsonObject
  /** Paths of the pruned fields, `spec.replica`, as the API server's warnings name them. */
  readonly unknownFields: readonly string[]
}

/** Prunes, drops nulls and defaults a whole object against its version's root schema. */
export function pruneAndDefault(object: JsonObject, root: Schema): Decoded {
  const unknownFields: string[] = []
  const value = walk(object, root, '', unknownFields, true) as JsonObject
  return { value, unknownFields }
}

function walk(
  value: unknown,
  schema: Schema,
  path: string,
  unknown: string[],
  isResource: boolean,
): unknown {
  if (Array.isArray(value)) {
    const items = itemsOf(schema)
    return items === undefined
      ? value
      : value.map((item: unknown, i) =>
          walk(item, items, `${path}[${i}]`, unknown, isEmbedded(items)),
        )
  }
  if (!isRecord(value)) return value
  const properties = propertiesOf(schema)
  const mapValues = mapValuesOf(schema)
  const keepsAll = preservesUnknown(schema) || schema.additionalProperties === true
  const out: JsonObject = {}
  for (const key of Object.keys(value)) {
    const child = value[key]
    const childPath = path === '' ? key : `${path}.${key}`
    if (isResource && key === 'metadata' && isRecord(child)) {
      out[key] = pruneMetadata(child, childPath, unknown)
      continue
    }
    const declared = Object.hasOwn(properties, key) ? properties[key] : undefined
    // A null where the schema allows none is dropped (PruneNonNullableNullsWithoutDefaults);
    // a default, if any, then takes its place.
    if (child === null && declared !== undefined && declared.nullable !== true) continue
    const childSchema = declared ?? mapValues
    if (childSchema !== undefined) {
      out[key] = walk(child, childSchema, childPath, unknown, isEmbedded(childSchema))
    } else if (keepsAll || (isResource && (TYPE_META_FIELDS as readonly string[]).includes(key))) {
      out[key] = child
    } else {
      unknown.push(childPath)
    }
  }
  applyDefaults(out, properties)
  return out
}

/** Absent fields with a default get it, walked so a default's own nested defaults apply too. */
function applyDefaults(out: JsonObject, properties: Record<string, Schema>): void {
  for (const [key, schema] of Object.entries(properties)) {
    if (!Object.hasOwn(out, key) && Object.hasOwn(schema, 'default')) {
      out[key] = walk(structuredClone(schema.default), schema, '', [], isEmbedded(schema))
    }
  }
}

function pruneMetadata(metadata: JsonObject, path: string, unknown: string[]): JsonObject {
  const out: JsonObject = {}
  for (const key of Object.keys(metadata)) {
    if (OBJECT_META_FIELDS.has(key)) out[key] = metadata[key]
    else unknown.push(`${path}.${key}`)
  }
  return out
}
