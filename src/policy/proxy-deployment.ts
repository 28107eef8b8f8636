/**
 * DESIGN §4.2–§4.3: the invariants of a proxy Deployment, whoever writes it. Each rule touches
 * only its own paths and only when the value differs, so an object that already holds them
 * yields no patch, and nothing else (Deployment labels, other env entries, replicas beyond the
 * stdio cap) is ever changed: an operator that compares those fields would otherwise fight us.
 */

import { effectiveContentChecksum } from './content-checksum.ts'
import { setGenerationEnv } from './generation-env.ts'
import { isRecord, setOwn, stringMap } from './kube.ts'
import type { JsonObject, KubeObject } from './kube.ts'
import { ANNOTATIONS, runConfigMapName } from './names.ts'
import { podVolumesHash } from './pod-volumes.ts'
import { capStdioReplicas, isSameOwner, proxyOwnerOf } from './proxy-owner.ts'
import type { ProxyOwner } from './proxy-owner.ts'
import type { MutationResult } from './result.ts'

export interface ProxyDeploymentFacts {
  /** The owning workload as the API server holds it, or undefined when it does not exist. */
  readonly owner: KubeObject | undefined
  /** The owner's RunConfig ConfigMap, or undefined when it does not exist. */
  readonly runConfigMap: KubeObject | undefined
  /** The stored Deployment on UPDATE: its generation is never lowered for the same owner. */
  readonly stored: KubeObject | undefined
}

const TERMINATION_GRACE_PERIOD_SECONDS = 30

/** Labels the operator sets for selection (DESIGN §3); an override never replaces them. */
const OPERATOR_LABELS = [
  'app',
  'app.kubernetes.io/name',
  'app.kubernetes.io/instance',
  'toolhive',
  'toolhive-name',
]

/** Applies every proxy Deployment invariant to `deployment` (a private copy it may change). */
export function mutateProxyDeployment(
  deployment: KubeObject,
  facts: ProxyDeploymentFacts,
): MutationResult {
  const reference = proxyOwnerOf(deployment)
  const spec = deployment.spec
  const template = isRecord(spec) ? spec.template : undefined
  // Not ours, or too malformed to hold the invariants: the API server's validation speaks next.
  if (!reference || !isRecord(spec) || !isRecord(template))
    return { object: deployment, warnings: [] }

  const warnings: string[] = []
  const owner = facts.owner && isSameOwner(reference, facts.owner) ? facts.owner : undefined
  if (!owner)
    warnings.push(
      `${reference.kind} ${reference.name} not found: RunConfig checksum and generation not stamped`,
    )

  if (owner) applyOverrides(template, owner, spec)
  if (owner) {
    const checksum = facts.runConfigMap ? effectiveContentChecksum(facts.runConfigMap) : undefined
    if (checksum !== undefined)
      setIn(template, ['metadata', 'annotations'], ANNOTATIONS.runConfigChecksum, checksum)
    else
      warnings.push(
        `ConfigMap ${runConfigMapName(reference.kind, reference.name)} not found: RunConfig checksum not stamped`,
      )
  }
  if (reference.kind === 'MCPServer') {
    const generation = owner ? generationToStamp(owner, reference, facts.stored) : undefined
    if (generation !== undefined)
      setIn(
        template,
        ['metadata', 'annotations'],
        ANNOTATIONS.mcpServerGeneration,
        String(generation),
      )
    if (isRecord(template.spec)) setGenerationEnv(template.spec)
  }

  const capped = owner ? capStdioReplicas(spec, owner, reference.name) : undefined
  if (capped !== undefined) warnings.push(capped)
  if (
    isRecord(template.spec) &&
    (template.spec.terminationGracePeriodSeconds ?? undefined) === undefined
  ) {
    template.spec.terminationGracePeriodSeconds = TERMINATION_GRACE_PERIOD_SECONDS
  }
  // On the Deployment, not the pod template, so the fingerprint alone never rolls pods.
  setIn(
    deployment,
    ['metadata', 'annotations'],
    ANNOTATIONS.podVolumesHash,
    podVolumesHash(template.spec),
  )
  return { object: deployment, warnings }
}

/**
 * The owner's pod-template overrides (MCPServer and MCPRemoteProxy), merged under the keys this
 * webhook manages: the checksum and generation are set after, and selection labels are kept.
 */
function applyOverrides(template: JsonObject, owner: KubeObject, deploymentSpec: JsonObject): void {
  const overrides = podTemplateOverrides(owner)
  if (!overrides) return
  const managed = new Set<string>([ANNOTATIONS.runConfigChecksum, ANNOTATIONS.mcpServerGeneration])
  for (const [key, value] of Object.entries(stringMap(overrides.annotations) ?? {})) {
    if (!managed.has(key)) setIn(template, ['metadata', 'annotations'], key, value)
  }
  const selector = isRecord(deploymentSpec.selector)
    ? stringMap(deploymentSpec.selector.matchLabels)
    : undefined
  const protectedLabels = new Set([...OPERATOR_LABELS, ...Object.keys(selector ?? {})])
  for (const [key, value] of Object.entries(stringMap(overrides.labels) ?? {})) {
    if (!protectedLabels.has(key)) setIn(template, ['metadata', 'labels'], key, value)
  }
}

function podTemplateOverrides(owner: KubeObject): JsonObject | undefined {
  if (owner.kind === 'VirtualMCPServer' || !isRecord(owner.spec)) return undefined
  const resourceOverrides = owner.spec.resourceOverrides
  const proxy = isRecord(resourceOverrides) ? resourceOverrides.proxyDeployment : undefined
  const overrides = isRecord(proxy) ? proxy.podTemplateMetadataOverrides : undefined
  return isRecord(overrides) ? overrides : undefined
}

/** The owner's generation, but never below what the stored Deployment holds for the same owner. */
function generationToStamp(
  owner: KubeObject,
  reference: ProxyOwner,
  stored: KubeObject | undefined,
): number | undefined {
  const generation = owner.metadata?.generation
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 1)
    return undefined
  const storedReference = proxyOwnerOf(stored)
  if (
    !stored ||
    !storedReference ||
    storedReference.uid === '' ||
    storedReference.uid !== reference.uid
  )
    return generation
  const template =
    isRecord(stored.spec) && isRecord(stored.spec.template) ? stored.spec.template : undefined
  const annotations = isRecord(template?.metadata)
    ? stringMap(template.metadata.annotations)
    : undefined
  const stamped = Number(annotations?.[ANNOTATIONS.mcpServerGeneration])
  return Number.isSafeInteger(stamped) && stamped > generation ? stamped : generation
}

/**
 * Sets `root[path…][key] = value` when it differs, creating the maps on the way only then, so an
 * object that already holds the value gets no patch at all.
 */
function setIn(root: JsonObject, path: readonly string[], key: string, value: string): void {
  let current: unknown = root
  for (const step of path) current = isRecord(current) ? current[step] : undefined
  if (isRecord(current) && Object.hasOwn(current, key) && current[key] === value) return
  let parent = root
  for (const step of path) {
    const next = parent[step]
    if (isRecord(next)) parent = next
    else {
      const created: JsonObject = {}
      setOwn(parent, step, created)
      parent = created
    }
  }
  setOwn(parent, key, value)
}
