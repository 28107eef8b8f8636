/** Derives the JSON Patch (RFC 6902) that turns the request object into the mutated one. */

import fastJsonPatch from 'fast-json-patch'
import type { Operation } from 'fast-json-patch'

export type { Operation as PatchOperation } from 'fast-json-patch'

/**
 * Diffs two JSON documents. fast-json-patch walks both once (linear in their size), escapes
 * `/` and `~` in keys, and emits only the paths that differ.
 */
export function diff(original: object, mutated: object): Operation[] {
  return fastJsonPatch.compare(original, mutated)
}
