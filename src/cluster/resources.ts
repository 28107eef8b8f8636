/** The API resources the cluster view caches or reads live, and where each lives. */

import { TOOLHIVE_KIND_TABLE } from '../policy/kinds.ts'
import type { ViewKind } from './view.ts'

/** Where an API resource lives, of any kind. */
export interface ApiResource {
  readonly kind: string
  /** `''` for the core group. */
  readonly group: string
  readonly version: string
  readonly plural: string
  readonly namespaced: boolean
}

/** A resource of a kind the view can be asked for. */
export interface ViewResource extends ApiResource {
  readonly kind: ViewKind
}

/**
 * Every ToolHive kind of the table (`policy/kinds.ts`) at its first version: what a cluster of the
 * newest ToolHive release serves. In a cluster the view lists and watches what discovery finds
 * instead (`served-kinds.ts`); this is for views given fixed resources (tests, benchmarks).
 */
export const VIEW_RESOURCES: readonly ViewResource[] = TOOLHIVE_KIND_TABLE.map(
  ({ kind, group, versions, plural, namespaced }) => ({
    kind,
    group,
    version: versions[0],
    plural,
    namespaced,
  }),
)

/**
 * Read live only, never watched. A proxy Deployment's review reads its RunConfig ConfigMap live
 * (docs/enforcement.md#read-live-not-from-the-cache) and no other rule reads one, so caching every
 * RunConfig ConfigMap would double the view's memory and start-up list for nothing, and need
 * list/watch on every ConfigMap in the cluster (RBAC cannot narrow by label) where `get` is enough.
 * Deployments: one now and then.
 */
export const LIVE_ONLY_RESOURCES: readonly ViewResource[] = [
  { kind: 'ConfigMap', group: '', version: 'v1', plural: 'configmaps', namespaced: true },
  { kind: 'Deployment', group: 'apps', version: 'v1', plural: 'deployments', namespaced: true },
]

/**
 * Namespaces, listed and watched for whether each is terminating (`namespace-cache.ts`): a core
 * resource every API server serves, so not found by discovery, and not a kind the view holds.
 */
export const NAMESPACES: ApiResource = {
  kind: 'Namespace',
  group: '',
  version: 'v1',
  plural: 'namespaces',
  namespaced: false,
}

/** `apps/v1`-style apiVersion of a resource. */
export function apiVersionOf(resource: ApiResource): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`
}

/**
 * The REST path of a resource across all namespaces, in one namespace, or of one object when
 * given its name too (a cluster-scoped resource ignores the namespace).
 */
export function resourcePath(
  resource: ApiResource,
  object?: { readonly namespace: string; readonly name?: string },
): string {
  const base =
    resource.group === ''
      ? `/api/${resource.version}`
      : `/apis/${resource.group}/${resource.version}`
  if (!object) return `${base}/${resource.plural}`
  const collection = resource.namespaced
    ? `${base}/namespaces/${encodeURIComponent(object.namespace)}/${resource.plural}`
    : `${base}/${resource.plural}`
  return object.name === undefined ? collection : `${collection}/${encodeURIComponent(object.name)}`
}
