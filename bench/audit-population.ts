/**
 * The cluster bench/audit.ts audits: the view's population (list-server.ts: MCPServers and the
 * configs they name) and, for every MCPServer, its RunConfig ConfigMap and proxy Deployment as
 * the ToolHive operator writes them in a cluster where this webhook runs: owned by the server
 * (controller reference, its uid), the ConfigMap stamped with its content checksum, the
 * Deployment (bench:cluster's scenario 1 object, 7 KB) with the RunConfig checksum and the
 * server's generation in its pod template, the downward-API generation entry on container
 * `toolhive`, a 30 s grace period, one replica, and the server's pod-template overrides applied.
 * The checksums, annotation keys and env entry come from the policies' own functions (the unit
 * test runs the webhook over a sample), so an audit of it finds nothing but the planted defects. Besides them each namespace holds a ConfigMap and a Deployment that are
 * not ToolHive's, which only a client that lists without the label selector would see.
 */

import { effectiveContentChecksum } from '../src/policy/content-checksum.ts'
import { generationEnvEntry } from '../src/policy/generation-env.ts'
import type { JsonObject, KubeObject } from '../src/policy/kube/object.ts'
import { ANNOTATIONS } from '../src/policy/names.ts'
import { asCreated } from './cluster/etcd.ts'
import { proxyDeployments } from './cluster/deployments.ts'
import { NAMESPACES, isStdio, namespaceOf, serverName } from './cluster/population.ts'
import { livePath } from './audit-lists.ts'
import type { Collection } from './list-server.ts'
import { CREATED, serverUid, viewCollections } from './list-server.ts'
import { runConfigJson, runConfigMap, uid } from './population.ts'

/** What a planted proxy Deployment breaks; each costs the webhook one patch operation to mend. */
export const DEFECTS = [
  'stale runconfig-checksum',
  'stdio proxy at 2 replicas',
  'no THV_MCPSERVER_GENERATION entry',
] as const
export type Defect = (typeof DEFECTS)[number]

/**
 * Every 10,000th server's proxy Deployment is broken, by each defect in turn. All of them are
 * stdio servers (4321 % 5 < 3), so the replica cap applies to the second.
 */
export function defectOf(i: number): Defect | undefined {
  return i % 10_000 === 4_321 ? DEFECTS[Math.floor(i / 10_000) % DEFECTS.length] : undefined
}

/** The planted defects of a population of `servers`, by server index. */
export function plantedDefects(servers: number): Map<number, Defect> {
  const planted = new Map<number, Defect>()
  for (let i = 4_321; i < servers; i += 10_000) planted.set(i, defectOf(i)!)
  return planted
}

function controllerReference(i: number): JsonObject {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPServer',
    name: serverName(i),
    uid: serverUid(i),
    controller: true,
    blockOwnerDeletion: true,
  }
}

/** Server i's RunConfig ConfigMap; `revision` 1 is an older content than the stored one. */
function runConfig(i: number, revision = 0): KubeObject {
  const name = serverName(i)
  return runConfigMap(name, namespaceOf(i), runConfigJson(name, i + revision, isStdio(i)))
}

export function storedRunConfigMap(i: number): KubeObject {
  const configMap = runConfig(i)
  configMap.metadata = { ...configMap.metadata, ownerReferences: [controllerReference(i)] }
  return asCreated(configMap, CREATED, false)
}

let operatorDeployments: ReturnType<typeof proxyDeployments> | undefined
/** managedFields name fields, not values: one set per shape (with overrides or not) serves all. */
const managedFieldsByShape = new Map<boolean, unknown>()

export function storedProxyDeployment(i: number): KubeObject {
  const defect = defectOf(i)
  operatorDeployments ??= proxyDeployments()
  const deployment = JSON.parse(operatorDeployments.body(i, serverUid(i), 0))
  const spec = deployment.spec
  spec.replicas = defect === 'stdio proxy at 2 replicas' ? 2 : 1
  const pod = spec.template
  const checksum = effectiveContentChecksum(
    runConfig(i, defect === 'stale runconfig-checksum' ? 1 : 0),
  )
  const overrides = i % 4 === 0
  // The operator applies the server's podTemplateMetadataOverrides (population.ts), its own keys
  // winning; the bench-only revision annotation of bench:cluster is not the operator's.
  pod.metadata.annotations = {
    ...(overrides
      ? { 'vault.hashicorp.com/agent-inject': 'true', 'team.example.com/owner': serverName(i) }
      : {}),
    [ANNOTATIONS.runConfigChecksum]: checksum,
    [ANNOTATIONS.mcpServerGeneration]: String(1 + (i % 9)),
  }
  if (overrides) pod.metadata.labels['cost-center'] = `cc-${i % 40}`
  pod.spec.terminationGracePeriodSeconds = 30
  const proxy = pod.spec.containers.find((c: JsonObject) => c['name'] === 'toolhive')
  if (defect !== 'no THV_MCPSERVER_GENERATION entry') proxy.env.push(generationEnvEntry())
  deployment.status = deploymentStatus(spec.replicas)
  let managedFields = managedFieldsByShape.get(overrides)
  if (managedFields === undefined) {
    managedFields = asCreated(deployment, CREATED, true).metadata!.managedFields
    managedFieldsByShape.set(overrides, managedFields)
  }
  deployment.metadata = {
    ...deployment.metadata,
    uid: uid(i, 0xd3d),
    generation: 1,
    creationTimestamp: CREATED,
    managedFields,
  }
  return deployment as KubeObject
}

function deploymentStatus(replicas: number): JsonObject {
  const condition = (type: string, reason: string) => ({
    type,
    status: 'True',
    lastUpdateTime: CREATED,
    lastTransitionTime: CREATED,
    reason,
  })
  return {
    observedGeneration: 1,
    replicas,
    updatedReplicas: replicas,
    readyReplicas: replicas,
    availableReplicas: replicas,
    conditions: [
      condition('Available', 'MinimumReplicasAvailable'),
      condition('Progressing', 'NewReplicaSetAvailable'),
    ],
  }
}

/** Objects in every namespace that no ToolHive selector matches. */
function foreignConfigMap(n: number): KubeObject {
  const data = { 'ca.crt': '-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n' }
  const metadata = { name: 'kube-root-ca.crt', namespace: namespaceOf(n) }
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata, data }
  return asCreated(object, CREATED, false)
}

function foreignDeployment(n: number): KubeObject {
  const labels = { app: 'frontend' }
  const pod = { containers: [{ name: 'web', image: 'nginx:1.27' }] }
  const spec = {
    replicas: 2,
    selector: { matchLabels: labels },
    template: { metadata: { labels }, spec: pod },
  }
  const metadata = { name: 'frontend', namespace: namespaceOf(n), labels }
  const object = { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec }
  return asCreated(object, CREATED, true)
}

/** `servers` ToolHive objects after the namespaces' foreign ones. */
function withForeign(
  servers: number,
  foreign: (n: number) => KubeObject,
  own: (i: number) => KubeObject,
): Collection {
  return {
    count: NAMESPACES + servers,
    item: (j) => (j < NAMESPACES ? foreign(j) : own(j - NAMESPACES)),
  }
}

/** Every collection the audit lists, for a population of `servers` MCPServers. */
export function auditCollections(servers: number): Map<string, Collection> {
  return new Map([
    ...viewCollections(servers),
    [livePath('ConfigMap'), withForeign(servers, foreignConfigMap, storedRunConfigMap)],
    [livePath('Deployment'), withForeign(servers, foreignDeployment, storedProxyDeployment)],
  ])
}
