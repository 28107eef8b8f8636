/**
 * docs/enforcement.md#proxy-deployments-field-by-field: the proxy container reads its MCPServer
 * generation from the pod's own annotation through the downward API, so old and new pods never race
 * on a shared live-mounted value.
 */

import { isRecord, jsonEqual } from './kube/object.ts'
import type { JsonObject } from './kube/object.ts'
import { ANNOTATIONS } from './names.ts'

export const GENERATION_ENV = 'THV_MCPSERVER_GENERATION'

/** The exact entry: `apiVersion` explicit, or the API server's defaulting reads as drift. */
export function generationEnvEntry(): JsonObject {
  return {
    name: GENERATION_ENV,
    valueFrom: {
      fieldRef: {
        apiVersion: 'v1',
        fieldPath: `metadata.annotations['${ANNOTATIONS.mcpServerGeneration}']`,
      },
    },
  }
}

/**
 * Makes the proxy container of `podSpec` (named `container`) carry exactly one correct entry: a
 * wrong or literal one is replaced where it stands, later duplicates are dropped, a missing one
 * is appended. Every other entry keeps its place.
 */
export function setGenerationEnv(podSpec: JsonObject, container: string): void {
  const containers = podSpec.containers
  if (!Array.isArray(containers)) return
  const proxy = (containers as unknown[]).find(
    (c): c is JsonObject => isRecord(c) && c.name === container,
  )
  if (!proxy) return
  const desired = generationEnvEntry()
  const env = Array.isArray(proxy.env) ? (proxy.env as unknown[]) : undefined
  if (!env) {
    proxy.env = [desired]
    return
  }
  const matching = env.flatMap((entry, index) =>
    isRecord(entry) && entry.name === GENERATION_ENV ? [index] : [],
  )
  const [first, ...duplicates] = matching
  if (first === undefined) {
    env.push(desired)
    return
  }
  if (!jsonEqual(env[first], desired)) env[first] = desired
  for (const index of duplicates.reverse()) env.splice(index, 1)
}
