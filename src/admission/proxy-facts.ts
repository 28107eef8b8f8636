/**
 * What the proxy Deployment and Scale rules need from the cluster, read with DESIGN §4.2's
 * freshness rule: the cache is an optimisation, never a source of stale truth. A cached owner or
 * ConfigMap is used only when it is there, is the incarnation the ownerReference names, and agrees
 * with what the request already carries; otherwise the API server is asked before deciding. A
 * request without the value (a first write) is settled live too.
 */

import type { ClusterView, ObjectKey } from '../cluster/view.ts'
import { effectiveContentChecksum } from '../policy/content-checksum.ts'
import { isRecord, stringMap } from '../policy/kube.ts'
import type { KubeObject } from '../policy/kube.ts'
import { ANNOTATIONS, runConfigMapName } from '../policy/names.ts'
import type { ProxyDeploymentFacts } from '../policy/proxy-deployment.ts'
import { isSameOwner, proxyOwnerOf } from '../policy/proxy-owner.ts'
import type { ProxyOwner } from '../policy/proxy-owner.ts'
import type { ScaleFacts } from '../policy/stdio-scale.ts'
import type { AdmissionRequest } from './review.ts'

/** Owner, RunConfig ConfigMap and stored Deployment for a proxy Deployment CREATE/UPDATE. */
export async function gatherProxyDeploymentFacts(
  request: AdmissionRequest,
  view: ClusterView,
): Promise<ProxyDeploymentFacts> {
  const deployment = request.object ?? undefined
  const reference = proxyOwnerOf(deployment)
  const namespace = request.namespace ?? ''
  if (!deployment || !reference)
    return { owner: undefined, runConfigMap: undefined, stored: undefined }
  const annotations = podTemplateAnnotations(deployment)
  const [owner, runConfigMap] = await Promise.all([
    freshOwner(view, reference, namespace, annotations?.[ANNOTATIONS.mcpServerGeneration]),
    freshRunConfigMap(
      view,
      namespace,
      runConfigMapName(reference.kind, reference.name),
      annotations?.[ANNOTATIONS.runConfigChecksum],
    ),
  ])
  return { owner, runConfigMap, stored: request.oldObject ?? undefined }
}

/** The Deployment behind a `deployments/scale` request (read live: Deployments are not cached) and its owner. */
export async function gatherScaleFacts(
  request: AdmissionRequest,
  view: ClusterView,
): Promise<ScaleFacts> {
  const namespace = request.namespace ?? ''
  const name = request.name ?? ''
  const deployment = await view.get({ kind: 'Deployment', namespace, name }, { live: true })
  const reference = proxyOwnerOf(deployment)
  if (!reference) return { deployment, owner: undefined }
  return { deployment, owner: await freshOwner(view, reference, namespace, undefined, false) }
}

/**
 * The owner, live unless the cached copy is the same incarnation and (for MCPServer, when
 * `mustAgree`) its generation equals the one the request carries.
 */
async function freshOwner(
  view: ClusterView,
  reference: ProxyOwner,
  namespace: string,
  requestedGeneration: string | undefined,
  mustAgree = true,
): Promise<KubeObject | undefined> {
  const key: ObjectKey = { kind: reference.kind, namespace, name: reference.name }
  const cached = await view.get(key)
  const agrees =
    cached !== undefined &&
    isSameOwner(reference, cached) &&
    (!mustAgree ||
      reference.kind !== 'MCPServer' ||
      requestedGeneration === String(cached.metadata?.generation))
  return agrees ? cached : view.get(key, { live: true })
}

/** The RunConfig ConfigMap, live unless the cached checksum equals the one the request carries. */
async function freshRunConfigMap(
  view: ClusterView,
  namespace: string,
  name: string,
  requestedChecksum: string | undefined,
): Promise<KubeObject | undefined> {
  const key: ObjectKey = { kind: 'ConfigMap', namespace, name }
  const cached = await view.get(key)
  if (
    cached &&
    requestedChecksum !== undefined &&
    effectiveContentChecksum(cached) === requestedChecksum
  )
    return cached
  return view.get(key, { live: true })
}

function podTemplateAnnotations(deployment: KubeObject): Record<string, string> | undefined {
  const spec = deployment.spec
  const template = isRecord(spec) ? spec.template : undefined
  return isRecord(template) && isRecord(template.metadata)
    ? stringMap(template.metadata.annotations)
    : undefined
}
