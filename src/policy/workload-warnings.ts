/**
 * The workloads and every other kind that names objects (MCPServer, MCPRemoteProxy,
 * VirtualMCPServer, MCPServerEntry), CREATE/UPDATE at every version (docs/enforcement.md). The
 * cluster's CRDs are the one statement of what these objects may hold: the API server applies
 * their schema and CEL rules, ratcheted on UPDATE, before any validating webhook sees the object.
 * A copy of those rules here could only drift from the release installed and add false denials,
 * so this rule repeats none of them and denies nothing: it warns about what a CRD cannot say.
 */

import { isRecord } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'
import { KIND, toolHiveKind } from './kinds.ts'
import { inlineCompositeToolWarnings } from './composite-tool.ts'
import { cappedTransportOf } from './proxy-owner.ts'
import { compositeToolNameWarnings, referenceWarnings } from './reference-warnings.ts'
import type { ReferenceTargets } from './reference-warnings.ts'
import { refuseRemoteUrl } from './remote-url.ts'
import type { ValidationInput } from './result.ts'

/** What the rule needs from the cluster; absent facts are unknown and warn about nothing. */
export interface WorkloadFacts {
  /**
   * The objects its references name, in its namespace (a reference names no other), as the
   * cluster holds them (`reference-warnings.ts`).
   */
  readonly targets?: ReferenceTargets
}

/**
 * The warnings for a workload's CREATE or UPDATE (rendering cuts each to 120 characters); none
 * for other kinds and operations. Only warnings: the type leaves no room for a denial.
 */
export function workloadWarnings(input: ValidationInput, facts: WorkloadFacts): string[] {
  const object = input.object
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return []
  if (!isRecord(object)) return []
  const entry = toolHiveKind(object.kind)
  if (entry === undefined) return []
  const warnings = entry.proxy ? replicaWarnings(object) : []
  if (entry.remoteUrlGuard) warnings.push(...remoteUrlWarnings(object))
  if (object.kind === KIND.VirtualMCPServer) warnings.push(...inlineCompositeToolWarnings(object))
  const { targets } = facts
  if (targets === undefined) return warnings
  warnings.push(...referenceWarnings(object, targets))
  if (object.kind === KIND.VirtualMCPServer)
    warnings.push(...compositeToolNameWarnings(object, targets))
  return warnings
}

/** What a workload's replicas mean for its proxy. */
function replicaWarnings(object: KubeObject): string[] {
  // Whatever the CRD let through; a spec of another shape has nothing to warn about.
  const spec = isRecord(object.spec) ? object.spec : {}
  const warnings: string[] = []
  const replicas = Number.isInteger(spec.replicas) ? (spec.replicas as number) : 0
  const storage = spec.sessionStorage
  const redis = isRecord(storage) && storage.provider === 'redis'
  const capped = cappedTransportOf(object)
  if (replicas > 1 && capped !== undefined) {
    warnings.push(
      `spec.replicas: ${capped} transport supports 1 replica; the proxy will run 1, not ${replicas}`,
    )
  } else if (replicas > 1 && !redis) {
    // Skipped for stdio: capped at one replica, there is no session to share.
    warnings.push(
      `spec.replicas: ${replicas} replicas without redis sessionStorage; sessions are not shared across replicas`,
    )
  }
  return warnings
}

/**
 * A `spec.remoteUrl` the operator's ValidateRemoteURL will refuse when it reconciles: the write is
 * accepted and the object turns `RemoteURLInvalid` later (docs/enforcement.md, "Remote URLs"). The
 * CRD's own pattern (`^https?://`) is the API server's to apply. The warning gives Go's innermost
 * cause; its wrapping (`remote URL host is not allowed: `, `parse "<url>": `) names the field
 * again, and would push the cause past the 120 characters a warning keeps.
 *
 * `spec.allowPrivateEndpoint: true` lets private ranges and `cluster.local` through, as v0.63.0
 * does. Operators from before the option (v0.33.0) refuse them always; the API server then serves
 * a CRD without the field and prunes it, so the object arrives without it and is warned about.
 */
function remoteUrlWarnings(object: KubeObject): string[] {
  const spec = isRecord(object.spec) ? object.spec : {}
  if (typeof spec.remoteUrl !== 'string') return []
  const refusal = refuseRemoteUrl(spec.remoteUrl, {
    allowPrivateEndpoint: spec.allowPrivateEndpoint === true,
  })
  return refusal === undefined
    ? []
    : [`spec.remoteUrl: the operator will refuse it: ${refusal.cause}`]
}
