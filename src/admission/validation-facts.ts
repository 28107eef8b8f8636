/** What the DESIGN §5 validators need from the cluster view. */

import type { ClusterView } from '../cluster/view.ts'
import { isToolHiveKind } from '../policy/kinds.ts'
import { referencesIn } from '../policy/references.ts'
import type { ReferenceTarget, Referrer } from '../policy/references.ts'
import type { WorkloadFacts } from '../policy/workload-warnings.ts'
import { withDeadline } from './deadline.ts'
import type { AdmissionRequest } from './review.ts'

/**
 * Which objects a workload's references name that do not exist (cache, then a live read on a
 * miss), each looked up once. Unknown, so no warning, where the cluster does not serve the kind
 * named: nothing can be looked up.
 */
export async function gatherWorkloadFacts(
  request: AdmissionRequest,
  view: ClusterView,
): Promise<WorkloadFacts> {
  const object = request.object
  if (!object || request.namespace === undefined) return {}
  const namespace = request.namespace
  const targets = new Map<string, ReferenceTarget>()
  for (const { kind, name } of referencesIn(object))
    if (view.serves(kind)) targets.set(`${kind}/${name}`, { kind, name })
  if (targets.size === 0) return {}
  const looked = await withDeadline((signal) =>
    Promise.all(
      [...targets.values()].map(async (target) => ({
        target,
        found: await view.get({ ...target, namespace }, { signal }),
      })),
    ),
  )
  return { missing: looked.flatMap(({ target, found }) => (found ? [] : [target])) }
}

/** The object a DELETE names, and the objects whose references name it. */
interface Deletion {
  readonly name: string
  readonly referrers: Referrer[]
}

/**
 * The objects in the namespace whose references (the kind table's) name the object being
 * deleted, listed live (docs/enforcement.md): a reference created a moment ago, not yet in the cache,
 * counts.
 */
export async function gatherReferrers(
  request: AdmissionRequest,
  view: ClusterView,
): Promise<Deletion> {
  const name = request.name ?? ''
  const kind = request.kind.kind
  if (request.namespace === undefined || name === '' || !isToolHiveKind(kind))
    return { name, referrers: [] }
  const namespace = request.namespace
  const referrers = await withDeadline((signal) =>
    view.referrersOf({ kind, namespace, name }, { live: true, signal }),
  )
  return { name, referrers }
}
