/**
 * Field paths with wildcards, as the kind table writes them (`spec.webhookConfigRef.name`,
 * `spec.config.compositeToolRefs[].name`, `spec.outgoingAuth.backends{}.externalAuthConfigRef.name`):
 * `[]` stands for every item of a list and `{}` for every value of a map. Read from untrusted
 * objects: a step that meets the wrong type matches nothing.
 */

import { isRecord, setOwn } from './object.ts'
import type { JsonObject } from './object.ts'

type Step = { readonly key: string } | '[]' | '{}'

/** A value a pattern matched, with its field path as Kubernetes writes it (`a.b[2].c`, `m[key]`). */
export interface MatchedValue {
  readonly path: string
  readonly value: unknown
}

/** The patterns come from the kind table: a few, each parsed once. */
const parsed = new Map<string, readonly Step[]>()

/** The steps of `pattern` (`''` is the whole object); throws on a malformed one, a bug in the table. */
export function parsePathPattern(pattern: string): readonly Step[] {
  const known = parsed.get(pattern)
  if (known) return known
  const steps: Step[] = []
  for (const part of pattern === '' ? [] : pattern.split('.')) {
    const match = /^([^[\]{}]+)((?:\[\]|\{\})*)$/.exec(part)
    if (!match?.[1]) throw new Error(`malformed path pattern ${JSON.stringify(pattern)}`)
    steps.push({ key: match[1] })
    for (const wildcard of match[2]?.match(/\[\]|\{\}/g) ?? []) steps.push(wildcard as '[]' | '{}')
  }
  parsed.set(pattern, steps)
  return steps
}

/** Every value `pattern` matches in `root` (own keys only), in document order. */
export function valuesAtPattern(root: unknown, pattern: string): MatchedValue[] {
  let matched: MatchedValue[] = [{ path: '', value: root }]
  for (const step of parsePathPattern(pattern)) {
    const next: MatchedValue[] = []
    for (const { path, value } of matched) {
      if (step === '[]') {
        if (Array.isArray(value))
          value.forEach((item: unknown, index) =>
            next.push({ path: `${path}[${index}]`, value: item }),
          )
      } else if (!isRecord(value)) {
        continue
      } else if (step === '{}') {
        for (const key of Object.keys(value))
          next.push({ path: `${path}[${key}]`, value: value[key] })
      } else if (Object.hasOwn(value, step.key)) {
        next.push({ path: path === '' ? step.key : `${path}.${step.key}`, value: value[step.key] })
      }
    }
    matched = next
  }
  return matched
}

/**
 * Copies into `into` only what `patterns` match in `root`, and the lists and maps on the way to
 * it: a list keeps its length (an item with nothing kept is `null`), so field paths in the copy
 * are those of the original. What a pattern ends on is shared, not copied; `root` is not changed.
 */
export function keepPatterns(
  root: JsonObject,
  patterns: readonly string[],
  into: JsonObject = {},
): JsonObject {
  for (const pattern of patterns) keep(root, parsePathPattern(pattern), 0, into)
  return into
}

/** `kept` with what `steps[at…]` match in `value` added; undefined when there is nothing to keep. */
function keep(value: unknown, steps: readonly Step[], at: number, kept: unknown): unknown {
  // Already kept whole (by an earlier, shorter pattern): nothing to add, and nothing to write into.
  if (at === steps.length || kept === value) return value
  const step = steps[at] as Step
  if (step === '[]') {
    if (!Array.isArray(value)) return kept
    const items: unknown[] = Array.isArray(kept) ? kept : value.map(() => null)
    value.forEach((item: unknown, index) => {
      items[index] = keep(item, steps, at + 1, items[index] ?? undefined) ?? null
    })
    return items
  }
  if (!isRecord(value)) return kept
  const fields: JsonObject = isRecord(kept) ? kept : {}
  const keys = step === '{}' ? Object.keys(value) : Object.hasOwn(value, step.key) ? [step.key] : []
  for (const key of keys) {
    // Own keys only: `fields.__proto__` would otherwise be Object.prototype.
    const before = Object.hasOwn(fields, key) ? fields[key] : undefined
    const child = keep(value[key], steps, at + 1, before)
    if (child !== undefined) setOwn(fields, key, child)
  }
  return fields
}
