/** The API resources the cluster view caches: where each lives and which of its objects matter. */

import { RUNCONFIG_COMPONENT_LABEL, RUNCONFIG_COMPONENTS, TOOLHIVE_GROUP } from '../policy/names.ts'
import type { ViewKind } from './view.ts'

export interface ViewResource {
  readonly kind: ViewKind
  /** `''` for the core group. */
  readonly group: string
  readonly version: string
  readonly plural: string
  /** Narrows the list and watch to the objects policies read. */
  readonly labelSelector?: string
}

/**
 * MCPServer, MCPRemoteProxy and VirtualMCPServer are read at v1beta1, their storage version;
 * MCPWebhookConfig exists only as v1alpha1. RunConfig ConfigMaps are selected by their label.
 */
export const VIEW_RESOURCES: readonly ViewResource[] = [
  { kind: 'MCPServer', group: TOOLHIVE_GROUP, version: 'v1beta1', plural: 'mcpservers' },
  { kind: 'MCPRemoteProxy', group: TOOLHIVE_GROUP, version: 'v1beta1', plural: 'mcpremoteproxies' },
  {
    kind: 'VirtualMCPServer',
    group: TOOLHIVE_GROUP,
    version: 'v1beta1',
    plural: 'virtualmcpservers',
  },
  {
    kind: 'MCPWebhookConfig',
    group: TOOLHIVE_GROUP,
    version: 'v1alpha1',
    plural: 'mcpwebhookconfigs',
  },
  {
    kind: 'ConfigMap',
    group: '',
    version: 'v1',
    plural: 'configmaps',
    labelSelector: `${RUNCONFIG_COMPONENT_LABEL} in (${RUNCONFIG_COMPONENTS.join(',')})`,
  },
]

/** Read live only, never watched: the view needs one Deployment now and then, not all of them. */
export const LIVE_ONLY_RESOURCES: readonly ViewResource[] = [
  { kind: 'Deployment', group: 'apps', version: 'v1', plural: 'deployments' },
]

/** `apps/v1`-style apiVersion of a resource. */
export function apiVersionOf(resource: ViewResource): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`
}

/**
 * The REST path of a resource across all namespaces, in one namespace, or of one object when
 * given its name too.
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
  const collection = `${base}/namespaces/${encodeURIComponent(object.namespace)}/${resource.plural}`
  return object.name === undefined ? collection : `${collection}/${encodeURIComponent(object.name)}`
}
