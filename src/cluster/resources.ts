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
 * One segment of a request path, escaped: a name the API server sent (a discovery version or
 * resource name) or a user gave may hold `/`, `?` or `#`, and escaped it stays one segment. `.`
 * and `..` cannot be one, escaped or not (a URL removes them and the segment before, `%2E%2E`
 * included), nor can the empty name: no Kubernetes name is any of them, so they are refused.
 */
export function pathSegment(name: string): string {
  if (name === '' || name === '.' || name === '..')
    throw new Error(`${JSON.stringify(name)} cannot be a segment of a request path`)
  return encodeURIComponent(name)
}

/**
 * The REST path of a resource across all namespaces, in one namespace, or of one object when
 * given its name too (a cluster-scoped resource ignores the namespace); every name in it escaped.
 */
export function resourcePath(
  resource: ApiResource,
  object?: { readonly namespace: string; readonly name?: string },
): string {
  const base =
    resource.group === ''
      ? `/api/${pathSegment(resource.version)}`
      : `/apis/${pathSegment(resource.group)}/${pathSegment(resource.version)}`
  const plural = pathSegment(resource.plural)
  if (!object) return `${base}/${plural}`
  const collection = resource.namespaced
    ? `${base}/namespaces/${pathSegment(object.namespace)}/${plural}`
    : `${base}/${plural}`
  return object.name === undefined ? collection : `${collection}/${pathSegment(object.name)}`
}
