/** What the validators (docs/enforcement.md#validation) need from the cluster view. */

import { ClusterReadError } from '../cluster/view.ts'
import type { ClusterView } from '../cluster/view.ts'
import type { DeleteFacts } from '../policy/delete-guard.ts'
import { CLUSTER_MACHINERY_USERS } from '../policy/webhooks.ts'
import { isToolHiveKind } from '../policy/kinds.ts'
import { isRecord } from '../policy/kube/object.ts'
import { referencesIn } from '../policy/references.ts'
import { targetKey } from '../policy/reference-warnings.ts'
import type { ReferenceTarget } from '../policy/references.ts'
import type { WorkloadFacts } from '../policy/workload-warnings.ts'
import { withDeadline } from './deadline.ts'
import type { HandlerContext } from './handler.ts'
import type { AdmissionRequest } from './review.ts'

/**
 * The objects a workload's references name (cache, then a live read on a miss), each looked up
 * once. Unknown, so left out and warned about not at all, where the cluster does not serve the
 * kind named: nothing can be looked up.
 */
export async function gatherWorkloadFacts(
  request: AdmissionRequest,
  view: ClusterView,
): Promise<WorkloadFacts> {
  const object = request.object
  if (!object || request.namespace === undefined) return {}
  const namespace = request.namespace
  const keys = new Map<string, ReferenceTarget>()
  for (const { kind, name } of referencesIn(object))
    if (view.serves(kind)) keys.set(targetKey(kind, name), { kind, name })
  if (keys.size === 0) return {}
  const looked = await withDeadline((signal) =>
    Promise.all(
      [...keys].map(
        async ([key, target]) =>
          [key, await view.get({ ...target, namespace }, { signal })] as const,
      ),
    ),
  )
  return { targets: new Map(looked) }
}

/**
 * What the delete guard needs (docs/enforcement.md, "References and deletes"), cheapest first: cluster machinery
 * and a terminating namespace are exempt before anything is listed; then the objects in the
 * namespace whose references (the kind table's) name the object. Read live where the rule
 * denies (a reference created a moment ago counts), from the cache where it only warns. A read
 * that fails admits the delete, saying so: the guard never holds one up.
 */
export async function gatherDeleteFacts(
  request: AdmissionRequest,
  view: ClusterView,
  { denies }: HandlerContext,
): Promise<DeleteFacts> {
  // A DeleteCollection sends each object's review with no request name: the stored object has it.
  const metadata = request.oldObject?.['metadata']
  const stored = isRecord(metadata) ? metadata['name'] : undefined
  const name = request.name || (typeof stored === 'string' ? stored : '')
  const kind = request.kind.kind
  if (request.namespace === undefined || name === '' || !isToolHiveKind(kind))
    return { kind, name, referrers: [] }
  const exempt = exemption(request, view)
  if (exempt !== undefined) return { kind, name, exempt }
  const namespace = request.namespace
  try {
    const referrers = await withDeadline((signal) =>
      view.referrersOf({ kind, namespace, name }, { live: denies, signal }),
    )
    return { kind, name, referrers }
  } catch (error) {
    if (error instanceof ClusterReadError) return { kind, name, unread: error.message }
    throw error
  }
}

/** Why a delete is not looked at, or undefined when it is. */
function exemption(request: AdmissionRequest, view: ClusterView): string | undefined {
  const username = request.userInfo?.username
  if (typeof username === 'string' && CLUSTER_MACHINERY_USERS.includes(username))
    return `deleted by ${username}`
  if (request.namespace !== undefined && view.isTerminating(request.namespace))
    return `namespace ${request.namespace} is terminating`
  return undefined
}
