/**
 * Duplicate mapping keys, found in linear time. The yaml library's own check (`uniqueKeys`)
 * compares each key with every earlier key of its mapping: a ConfigMap of 40,000 keys took
 * seconds. Documents are composed with that check off and walked here once, with a Set per
 * mapping and the library's notion of equal keys: scalars of the same value.
 */

import { isMap, isPair, isScalar, isSeq } from 'yaml'
import type { Document } from 'yaml'

interface DuplicateKey {
  readonly key: string
  /** Where the repeated key starts in the text. */
  readonly offset: number
}

/** The first repeated key of any mapping in the document (first in the text), if any. */
export function firstDuplicateKey(document: Document): DuplicateKey | undefined {
  let first: DuplicateKey | undefined
  // An explicit stack: the walk must not overflow on deep documents the parser accepted.
  const pending: unknown[] = [document.contents]
  while (pending.length > 0) {
    const node = pending.pop()
    if (isSeq(node)) {
      for (const item of node.items) pending.push(item)
    } else if (isMap(node)) {
      const seen = new Set<unknown>()
      for (const pair of node.items) {
        if (!isPair(pair)) continue
        pending.push(pair.key, pair.value) // keys may be mappings too
        // Other keys (mappings, sequences, aliases) the library compares by identity: never equal.
        if (!isScalar(pair.key)) continue
        if (!seen.has(pair.key.value)) {
          seen.add(pair.key.value)
          continue
        }
        const offset = pair.key.range?.[0] ?? 0
        if (first === undefined || offset < first.offset) {
          first = { key: String(pair.key.value), offset }
        }
      }
    }
  }
  return first
}
