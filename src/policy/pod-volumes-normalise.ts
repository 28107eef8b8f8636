/**
 * DESIGN §4.3: applies the rule table (`pod-volumes-rules.ts`) to a spec as sent and returns plain
 * JSON data in which every unset value is already gone, so that the code base's one canonical JSON
 * writer (`canonical-json.ts`) writes exactly what is left: that writer keeps `null` and `[]`,
 * which a Go decoder treats as unset, so they must not reach it where they mean "unset".
 *
 * Plain data here: strings, finite numbers (never -0), booleans, `null` only as an array item,
 * non-empty arrays, and objects whose keys are own data properties (a `__proto__` key included).
 */

import { canonicalJson } from './canonical-json.ts'
import { compareCodePoints } from './content-checksum.ts'
import { isRecord, setOwn } from './kube.ts'
import type { JsonObject } from './kube.ts'
import { quantityValueText } from './quantity.ts'
import { DEFAULT_MODE } from './pod-volumes-rules.ts'
import type { FileDefaults, Fields, Rule } from './pod-volumes-rules.ts'

/**
 * The objects and arrays from the root of a walk (a volume, a mount) down to the value at hand.
 * Neither cycles (impossible in JSON) nor absurd nesting may make the fingerprint throw, so a
 * value already on the path is unset and a container `MAX_DEPTH` deep becomes `TOO_DEEP`.
 */
export type Path = object[]

const MAX_DEPTH = 100
const TOO_DEEP = '\u0000nested too deep'

type Scalar = string | number | boolean

/**
 * `value` as plain data, or undefined when it is unset: `null`, `[]` and what JSON cannot hold
 * (undefined, NaN, ±Infinity, functions, symbols, bigints) are unset, as Go decodes them; unset
 * array items become `null`; `-0` is 0.
 */
export function plainData(value: unknown, path: Path): unknown {
  if (typeof value !== 'object' || value === null) return scalarValue(value)
  if (path.includes(value)) return undefined
  if (path.length >= MAX_DEPTH) return TOO_DEEP
  if (Array.isArray(value) && value.length === 0) return undefined
  path.push(value)
  let data: unknown
  if (Array.isArray(value)) {
    data = Array.from(value as unknown[], (item) => plainData(item, path) ?? null)
  } else {
    const record: JsonObject = {}
    for (const key of Object.keys(value)) put(record, key, plainData(own(value, key), path))
    data = record
  }
  path.pop()
  return data
}

/** `value` as plain data with `fields` applied when it is an object; undefined when unset. */
export function normalise(
  value: unknown,
  fields: Fields,
  defaults: FileDefaults,
  path: Path,
): unknown {
  if (!isRecord(value) || path.includes(value) || path.length >= MAX_DEPTH) {
    return plainData(value, path)
  }
  path.push(value)
  // Volumes with a defaultMode pass it (and defaultUser) down to their files. An object as
  // defaultMode equals no file's mode, so every file's own mode is then kept.
  const inherited =
    fields.defaultMode === 'defaultMode'
      ? {
          mode: plainData(own(value, 'defaultMode'), path) ?? DEFAULT_MODE,
          user: plainData(own(value, 'defaultUser'), path),
        }
      : defaults
  const data: JsonObject = {}
  for (const key of Object.keys(value)) {
    const rule = Object.hasOwn(fields, key) ? fields[key] : undefined
    const field =
      rule === undefined
        ? plainData(value[key], path)
        : ruleValue(rule, value[key], value, inherited, path)
    put(data, key, field)
  }
  path.pop()
  return data
}

/**
 * `list` in the code point (UTF-8 byte) order of the canonical JSON text of
 * `[...sortKey(item), data(item)]`, each with the canonical text of `data(item)`, written once and
 * used for both. Ending the order with the item's own data means two items tie only when they are
 * equal, so the input order can never show. The separators count: `[12]` sorts before `[1]`.
 */
