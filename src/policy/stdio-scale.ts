/**
 * DESIGN §4.2: `kubectl scale` and autoscalers write `deployments/scale`, which bypasses the
 * Deployment webhook; the stdio cap must hold there too. Nothing else about replicas is touched.
 */

import { isRecord } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'
import { capStdioReplicas, isSameOwner, proxyOwnerOf } from './proxy-owner.ts'
import type { MutationResult } from './result.ts'

export interface ScaleFacts {
  /** The Deployment the Scale belongs to, or undefined when it does not exist. */
  readonly deployment: KubeObject | undefined
  /** Its owning workload, or undefined when it is not a proxy or the owner is gone. */
  readonly owner: KubeObject | undefined
}

/** Caps an autoscaling/v1 Scale of a stdio MCPServer's proxy Deployment at one replica. */
export function capStdioScale(scale: KubeObject, facts: ScaleFacts): MutationResult {
  const reference = proxyOwnerOf(facts.deployment)
  const spec = scale.spec
  if (!reference || !facts.owner || !isSameOwner(reference, facts.owner) || !isRecord(spec))
    return { object: scale, warnings: [] }
  const warning = capStdioReplicas(spec, facts.owner, reference.name)
  return { object: scale, warnings: warning === undefined ? [] : [warning] }
}
