/** Adapts a pure mutating policy to a Handler: copy, mutate, diff into a JSON Patch. */

import type { ClusterView } from '../cluster/view.ts'
import { isRecord } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { isRefused } from '../policy/result.ts'
import type { MutationResult } from '../policy/result.ts'
import { cloneJson } from './clone.ts'
import type { Handler, HandlerContext } from './handler.ts'
import { diff } from './patch.ts'
import { admitted, refused, subjectOf } from './verdict.ts'
import type { AdmissionRequest } from './review.ts'

interface Mutator<Facts> {
  /** Reads what the rule needs from the cluster view (the only I/O on the mutating path). */
  readonly gather: (
    request: AdmissionRequest,
    view: ClusterView,
    context: HandlerContext,
  ) => Promise<Facts>
  /** The pure rule. It receives a private copy of the whole object and may change it in place. */
  readonly mutate: (object: KubeObject, facts: Facts) => MutationResult
}

/** A mutator that needs nothing from the cluster. */
export function pureMutator(mutate: (object: KubeObject) => MutationResult): Mutator<undefined> {
  return { gather: () => Promise.resolve(undefined), mutate: (object) => mutate(object) }
}

/**
 * Builds the handler that runs `mutator` on the request object. The whole object is copied and
 * the whole result diffed: a rule may write anywhere, and every write is in the patch. Anywhere
 * but `metadata.managedFields`: the API server's bookkeeping, which no rule reads or writes, and
 * in a review the API server sends often as large as the rest of the object. Leaving it out of
 * the copy and the diff changes no patch (a JSON Pointer names keys, not positions).
 */
export function mutatingHandler<Facts>(mutator: Mutator<Facts>): Handler {
  return async (request, context) => {
    const original = request.object ? withoutManagedFields(request.object) : undefined
    if (!original) return admitted()
    const facts = await mutator.gather(request, context.view, context)
    const result = mutator.mutate(cloneJson(original), facts)
    if (isRefused(result)) return refused(result.violations, result.warnings, subjectOf(request))
    const patch = diff(original, result.object)
    const verdict = admitted(
      patch,
      result.warnings,
      withManagedFieldsOf(request.object ?? original, result.object),
    )
    return result.unproven ? { ...verdict, unproven: result.unproven } : verdict
  }
}

/**
 * The mutated object as the API server stores it: the request's `managedFields` (left out of the
 * copy the rule changed) put back where they were, which no patch ever touches.
 */
function withManagedFieldsOf(request: KubeObject, mutated: KubeObject): KubeObject {
  const managedFields = isRecord(request.metadata) ? request.metadata['managedFields'] : undefined
  if (managedFields === undefined || !isRecord(mutated.metadata)) return mutated
  return { ...mutated, metadata: { ...mutated.metadata, managedFields } }
}

/** `object` with the same values but no `metadata.managedFields`; two shallow copies at most. */
export function withoutManagedFields(object: KubeObject): KubeObject {
  const { metadata } = object
  if (!isRecord(metadata) || !Object.hasOwn(metadata, 'managedFields')) return object
  const rest = { ...metadata }
  delete rest['managedFields']
  return { ...object, metadata: rest }
}
