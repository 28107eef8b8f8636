/**
 * Reads a CustomResourceDefinition (apiextensions.k8s.io/v1) into what evaluation needs: its
 * group and kind, and per served version the structural schema, whether `status` is a
 * subresource and its deprecation. Anything that would make evaluation guess (not a CRD, a
 * served version without a schema) is a CrdInputError naming the CRD and the version. The
 * schema and its CEL rules are compiled by the catalog, when an object first needs them.
 */

import { isRecord } from '../kube/object.ts'
import type { KubeObject } from '../kube/object.ts'
import type { Schema } from './structural.ts'

export interface CrdVersion {
  readonly name: string
  readonly schema: Schema
  /** `status` is a subresource: the main resource's writes do not set it. */
  readonly statusSubresource: boolean
  /** The warning every request for a deprecated version gets. */
  readonly deprecationWarning?: string
}

export interface CrdDefinition {
  /** `mcpservers.toolhive.stacklok.dev`. */
  readonly name: string
  readonly group: string
  readonly kind: string
  /** Served versions by name. */
  readonly versions: ReadonlyMap<string, CrdVersion>
}

/** Input that is not a usable CRD; the message names the CRD, version and rule. */
export class CrdInputError extends Error {
  override name = 'CrdInputError'
  /** The CRD, when it was read and one of its versions then failed to compile. */
  readonly definition: CrdDefinition | undefined
  constructor(message: string, definition?: CrdDefinition) {
    super(message)
    this.definition = definition
  }
}

/** Reads one object as a CRD; throws CrdInputError. */
export function readCrd(object: KubeObject): CrdDefinition {
  if (
    object.apiVersion !== 'apiextensions.k8s.io/v1' ||
    object.kind !== 'CustomResourceDefinition'
  ) {
    throw new CrdInputError(
      `not a CustomResourceDefinition (apiextensions.k8s.io/v1): ${String(object.apiVersion)} ${String(object.kind)}`,
    )
  }
  const name = String(object.metadata?.name)
  const spec = isRecord(object.spec) ? object.spec : {}
  const names = isRecord(spec.names) ? spec.names : {}
  if (
    typeof spec.group !== 'string' ||
    typeof names.kind !== 'string' ||
    !Array.isArray(spec.versions)
  ) {
    throw new CrdInputError(
      `CustomResourceDefinition ${name}: spec.group, spec.names.kind and spec.versions are required`,
    )
  }
  const versions = new Map<string, CrdVersion>()
  for (const version of spec.versions) {
    if (!isRecord(version) || version.served !== true || typeof version.name !== 'string') continue
    const schema = isRecord(version.schema) ? version.schema.openAPIV3Schema : undefined
    const where = `CustomResourceDefinition ${name}, version ${version.name}`
    if (!isRecord(schema)) throw new CrdInputError(`${where}: no schema (schema.openAPIV3Schema)`)
    const subresources = isRecord(version.subresources) ? version.subresources : {}
    versions.set(version.name, {
      name: version.name,
      schema,
      statusSubresource: isRecord(subresources.status),
      ...(version.deprecated === true
        ? { deprecationWarning: deprecationOf(spec.group, names.kind, version) }
        : {}),
    })
  }
  return { name, group: spec.group, kind: names.kind, versions }
}

/** The version's own deprecation warning, or the API server's default one. */
function deprecationOf(group: string, kind: string, version: Record<string, unknown>): string {
  return typeof version.deprecationWarning === 'string'
    ? version.deprecationWarning
    : `${group}/${String(version.name)} ${kind} is deprecated`
}
