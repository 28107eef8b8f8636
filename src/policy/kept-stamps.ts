/**
 * A proxy Deployment's stamps taken as written: what the operator's own write must carry when the
 * API server was too slow to prove them current (docs/enforcement.md#a-slow-api-server). The write
 * is then admitted with the checksum and generation it holds, so it must hold both (a write that
 * lacks one would leave pods that never roll on a config change), and its generation must not be
 * below the one already stamped for the same owner (a stale write must not roll pods back).
 */

import { isRecord, stringMap } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'
import { TOOLHIVE_KIND_TABLE } from './kinds.ts'
import type { KindTable, WorkloadKind } from './kinds.ts'
import { ANNOTATIONS } from './names.ts'
import { proxyOwnerOf } from './proxy-owner.ts'

/** A write admitted with its stamps kept, unproven: the owner's kind and what could not be read. */
export interface UnprovenStamps {
  readonly ownerKind: WorkloadKind
  /** The live read that missed its deadline, as the refusal would have said it. */
  readonly unread: string
}

/** The pod template's annotations of a Deployment, or undefined when it has none. */
export function podTemplateAnnotations(
  deployment: KubeObject | undefined,
): Record<string, string> | undefined {
  const spec = deployment?.spec
  const template = isRecord(spec) && isRecord(spec.template) ? spec.template : undefined
  return isRecord(template?.metadata) ? stringMap(template.metadata.annotations) : undefined
}

/** The generation stamped on `deployment`'s pod template, when it is a positive safe integer. */
export function stampedGeneration(deployment: KubeObject | undefined): number | undefined {
  const text = podTemplateAnnotations(deployment)?.[ANNOTATIONS.mcpServerGeneration]
  if (text === undefined || !/^[1-9][0-9]*$/.test(text)) return undefined
  const generation = Number(text)
  return Number.isSafeInteger(generation) ? generation : undefined
}

/**
 * Why `deployment`'s stamps cannot be kept as written, or undefined when they can: each stamp
 * its owner's kind carries is present, and the generation is not lowered against `stored` (the
 * Deployment the API server holds, on UPDATE) for the same owner.
 */
export function keptStampsProblem(
  deployment: KubeObject,
  stored: KubeObject | undefined,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): string | undefined {
  const reference = proxyOwnerOf(deployment, kinds)
  if (!reference) return undefined
  const checksum = podTemplateAnnotations(deployment)?.[ANNOTATIONS.runConfigChecksum]
  if (checksum === undefined || checksum === '')
    return `the write carries no ${ANNOTATIONS.runConfigChecksum} to keep`
  if (!reference.proxy.stampsGeneration) return undefined
  const generation = stampedGeneration(deployment)
  if (generation === undefined)
    return `the write carries no ${ANNOTATIONS.mcpServerGeneration} to keep`
  const storedReference = proxyOwnerOf(stored, kinds)
  if (!storedReference || storedReference.uid === '' || storedReference.uid !== reference.uid)
    return undefined
  const before = stampedGeneration(stored)
  return before !== undefined && generation < before
    ? `the write lowers ${ANNOTATIONS.mcpServerGeneration} from ${before} to ${generation}`
    : undefined
}
