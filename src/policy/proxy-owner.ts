/**
 * DESIGN §3: a proxy Deployment is an apps/v1 Deployment whose controller ownerReference points
 * at a ToolHive workload (any version of the group). The owner decides everything else, such as
 * whether the stdio cap applies.
 */

import { groupOf, isRecord } from './kube/object.ts'
import type { JsonObject, KubeObject } from './kube/object.ts'
import { TOOLHIVE_GROUP, WORKLOAD_KINDS } from './kinds.ts'
import type { WorkloadKind } from './kinds.ts'

export interface ProxyOwner {
  readonly kind: WorkloadKind
  readonly name: string
  /** The ownerReference's uid ('' when absent, as in hand-written manifests). */
  readonly uid: string
}

/** The workload that controls `object` when it is a proxy Deployment, else undefined. */
export function proxyOwnerOf(object: KubeObject | undefined | null): ProxyOwner | undefined {
  if (!object || object.kind !== 'Deployment' || object.apiVersion !== 'apps/v1') return undefined
  return controllerWorkloadOf(object)
}

/** The controller ownerReference of `object` when it is a ToolHive workload. */
function controllerWorkloadOf(object: KubeObject): ProxyOwner | undefined {
  const references = object.metadata?.ownerReferences
  if (!Array.isArray(references)) return undefined
  for (const reference of references as unknown[]) {
    if (!isRecord(reference) || reference.controller !== true) continue
    const { kind, name, uid } = reference
    if (groupOf(reference.apiVersion) !== TOOLHIVE_GROUP) return undefined
    if (!(WORKLOAD_KINDS as readonly unknown[]).includes(kind)) return undefined
    if (typeof name !== 'string' || name === '') return undefined
    return { kind: kind as WorkloadKind, name, uid: typeof uid === 'string' ? uid : '' }
  }
  return undefined
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
 * An MCPServer whose `spec.transport` is stdio (DESIGN §4.2). The one test of it, for the cap, its
 * warning and its status condition alike: the CRD defaults an absent transport to stdio, and ''
 * or null decode to Go's zero value, which the operator also runs as stdio.
 */
export function isStdioServer(server: KubeObject): boolean {
  if (server.kind !== 'MCPServer') return false
  const transport = isRecord(server.spec) ? server.spec.transport : undefined
  return transport === undefined || transport === null || transport === '' || transport === 'stdio'
}

/**
 * The stdio cap, on a proxy Deployment and on its Scale alike: lowers `spec.replicas` above 1 to 1
 * when `owner` is a stdio MCPServer. Returns the warning, or undefined when nothing changed.
 */
export function capStdioReplicas(
  spec: JsonObject,
  owner: KubeObject,
  ownerName: string,
): string | undefined {
  if (!isStdioServer(owner) || typeof spec.replicas !== 'number' || spec.replicas <= 1)
    return undefined
  const warning = `spec.replicas: stdio MCPServer ${ownerName} supports 1 replica; set to 1 (was ${spec.replicas})`
  spec.replicas = 1
  return warning
}
