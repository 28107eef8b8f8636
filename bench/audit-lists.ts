/**
 * The lists an audit reads, as a client sends them: every ToolHive kind the stand-in serves (at
 * the versions its discovery names), the RunConfig ConfigMaps and the proxy Deployments by their
 * labels. Apart from audit-population.ts so the baseline (audit-baseline.ts) loads nothing else.
 */

import { LIVE_ONLY_RESOURCES, VIEW_RESOURCES, resourcePath } from '../src/cluster/resources.ts'
import { RUNCONFIG_COMPONENT_LABEL, RUNCONFIG_COMPONENTS } from '../src/policy/names.ts'

export const AUDIT_LISTS: readonly { readonly path: string; readonly labelSelector?: string }[] = [
  ...VIEW_RESOURCES.map((resource) => ({ path: resourcePath(resource) })),
  {
    path: livePath('ConfigMap'),
    labelSelector: `${RUNCONFIG_COMPONENT_LABEL} in (${RUNCONFIG_COMPONENTS.join(',')})`,
  },
  { path: livePath('Deployment'), labelSelector: 'toolhive=true' },
]

/** Where the cluster-wide list of a kind read live (ConfigMap, Deployment) is. */
export function livePath(kind: string): string {
  return resourcePath(LIVE_ONLY_RESOURCES.find((resource) => resource.kind === kind)!)
}