export function inCanonicalOrder<T>(
  list: readonly T[],
  sortKey: (item: T) => unknown[],
  data: (item: T) => unknown = (item) => item,
): { readonly item: T; readonly text: string }[] {
  const entries = list.map((item) => ({ item, text: canonicalJson(data(item)), order: '' }))
  if (entries.length < 2) return entries
  for (const entry of entries) {
    const key = canonicalJson(sortKey(entry.item))
    entry.order = `${key.slice(0, -1)}${key === '[]' ? '' : ','}${entry.text}]`
  }
  return entries.sort((a, b) => compareCodePoints(a.order, b.order))
}

/** `list` in the order of `inCanonicalOrder`. */
function sortedBy<T>(list: readonly T[], sortKey: (item: T) => unknown[]): T[] {
  return list.length < 2 ? [...list] : inCanonicalOrder(list, sortKey).map(({ item }) => item)
}

/** `fieldName` of a normalised item for a sort key: `null` when unset or not an object. */
export function sortField(item: unknown, fieldName: string): unknown {
  return own(item, fieldName) ?? null
}

/** The field `value` of `owner` (both as sent) under `rule`; undefined when unset. */
function ruleValue(
  rule: Rule,
  value: unknown,
  owner: JsonObject,
  defaults: FileDefaults,
  path: Path,
): unknown {
  if (typeof rule === 'function') {
    const data = plainData(value, path)
    return data === undefined ? undefined : rule(data, owner)
  }
  if (typeof rule === 'object' && 'object' in rule) {
    const data = normalise(value, rule.object, defaults, path)
    return rule.emptyIsUnset === true && isEmptyRecord(data) ? undefined : data
  }
  if (typeof rule === 'object' && ('list' in rule || 'items' in rule)) {
    if (!isWalkableArray(value, path)) return plainData(value, path)
    const itemFields = 'list' in rule ? rule.list : rule.items
    path.push(value)
    const items = Array.from(value, (item) => normalise(item, itemFields, defaults, path) ?? null)
    path.pop()
    if ('list' in rule) return items
    return sortedBy(items, (item) => rule.sortBy.map((name) => sortField(item, name)))
  }
  if (typeof value === 'object' && value !== null) {
    // Objects and arrays: only `map` ({} is unset) and `set` (sorted) look into them.
    const data = plainData(value, path)
    if (rule === 'set' && Array.isArray(data)) return sortedBy(data, () => [])
    return rule === 'map' && isEmptyRecord(data) ? undefined : data
  }
  const scalar = scalarValue(value)
  if (scalar === undefined || isUnsetScalar(rule, scalar, defaults)) return undefined
  return rule === 'quantity' ? (quantityValueText(scalar) ?? scalar) : scalar
}

/** Whether a scalar field value is unset under a rule that does not descend. */
function isUnsetScalar(rule: Rule, value: Scalar, defaults: FileDefaults): boolean {
  switch (rule) {
    case 'text':
      return value === ''
    case 'flag':
      return value === false
    case 'count':
      return value === 0
    case 'fileMode':
      return value === defaults.mode
    case 'fileUser':
      return defaults.user !== undefined && value === defaults.user
    case 'defaultMode':
      return value === DEFAULT_MODE
    case 'map':
    case 'set':
    case 'quantity':
      return false
  }
  return typeof rule === 'object' && 'default' in rule && (value === '' || value === rule.default)
}

/** A JSON scalar as plain data (-0 is 0); undefined for null and what JSON cannot hold. */
function scalarValue(value: unknown): Scalar | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : undefined
  return undefined
}

/** A non-empty array that is neither on the path (a cycle) nor too deep to walk. */
function isWalkableArray(value: unknown, path: Path): value is readonly unknown[] {
  return (
    Array.isArray(value) && value.length > 0 && !path.includes(value) && path.length < MAX_DEPTH
  )
}

function isEmptyRecord(data: unknown): boolean {
  return isRecord(data) && Object.keys(data).length === 0
}

/** `parent[key]` when it is the parent's own property (never one inherited from a prototype). */
export function own(parent: unknown, key: string): unknown {
  return isRecord(parent) && Object.hasOwn(parent, key) ? parent[key] : undefined
}

function put(target: JsonObject, key: string, value: unknown): void {
  if (value !== undefined) setOwn(target, key, value)
}
