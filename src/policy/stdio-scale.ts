/**
 * docs/enforcement.md#proxy-deployments-field-by-field: `kubectl scale` and autoscalers write
 * `deployments/scale`, which bypasses the Deployment webhook; the stdio cap must hold there too.
 * Nothing else about replicas is touched.
 */

import { isRecord } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'
import { TOOLHIVE_KIND_TABLE } from './kinds.ts'
import type { KindTable } from './kinds.ts'
import { capReplicas, isSameOwner, proxyOwnerOf } from './proxy-owner.ts'
import type { MutationResult } from './result.ts'

export interface ScaleFacts {
  /** The Deployment the Scale belongs to, or undefined when it does not exist. */
  readonly deployment: KubeObject | undefined
  /** Its owning workload, or undefined when it is not a proxy or the owner is gone. */
  readonly owner: KubeObject | undefined
}

/** Caps an autoscaling/v1 Scale of a capped-transport (stdio MCPServer) proxy at one replica. */
export function capStdioScale(
  scale: KubeObject,
  facts: ScaleFacts,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): MutationResult {
  const reference = proxyOwnerOf(facts.deployment, kinds)
  const spec = scale.spec
  if (!reference || !facts.owner || !isSameOwner(reference, facts.owner) || !isRecord(spec))
    return { object: scale, warnings: [] }
  const warning = capReplicas(spec, facts.owner, reference.name, kinds)
  return { object: scale, warnings: warning === undefined ? [] : [warning] }
}
