/**
 * DESIGN §5.2: MCPServer, MCPRemoteProxy and VirtualMCPServer CREATE/UPDATE (every version). The
 * cluster's CRDs are the one statement of what these objects may hold: the API server applies
 * their schema and CEL rules, ratcheted on UPDATE, before any validating webhook sees the object.
 * A copy of those rules here could only drift from the release installed and add false denials,
 * so this rule repeats none of them and denies nothing: it warns about what a CRD cannot say.
 */

import { isRecord } from './kube/object.ts'
import { WORKLOAD_KINDS } from './kinds.ts'
import { cappedTransportOf } from './proxy-owner.ts'
import { referencesIn } from './references.ts'
import type { ReferenceTarget } from './references.ts'
import type { ValidationInput } from './result.ts'

/** What the rule needs from the cluster; absent facts are unknown and warn about nothing. */
export interface WorkloadFacts {
  /** The objects its references name that are known not to exist in the namespace. */
  readonly missing?: readonly ReferenceTarget[]
}

/**
 * The warnings for a workload's CREATE or UPDATE (rendering cuts each to 120 characters); none
 * for other kinds and operations. Only warnings: the type leaves no room for a denial.
 */
export function workloadWarnings(input: ValidationInput, facts: WorkloadFacts): string[] {
  const object = input.object
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return []
  if (!isRecord(object) || !(WORKLOAD_KINDS as readonly unknown[]).includes(object.kind)) return []
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
  const missing = facts.missing ?? []
  for (const { path, kind, name } of referencesIn(object)) {
    if (missing.some((target) => target.kind === kind && target.name === name))
      warnings.push(`${path}: ${kind} ${JSON.stringify(name)} does not exist in this namespace`)
  }
  return warnings
}
