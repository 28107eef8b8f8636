/** What the DESIGN §5 validators need from the cluster view. */

import type { ClusterView } from '../cluster/view.ts'
import { isRecord } from '../policy/kube/object.ts'
import type { WorkloadFacts } from '../policy/workload-warnings.ts'
import { withDeadline } from './deadline.ts'
import type { AdmissionRequest } from './review.ts'

/**
 * Whether the MCPWebhookConfig a workload references exists (cache, then a live read on a miss).
 * Unknown, so no warning, when the cluster does not serve MCPWebhookConfig: nothing can be looked up.
 */
export async function gatherWorkloadFacts(
  request: AdmissionRequest,
  view: ClusterView,
): Promise<WorkloadFacts> {
  const spec = request.object?.spec
  const ref = isRecord(spec) ? spec.webhookConfigRef : undefined
  const name = isRecord(ref) ? ref.name : undefined
  if (typeof name !== 'string' || name === '' || request.namespace === undefined) return {}
  if (!view.serves('MCPWebhookConfig')) return {}
  const namespace = request.namespace
  const config = await withDeadline((signal) =>
    view.get({ kind: 'MCPWebhookConfig', namespace, name }, { signal }),
  )
  return { webhookConfigExists: config !== undefined }
}

/** The config a DELETE names, and the MCPServers that reference it. */
interface WebhookConfigDeletion {
  readonly name: string
  readonly referencingServers: string[]
}

/**
 * The MCPServers in the namespace that reference the config being deleted, listed live (DESIGN
 * §5.1): a reference created a moment ago, not yet in the cache, counts.
 */
export async function gatherReferencingServers(
  request: AdmissionRequest,
  view: ClusterView,
): Promise<WebhookConfigDeletion> {
  const name = request.name ?? ''
  if (request.namespace === undefined || name === '') return { name, referencingServers: [] }
  const namespace = request.namespace
  const referencingServers = await withDeadline((signal) =>
    view.serversReferencingWebhookConfig(namespace, name, { live: true, signal }),
  )
  return { name, referencingServers }
}
