/** Adapts a pure mutating policy to a Handler: copy, mutate, diff, answer with a JSON Patch. */

import type { ClusterView } from '../cluster/view.ts'
import type { KubeObject } from '../policy/kube.ts'
import { isRefused } from '../policy/result.ts'
import type { MutationResult } from '../policy/result.ts'
import { cloneJson } from './clone.ts'
import type { Handler } from './handler.ts'
import { diff } from './patch.ts'
import { copyForWrites, diffAtWrites } from './regions.ts'
import type { WritePath } from './regions.ts'
import { allowed, denied, patched } from './response.ts'
import { subjectOf } from './validating.ts'
import type { AdmissionRequest } from './review.ts'

export interface Mutator<Facts> {
  /** Reads what the rule needs from the cluster view (the only I/O on the mutating path). */
  readonly gather: (request: AdmissionRequest, view: ClusterView) => Promise<Facts>
  /**
   * The pure rule. It receives a private copy (of the paths in `writes`, when given; the rest is
   * shared with the request and must only be read) and may change it in place.
   */
  readonly mutate: (object: KubeObject, facts: Facts) => MutationResult
  /**
   * Where `mutate` writes (no path a prefix of another): only those parts are copied and diffed.
   * Absent: the whole object is.
   */
  readonly writes?: readonly WritePath[]
}

/** A mutator that needs nothing from the cluster. */
export function pureMutator(
  mutate: (object: KubeObject) => MutationResult,
  writes?: readonly WritePath[],
): Mutator<undefined> {
  return {
    gather: () => Promise.resolve(undefined),
    mutate: (object) => mutate(object),
    ...(writes ? { writes } : {}),
  }
}

/** Builds the handler that runs `mutator` on the request object. */
export function mutatingHandler<Facts>(mutator: Mutator<Facts>): Handler {
  return async (request, { view }) => {
    const original = request.object
    if (!original) return allowed(request.uid)
    const facts = await mutator.gather(request, view)
    const { writes } = mutator
    const copy = writes ? copyForWrites(original, writes) : cloneJson(original)
    const result = mutator.mutate(copy, facts)
    if (isRefused(result)) {
      return denied(request.uid, result.violations, result.warnings, subjectOf(request))
    }
    const patch =
      writes && result.object === copy
        ? diffAtWrites(original, copy, writes)
        : diff(original, result.object)
    return patched(request.uid, patch, result.warnings)
  }
}
