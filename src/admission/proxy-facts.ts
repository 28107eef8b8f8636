/**
 * What the proxy Deployment and Scale rules need from the cluster, read by the
 * freshness rule of docs/enforcement.md#read-live-not-from-the-cache: the owner and the RunConfig
 * ConfigMap are read live, in parallel, for every proxy Deployment write. The cache cannot prove it
 * is current: a request may carry the same stale checksum the cache holds while the watch lags (an
 * operator's get-modify-update), and stamping that would leave pods unrolled on a config change. A
 * read that fails or misses the deadline throws ClusterReadError, which admission answers in-band,
 * naming what it could not read (but for the operator's own write on a slow API server, below).
 */

import { ClusterReadError } from '../cluster/view.ts'
import type { ClusterView } from '../cluster/view.ts'
import { keptStampsProblem } from '../policy/kept-stamps.ts'
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
import type { HandlerContext } from './handler.ts'
import type { AdmissionRequest } from './review.ts'

/**
 * Owner, RunConfig ConfigMap and stored Deployment for a proxy Deployment CREATE/UPDATE. When the
 * reads miss their deadline on the operator's own write (its exact service account), the write is
 * answered with the stamps it carries rather than refused: a loaded API server is when the
 * operator's retries cost most, and the operator computes those stamps itself, from the objects
 * it reconciles (docs/enforcement.md#a-slow-api-server). Only the freshness proof is skipped: a
 * write lacking a stamp, or lowering the generation, is refused as any other writer's is.
 */
export async function gatherProxyDeploymentFacts(
  request: AdmissionRequest,
  view: ClusterView,
  context: Pick<HandlerContext, 'exactOperator'>,
): Promise<ProxyDeploymentFacts> {
  const deployment = request.object ?? undefined
  const reference = proxyOwnerOf(deployment)
  const namespace = request.namespace ?? ''
  const stored = request.oldObject ?? undefined
  if (!deployment || !reference) return { owner: undefined, runConfigMap: undefined, stored }
  const ownerKey = { kind: reference.kind, namespace, name: reference.name }
  try {
    const [owner, runConfigMap] = await withDeadline((signal) =>
      Promise.all([
        view.get(ownerKey, { live: true, signal }),
        view.get(
          { kind: 'ConfigMap', namespace, name: runConfigMapName(reference) },
          { live: true, signal },
        ),
      ]),
    )
    return { owner, runConfigMap, stored }
  } catch (error) {
    if (!(error instanceof ClusterReadError) || !error.deadlineMissed || !context.exactOperator)
      throw error
    const because = keptStampsProblem(deployment, stored)
    if (because !== undefined)
      throw new ClusterReadError(error.what, error.cause, { deadlineMissed: true, because })
    // The stdio cap needs only the owner's transport, which the cache holds well enough.
    const owner = await view.get(ownerKey, { cacheOnly: true })
    const unproven = { ownerKind: reference.kind, unread: error.message }
    return { owner, runConfigMap: undefined, stored, unproven }
  }
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
