/**
 * Copy and diff only where a rule writes. A rule that declares its write paths (e.g. the `env` of
 * the container named `toolhive`) gets a copy in which the objects along those paths are
 * fresh and the values at their ends are deep copies, while everything else (most of a pod
 * template: images, probes, volumes) is shared with the request. The JSON Patch is then the
 * fast-json-patch diff of each path's end alone, not a walk of the whole object twice.
 *
 * A write outside the declared paths would be lost from the patch; the property tests compare
 * this with a full copy and diff on generated objects so a rule cannot drift from its paths.
 */

import fastJsonPatch from 'fast-json-patch'
import type { Operation } from 'fast-json-patch'
import { isRecord, jsonEqual, setOwn } from '../policy/kube.ts'
import type { JsonObject } from '../policy/kube.ts'
import { cloneJson } from './clone.ts'

/**
 * Steps from the root: a key; `*` for every item of an array; or an item selector such as
 * `{ name: 'toolhive' }` for the items of an array whose fields have those (string) values.
 */
export type WriteStep = string | Readonly<Record<string, string>>
export type WritePath = readonly WriteStep[]

type Container = JsonObject | unknown[]

/**
 * A copy of `original` that a rule writing only at `paths` may change freely: every object on
 * the way is copied (shallowly), every value at an end deeply, the rest is shared.
 */
export function copyForWrites<T extends object>(original: T, paths: readonly WritePath[]): T {
  const copies = new Map<object, Container>()
  const root = shallowCopy(original as Container, copies)
  for (const path of paths) copyAlong(original as Container, root, path, 0, copies)
  return root as T
}

function copyAlong(
  source: Container,
  target: Container,
  path: WritePath,
  depth: number,
  copies: Map<object, Container>,
): void {
  const step = path[depth]
  if (step === undefined) return
  const keys = typeof step === 'string' && step !== '*' ? [step] : itemsAt(source, step)
  for (const key of keys) {
    const value = read(source, key)
    if (!isContainer(value)) continue
    const last = depth === path.length - 1
    const copy = last ? cloneJson(value) : shallowCopy(value, copies)
    write(target, key, copy)
    if (!last) copyAlong(value, copy, path, depth + 1, copies)
  }
}

/** The JSON Patch from `original` to `mutated`, which differ only along `paths`. */
export function diffAtWrites(
  original: object,
  mutated: object,
  paths: readonly WritePath[],
): Operation[] {
  const patch: Operation[] = []
  const written = new Set<string>()
  for (const path of paths) diffAlong(original, mutated, path, 0, '', patch, written)
  return patch
}

function diffAlong(
  before: unknown,
  after: unknown,
  path: WritePath,
  depth: number,
  pointer: string,
  patch: Operation[],
  written: Set<string>,
): void {
  const step = path[depth]
  if (typeof step === 'string' && step !== '*' && isRecord(before) && isRecord(after)) {
    const next = `${pointer}/${fastJsonPatch.escapePathComponent(step)}`
    diffAlong(read(before, step), read(after, step), path, depth + 1, next, patch, written)
    return
  }
  const selectsItems = step === '*' || typeof step === 'object'
  if (selectsItems && Array.isArray(before) && Array.isArray(after)) {
    if (before.length === after.length) {
      // Items the step does not select were shared, never copied: they cannot differ.
      for (const i of itemsAt(before, step))
        diffAlong(before[i], after[i], path, depth + 1, `${pointer}/${i}`, patch, written)
      return
    }
  }
  // The path ends here, or the rule replaced what was on the way: one operation for the whole
  // value. Paths sharing a created parent would write it twice; once is enough.
  if (written.has(pointer)) return
  written.add(pointer)
  patch.push(...replaceWhole(before, after, pointer))
}

function replaceWhole(before: unknown, after: unknown, pointer: string): Operation[] {
  if (before === undefined && after === undefined) return []
  if (after === undefined) return [{ op: 'remove', path: pointer }]
  if (before === undefined) return [{ op: 'add', path: pointer, value: after }]
  if (isContainer(before) && isContainer(after) && Array.isArray(before) === Array.isArray(after))
    return fastJsonPatch
      .compare(before, after)
      .map((operation) => ({ ...operation, path: `${pointer}${operation.path}` }))
  return jsonEqual(before, after) ? [] : [{ op: 'replace', path: pointer, value: after }]
}

/** The indexes of the array items `step` selects (`*` or a selector); none when not an array. */
function itemsAt(container: unknown, step: WriteStep): number[] {
  if (!Array.isArray(container)) return []
  const indexes: number[] = []
  for (let i = 0; i < container.length; i++) {
    if (step === '*' || (typeof step === 'object' && selects(step, container[i]))) indexes.push(i)
  }
  return indexes
}

function selects(selector: Readonly<Record<string, string>>, item: unknown): boolean {
  if (!isRecord(item)) return false
  for (const key of Object.keys(selector)) {
    if (!Object.hasOwn(item, key) || item[key] !== selector[key]) return false
  }
  return true
}

function read(container: unknown, key: string | number): unknown {
  if (Array.isArray(container)) return typeof key === 'number' ? container[key] : undefined
  return isRecord(container) && Object.hasOwn(container, key) ? container[key] : undefined
}

function write(container: Container, key: string | number, value: unknown): void {
  if (Array.isArray(container)) container[key as number] = value
  else setOwn(container, String(key), value)
}

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null
}

function shallowCopy(value: Container, copies: Map<object, Container>): Container {
  const known = copies.get(value)
  if (known) return known
  let copy: Container
  if (Array.isArray(value)) copy = [...value]
  else {
    copy = {}
    for (const key of Object.keys(value)) setOwn(copy, key, value[key])
  }
  copies.set(value, copy)
  return copy
}
