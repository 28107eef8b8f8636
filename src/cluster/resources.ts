/** The API resources the cluster view caches: where each lives and which of its objects matter. */

import { TOOLHIVE_KIND_TABLE } from '../policy/kinds.ts'
import { RUNCONFIG_COMPONENT_LABEL, RUNCONFIG_COMPONENTS } from '../policy/names.ts'
import type { ViewKind } from './view.ts'

export interface ViewResource {
  readonly kind: ViewKind
  /** `''` for the core group. */
  readonly group: string
  readonly version: string
  readonly plural: string
  readonly namespaced: boolean
  /** Narrows the list and watch to the objects policies read. */
  readonly labelSelector?: string
}

/** Every ToolHive kind of the table (`policy/kinds.ts`), and RunConfig ConfigMaps by their label. */
export const VIEW_RESOURCES: readonly ViewResource[] = [
  ...TOOLHIVE_KIND_TABLE.map(({ kind, group, version, plural, namespaced }) => ({
    kind,
    group,
    version,
    plural,
    namespaced,
  })),
  {
    kind: 'ConfigMap',
    group: '',
    version: 'v1',
    plural: 'configmaps',
    namespaced: true,
    labelSelector: `${RUNCONFIG_COMPONENT_LABEL} in (${RUNCONFIG_COMPONENTS.join(',')})`,
  },
]

/** Read live only, never watched: the view needs one Deployment now and then, not all of them. */
export const LIVE_ONLY_RESOURCES: readonly ViewResource[] = [
  { kind: 'Deployment', group: 'apps', version: 'v1', plural: 'deployments', namespaced: true },
]

/** `apps/v1`-style apiVersion of a resource. */
export function apiVersionOf(resource: ViewResource): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`
}

/**
 * The REST path of a resource across all namespaces, in one namespace, or of one object when
 * given its name too (a cluster-scoped resource ignores the namespace).
 */
export function resourcePath(
  resource: ViewResource,
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
