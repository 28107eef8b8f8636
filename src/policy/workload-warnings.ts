/** DESIGN §5.2 warnings for ToolHive workloads: advice that never denies a write. */

import type { JsonObject } from './kube/object.ts'
import { isRecord } from './kube/object.ts'
import type { WorkloadKind } from './kinds.ts'
import { isStdioServer } from './proxy-owner.ts'
import { webhookConfigRefName } from './webhook-config-ref.ts'

/** The warnings for a workload spec, each at most 120 characters. */
export function workloadWarnings(
  kind: WorkloadKind,
  spec: JsonObject,
  facts: { readonly webhookConfigExists?: boolean },
): string[] {
  const warnings: string[] = []
  const replicas = Number.isInteger(spec.replicas) ? (spec.replicas as number) : 0
  const stdio = isStdioServer({ kind, spec })
  const storage = spec.sessionStorage
  const redis = isRecord(storage) && storage.provider === 'redis'
  if (replicas > 1 && stdio) {
    warnings.push(
      `spec.replicas: stdio transport supports 1 replica; the proxy will run 1, not ${replicas}`,
    )
  } else if (replicas > 1 && !redis) {
    // Skipped for stdio: capped at one replica, there is no session to share.
    warnings.push(
      `spec.replicas: ${replicas} replicas without redis sessionStorage; sessions are not shared across replicas`,
    )
  }
  const refName = webhookConfigRefName({ spec })
  if (facts.webhookConfigExists === false && refName !== undefined) {
    warnings.push(
      `spec.webhookConfigRef.name: MCPWebhookConfig ${JSON.stringify(refName)} does not exist in this namespace`,
    )
  }
  return warnings
}
