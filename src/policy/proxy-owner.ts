/**
 * docs/enforcement.md#which-objects-it-recognises: a proxy Deployment is an apps/v1 Deployment
 * whose controller ownerReference points at a ToolHive workload (any version of the group). The
 * owner decides everything else: its kind's entry in the kind table says what the proxy carries
 * (generation, transport cap).
 */

import { groupOf, isRecord } from './kube/object.ts'
import type { JsonObject, KubeObject } from './kube/object.ts'
import { TOOLHIVE_GROUP, TOOLHIVE_KIND_TABLE, toolHiveKind } from './kinds.ts'
import type { KindTable, ProxyFacts, WorkloadKind } from './kinds.ts'

export interface ProxyOwner {
  /** A kind of the table given (the real table's unless a test passes its own). */
  readonly kind: WorkloadKind
  readonly name: string
  /** The ownerReference's uid ('' when absent, as in hand-written manifests). */
  readonly uid: string
  /** What the owner's kind says its proxy carries. */
  readonly proxy: ProxyFacts
}

/** The workload that controls `object` when it is a proxy Deployment, else undefined. */
export function proxyOwnerOf(
  object: KubeObject | undefined | null,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): ProxyOwner | undefined {
  if (!object || object.kind !== 'Deployment' || object.apiVersion !== 'apps/v1') return undefined
  return controllerWorkloadOf(object, kinds)
}

/** The controller ownerReference of `object` when it is a workload of `kinds`. */
function controllerWorkloadOf(object: KubeObject, kinds: KindTable): ProxyOwner | undefined {
  const references = object.metadata?.ownerReferences
  if (!Array.isArray(references)) return undefined
  for (const reference of references as unknown[]) {
    if (!isRecord(reference) || reference.controller !== true) continue
    const { kind, name, uid } = reference
    if (groupOf(reference.apiVersion) !== TOOLHIVE_GROUP) return undefined
    const proxy = toolHiveKind(kind, kinds)?.proxy
    if (!proxy) return undefined
    if (typeof name !== 'string' || name === '') return undefined
    return { kind: kind as WorkloadKind, name, uid: typeof uid === 'string' ? uid : '', proxy }
  }
  return undefined
}

/** The RunConfig ConfigMap name of a workload (docs/enforcement.md). */
export function runConfigMapName(owner: Pick<ProxyOwner, 'name' | 'proxy'>): string {
  return `${owner.name}${owner.proxy.runConfigSuffix}`
}

/**
 * True when `owner` is the object the reference names: same uid, or no uid on one side to
 * compare (files for the CLI carry none). A different uid is another incarnation of the name.
 */
export function isSameOwner(reference: ProxyOwner, owner: KubeObject): boolean {
  const uid = owner.metadata?.uid
  return reference.uid === '' || typeof uid !== 'string' || uid === '' || uid === reference.uid
}

/**
 * The capped transport `workload` runs (`stdio` for a stdio MCPServer), else
 * undefined. The one test of it, for the cap, its warning and its status condition alike: where
 * the kind's cap says so, an absent transport is the CRD's default, and '' or null decode to Go's
 * zero value, which the operator runs as that default too.
 */
export function cappedTransportOf(
  workload: KubeObject,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): string | undefined {
  const cap = toolHiveKind(workload.kind, kinds)?.proxy?.transportCap
  if (!cap) return undefined
  const transport = isRecord(workload.spec) ? workload.spec.transport : undefined
  const unset = transport === undefined || transport === null || transport === ''
  return transport === cap.transport || (unset && cap.byDefault) ? cap.transport : undefined
}

/**
 * The transport cap, on a proxy Deployment and on its Scale alike: lowers `spec.replicas` above 1
 * to 1 when `owner` runs a capped transport. Returns the warning, or undefined when nothing changed.
 */
export function capReplicas(
  spec: JsonObject,
  owner: KubeObject,
  ownerName: string,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): string | undefined {
  const transport = cappedTransportOf(owner, kinds)
  if (transport === undefined || typeof spec.replicas !== 'number' || spec.replicas <= 1)
    return undefined
  const warning = `spec.replicas: ${transport} ${String(owner.kind)} ${ownerName} supports 1 replica; set to 1 (was ${spec.replicas})`
  spec.replicas = 1
  return warning
}
