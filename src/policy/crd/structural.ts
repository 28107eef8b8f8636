/**
 * The structural OpenAPI v3 schema of a CustomResourceDefinition version, as the API server reads
 * it (k8s.io/apiextensions-apiserver/pkg/apiserver/schema): only the members the evaluation uses,
 * each read defensively from the CRD's JSON.
 */

import { isRecord } from '../kube/object.ts'
import type { JsonObject } from '../kube/object.ts'

/** One `x-kubernetes-validations` entry. */
export interface ValidationRule {
  readonly rule: string
  readonly message?: string
  readonly messageExpression?: string
  readonly reason?: string
  readonly fieldPath?: string
  readonly optionalOldSelf?: boolean
}

/** A schema node: the CRD's JSON, typed where read. */
export type Schema = JsonObject

export const EXT = {
  preserveUnknown: 'x-kubernetes-preserve-unknown-fields',
  intOrString: 'x-kubernetes-int-or-string',
  embedded: 'x-kubernetes-embedded-resource',
  listType: 'x-kubernetes-list-type',
  listMapKeys: 'x-kubernetes-list-map-keys',
  validations: 'x-kubernetes-validations',
} as const

/** The named properties of an object node. */
export function propertiesOf(schema: Schema): Record<string, Schema> {
  const properties = schema.properties
  return isRecord(properties) ? (properties as Record<string, Schema>) : {}
}

/** The schema of an array's items, if it has one. */
export function itemsOf(schema: Schema): Schema | undefined {
  return isRecord(schema.items) ? schema.items : undefined
}

/** The schema of a map's values (`additionalProperties`), if it has one. */
export function mapValuesOf(schema: Schema): Schema | undefined {
  return isRecord(schema.additionalProperties) ? schema.additionalProperties : undefined
}

/** Whether the node keeps fields its schema does not name. */
export function preservesUnknown(schema: Schema): boolean {
  return schema[EXT.preserveUnknown] === true
}

export function isEmbedded(schema: Schema): boolean {
  return schema[EXT.embedded] === true
}

/** The node's rules; entries that are not rules are left to CRD reading to refuse. */
export function rulesOf(schema: Schema): ValidationRule[] {
  const rules = schema[EXT.validations]
  return Array.isArray(rules) ? rules.filter(isRule) : []
}

function isRule(value: unknown): value is ValidationRule {
  return isRecord(value) && typeof value.rule === 'string'
}

/** The schema's `type`, or `''` when it names none (int-or-string, preserve-unknown). */
export function typeOf(schema: Schema): string {
  return typeof schema.type === 'string' ? schema.type : ''
}

/** The JSON type name the API server's messages use for a value. */
export function jsonTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  if (typeof value === 'object') return 'object'
  return typeof value // string, boolean
}

/** Whether a schema node is a scalar type (its value shows in a rule's message). */
export function isScalarSchema(schema: Schema): boolean {
  const type = typeOf(schema)
  return type !== 'object' && type !== 'array' && type !== ''
}
