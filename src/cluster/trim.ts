/**
 * Trims objects to what the policies and the reconciler read before they enter the cache, so a
 * cluster of many workloads costs little memory: no managedFields, no last-applied copy, of a
 * ToolHive object only the paths its kind's keep-list names (`policy/kinds.ts`), and no ConfigMap
 * data, which is reduced to its content checksum. Pure, exported beside the informer the way
 * client-node's cache.ts keeps its helpers.
 */

import { effectiveContentChecksum } from '../policy/content-checksum.ts'
import { TOOLHIVE_KIND_TABLE } from '../policy/kinds.ts'
import { isRecord, setOwn } from '../policy/kube/object.ts'
import type { JsonObject, KubeObject } from '../policy/kube/object.ts'
import { keepPatterns } from '../policy/kube/path-patterns.ts'
import { ANNOTATIONS } from '../policy/names.ts'
import { keptPaths } from '../policy/references.ts'
import type { ViewKind } from './view.ts'

/** Each ToolHive kind's kept paths, computed once. */
const KEPT_PATHS: ReadonlyMap<ViewKind, readonly string[]> = new Map(
  TOOLHIVE_KIND_TABLE.map((entry) => [entry.kind, keptPaths(entry)]),
)

/** Metadata fields any rule reads; everything else (managedFields, timestamps…) is dropped. */
const KEPT_METADATA = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'labels',
  'annotations',
  'ownerReferences',
  'deletionTimestamp',
] as const

/** kubectl's copy of the whole applied object: as large as the object and read by no rule. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration'

/** The cached form of an object of `kind`. The input is not modified. */
export function trimForView(kind: ViewKind, object: KubeObject): KubeObject {
  const trimmed: KubeObject = { apiVersion: object.apiVersion, kind }
  const metadata = trimMetadata(object.metadata)
  trimmed.metadata = metadata
  if (kind === 'ConfigMap') {
    // The checksum covers data, labels and annotations, so it is taken before anything is dropped.
    const checksum = effectiveContentChecksum(object)
    if (checksum === undefined) {
      // Not a map of strings: nothing to reduce it to, so it is kept as it came (trimming this
      // again then changes nothing). The API server only ever sends string maps.
      if (object['data'] !== undefined) trimmed['data'] = object['data']
      return trimmed
    }
    const annotations = isRecord(metadata.annotations) ? metadata.annotations : {}
    setOwn(annotations, ANNOTATIONS.contentChecksum, checksum)
    metadata.annotations = annotations
    return trimmed
  }
  const kept = KEPT_PATHS.get(kind)
  if (kept) return keepPatterns(object, kept, trimmed)
  // A Deployment, read live for one review: its owner is in its metadata.
  if (object.spec !== undefined) trimmed.spec = object.spec
  if (object.status !== undefined) trimmed.status = object.status
  return trimmed
}

/**
 * The cached form of a Namespace: its name and, once it is being deleted, its
 * `deletionTimestamp`; nothing else (labels, annotations, status, managedFields) is kept, since
 * all the view asks of a namespace is whether it is terminating. The input is not modified.
 */
export function trimNamespace(object: KubeObject): KubeObject {
  const metadata: JsonObject = {}
  const { name, deletionTimestamp } = object.metadata ?? {}
  if (name !== undefined) metadata['name'] = name
  if (deletionTimestamp !== undefined && deletionTimestamp !== null)
    metadata['deletionTimestamp'] = deletionTimestamp
  return { apiVersion: object.apiVersion, kind: object.kind, metadata }
}

function trimMetadata(metadata: KubeObject['metadata']): JsonObject {
  const kept: JsonObject = {}
  if (!isRecord(metadata)) return kept
  for (const field of KEPT_METADATA) {
    if (metadata[field] !== undefined) kept[field] = metadata[field]
  }
  if (isRecord(kept.annotations)) {
    // A copy: the caller may add the checksum, and the input must stay untouched.
    const annotations: JsonObject = {}
    for (const [key, value] of Object.entries(kept.annotations)) {
      if (key !== LAST_APPLIED) setOwn(annotations, key, value)
    }
    kept.annotations = annotations
  }
  return kept
}
