/**
 * docs/enforcement.md#proxy-deployments-field-by-field: the invariants of a proxy Deployment,
 * whoever writes it. Each rule touches only its own paths and only when the value differs, so an
 * object that already holds them yields no patch, and nothing else (Deployment labels and
 * annotations, other pod-template keys, other env entries, replicas beyond the stdio cap) is ever
 * changed. Every value written is one the operator computes identically from the same inputs
 * (docs/enforcement.md#never-a-fight-with-the-operator): a Deployment a current operator wrote is
 * admitted untouched, and the webhook acts only where someone broke an invariant.
 *
 * Not written, on purpose: the owner's `podTemplateMetadataOverrides` (the operator applies them
 * with its own keys winning; re-applying them here replaced the operator's computed keys, such
 * as `toolhive.stacklok.dev/authserver-ca-checksum`) and `toolhive.stacklok.io/podvolumes-hash`
 * (the operator's own hash since v0.47; any other value makes it rewrite the Deployment forever).
 */

import { effectiveContentChecksum } from './content-checksum.ts'
import { setGenerationEnv } from './generation-env.ts'
import { podTemplateAnnotations } from './kept-stamps.ts'
import type { UnprovenStamps } from './kept-stamps.ts'
import { isRecord, setOwn } from './kube/object.ts'
import type { JsonObject, KubeObject } from './kube/object.ts'
import { TOOLHIVE_KIND_TABLE } from './kinds.ts'
import type { KindTable } from './kinds.ts'
import { ANNOTATIONS } from './names.ts'
import { capReplicas, isSameOwner, proxyOwnerOf, runConfigMapName } from './proxy-owner.ts'
import type { ProxyOwner } from './proxy-owner.ts'
import type { MutationResult } from './result.ts'

export interface ProxyDeploymentFacts {
  /** The owning workload as the API server holds it, or undefined when it does not exist. */
  readonly owner: KubeObject | undefined
  /** The owner's RunConfig ConfigMap, or undefined when it does not exist. */
  readonly runConfigMap: KubeObject | undefined
  /** The stored Deployment on UPDATE: its generation is never lowered for the same owner. */
  readonly stored: KubeObject | undefined
  /**
   * Set when the live reads missed their deadline on the operator's own write, whose stamps were
   * found complete (kept-stamps.ts): they are kept as written, and `owner` is the cache's.
   */
  readonly unproven?: UnprovenStamps
}

const TERMINATION_GRACE_PERIOD_SECONDS = 30

/**
 * Applies every proxy Deployment invariant to `deployment` (a private copy it may change); what
 * its owner's proxy carries is the owner's entry in `kinds`.
 */
export function mutateProxyDeployment(
  deployment: KubeObject,
  facts: ProxyDeploymentFacts,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): MutationResult {
  const reference = proxyOwnerOf(deployment, kinds)
  const spec = deployment.spec
  const template = isRecord(spec) ? spec.template : undefined
  // Not ours, or too malformed to hold the invariants: the API server's validation speaks next.
  if (!reference || !isRecord(spec) || !isRecord(template))
    return { object: deployment, warnings: [] }

  const warnings: string[] = []
  const owner = facts.owner && isSameOwner(reference, facts.owner) ? facts.owner : undefined
  const { unproven } = facts
  if (!owner && !unproven)
    warnings.push(
      `${reference.kind} ${reference.name} not found: RunConfig checksum and generation not stamped`,
    )

  // The checksum and generation are stamped over whatever else wrote those keys (an override
  // naming them, a stale write): they are the invariants, and the operator computes the same.
  // Unless they could not be read in time: then the operator's own write keeps its own.
  if (owner && !unproven) {
    const checksum = facts.runConfigMap ? effectiveContentChecksum(facts.runConfigMap) : undefined
    if (checksum !== undefined)
      setIn(template, ['metadata', 'annotations'], ANNOTATIONS.runConfigChecksum, checksum)
    else
      warnings.push(
        `ConfigMap ${runConfigMapName(reference)} not found: RunConfig checksum not stamped`,
      )
  }
  if (reference.proxy.stampsGeneration) {
    const generation =
      owner && !unproven ? generationToStamp(owner, reference, facts.stored, kinds) : undefined
    if (generation !== undefined)
      setIn(
        template,
        ['metadata', 'annotations'],
        ANNOTATIONS.mcpServerGeneration,
        String(generation),
      )
    if (isRecord(template.spec)) setGenerationEnv(template.spec, reference.proxy.container)
  }

  const capped = owner ? capReplicas(spec, owner, reference.name, kinds) : undefined
  if (capped !== undefined) warnings.push(capped)
  if (
    isRecord(template.spec) &&
    (template.spec.terminationGracePeriodSeconds ?? undefined) === undefined
  ) {
    template.spec.terminationGracePeriodSeconds = TERMINATION_GRACE_PERIOD_SECONDS
  }
  return { object: deployment, warnings, ...(unproven ? { unproven } : {}) }
}

/** The owner's generation, but never below what the stored Deployment holds for the same owner. */
function generationToStamp(
  owner: KubeObject,
  reference: ProxyOwner,
  stored: KubeObject | undefined,
  kinds: KindTable,
): number | undefined {
  const generation = owner.metadata?.generation
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 1)
    return undefined
  const storedReference = proxyOwnerOf(stored, kinds)
  if (
    !stored ||
    !storedReference ||
    storedReference.uid === '' ||
    storedReference.uid !== reference.uid
  )
    return generation
  const stamped = Number(podTemplateAnnotations(stored)?.[ANNOTATIONS.mcpServerGeneration])
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
