/**
 * What the proxy Deployment and Scale rules need from the cluster, read with DESIGN §4.2's
 * freshness rule: the owner and the RunConfig ConfigMap are read live, in parallel, for every
 * proxy Deployment write. The cache cannot prove it is current: a request may carry the same
 * stale checksum the cache holds while the watch lags (an operator's get-modify-update), and
 * stamping that would leave pods unrolled on a config change. A read that fails or misses the
 * deadline throws ClusterReadError, which admission answers in-band, naming what it could not read.
 */

import type { ClusterView } from '../cluster/view.ts'
import { TRANSPORT_CAPPED_KINDS } from '../policy/kinds.ts'
import type { ProxyDeploymentFacts } from '../policy/proxy-deployment.ts'
import {
  cappedTransportOf,
  isSameOwner,
  proxyOwnerOf,
  runConfigMapName,
} from '../policy/proxy-owner.ts'
import type { ScaleFacts } from '../policy/stdio-scale.ts'
import { withDeadline } from './deadline.ts'
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
  const [owner, runConfigMap] = await withDeadline((signal) =>
    Promise.all([
      view.get({ kind: reference.kind, namespace, name: reference.name }, { live: true, signal }),
      view.get(
        { kind: 'ConfigMap', namespace, name: runConfigMapName(reference) },
        { live: true, signal },
      ),
    ]),
  )
  return { owner, runConfigMap, stored: request.oldObject ?? undefined }
}

/** What a Scale of anything but a capped-transport (stdio MCPServer) proxy needs: nothing. */
const NOTHING_TO_CAP: ScaleFacts = { deployment: undefined, owner: undefined }

/**
 * The Deployment behind a `deployments/scale` request and its owner. Only the proxies of the kinds
 * with a transport cap (MCPServer) are capped, and a proxy Deployment is named like its owner
 * (docs/enforcement.md), so once those kinds' caches have synced, a Scale with no capped owner of
 * its name is answered from the cache alone: an autoscaler acting on remote proxies costs the API
 * server nothing; and where no such kind is served at all, nothing is read. When one might exist, the
 * Deployment is read live (Deployments are not cached) and the owner taken from the cache when it
 * is the incarnation the Deployment names: only the transport matters here, and a scale does not
 * race the operator's config changes.
 */
export async function gatherScaleFacts(
  request: AdmissionRequest,
  view: ClusterView,
): Promise<ScaleFacts> {
  const namespace = request.namespace ?? ''
  const name = request.name ?? ''
  // None of these kinds served, none can own a capped proxy.
  const capped = TRANSPORT_CAPPED_KINDS.filter((kind) => view.serves(kind))
  if (capped.length === 0) return NOTHING_TO_CAP
  if (capped.every((kind) => view.isSynced(kind))) {
    const owners = await Promise.all(
      capped.map((kind) => view.get({ kind, namespace, name }, { cacheOnly: true })),
    )
    if (!owners.some((owner) => owner && cappedTransportOf(owner) !== undefined))
      return NOTHING_TO_CAP
  }
  return withDeadline(async (signal) => {
    const live = { live: true, signal }
    const deployment = await view.get({ kind: 'Deployment', namespace, name }, live)
    const reference = proxyOwnerOf(deployment)
    if (!reference) return { deployment, owner: undefined }
    const key = { kind: reference.kind, namespace, name: reference.name }
    // A cache miss is read live too: the deadline goes with it.
    const cached = await view.get(key, { signal })
    const owner = cached && isSameOwner(reference, cached) ? cached : await view.get(key, live)
    return { deployment, owner }
  })
}
