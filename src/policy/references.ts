/**
 * The references of the kind table (`kinds.ts`): what an object names, and which objects name it.
 * The reference warning, the view's reverse index and the delete guard all read them here, so
 * which kinds reference which is decided once, in the table.
 */

import { isRecord } from './kube/object.ts'
import type { JsonObject, KubeObject } from './kube/object.ts'
import { valuesAtPattern } from './kube/path-patterns.ts'
import { TOOLHIVE_KIND_TABLE, toolHiveKind } from './kinds.ts'
import type { KindTable, Reference, ToolHiveKind, ToolHiveKindEntry } from './kinds.ts'

/** An object a reference names, in the referring object's namespace. */
export interface ReferenceTarget {
  readonly kind: ToolHiveKind
  readonly name: string
}

/** A reference found in an object: the name field's path (`spec.webhookConfigRef.name`), and its target. */
export interface FoundReference extends ReferenceTarget {
  readonly path: string
  /** The table's reference it was found by. */
  readonly reference: Reference
}

/** An object that names another: its kind and name, the field that does, and the table's reference. */
export interface Referrer {
  readonly kind: ToolHiveKind
  readonly name: string
  readonly path: string
  readonly reference: Reference
}

/** The references `entry` declares at `version`; a version it does not name reads as its first. */
export function referencesAt(
  entry: ToolHiveKindEntry,
  version: string | undefined,
): readonly Reference[] {
  const byVersion = entry.references ?? {}
  // Own keys only: the version comes from an untrusted apiVersion (`…/__proto__`).
  const named = version !== undefined && Object.hasOwn(byVersion, version)
  return (named ? byVersion[version] : byVersion[entry.versions[0] ?? '']) ?? []
}

/** Every reference `object` makes with a non-empty name, by its kind's entry in `kinds`. */
export function referencesIn(
  object: KubeObject,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): FoundReference[] {
  const entry = toolHiveKind(object.kind, kinds)
  if (!entry?.references) return []
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : ''
  const version = apiVersion.includes('/')
    ? apiVersion.slice(apiVersion.indexOf('/') + 1)
    : undefined
  const found: FoundReference[] = []
  for (const reference of referencesAt(entry, version)) {
    const { holder, field } = nameField(reference.path)
    for (const { path, value } of valuesAtPattern(object, holder)) {
      if (!isRecord(value) || !Object.hasOwn(value, field)) continue
      const name = value[field]
      const kind = targetKind(reference.target, value)
      if (typeof name === 'string' && name !== '' && kind !== undefined)
        found.push({ path: path === '' ? field : `${path}.${field}`, kind, name, reference })
    }
  }
  return found
}

/** The fields of `object` that name `target`, as referrers (none when `object` has no name). */
export function referrersIn(
  object: KubeObject,
  target: ReferenceTarget,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): Referrer[] {
  const name = object.metadata?.name
  if (typeof name !== 'string') return []
  const kind = object.kind as ToolHiveKind
  return referencesIn(object, kinds).flatMap((found) =>
    found.kind === target.kind && found.name === target.name
      ? [{ kind, name, path: found.path, reference: found.reference }]
      : [],
  )
}

/** The kinds whose references (at any version) may name an object of `kind`. */
export function referringKinds(
  kind: ToolHiveKind,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): ToolHiveKind[] {
  return kinds.flatMap((entry) =>
    Object.values(entry.references ?? {}).some((references) =>
      references.some((reference) => targetKinds(reference.target).includes(kind)),
    )
      ? [entry.kind as ToolHiveKind]
      : [],
  )
}

/** Referrers in a stable order: by kind, then name, then path. */
export function sortReferrers(referrers: Referrer[]): Referrer[] {
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  return referrers.sort(
    (a, b) => order(a.kind, b.kind) || order(a.name, b.name) || order(a.path, b.path),
  )
}

/**
 * Every path the cluster view keeps of `entry`'s objects: its keep-list, the fields its
 * references read (the name, and the kind beside it where the kind is read from the object), and
 * what references naming it require of it (`spec.type`).
 */
export function keptPaths(
  entry: ToolHiveKindEntry,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): string[] {
  const paths = new Set(entry.view.keep)
  for (const references of Object.values(entry.references ?? {})) {
    for (const { path, target } of references) {
      paths.add(path)
      if ('kindFrom' in target) {
        const { holder } = nameField(path)
        paths.add(holder === '' ? target.kindFrom : `${holder}.${target.kindFrom}`)
      }
    }
  }
  for (const other of kinds)
    for (const references of Object.values(other.references ?? {}))
      for (const { target, requires } of references)
        if (requires && targetKinds(target).includes(entry.kind as ToolHiveKind))
          paths.add(requires.path)
  return [...paths]
}

/** `spec.webhookConfigRef.name` → the holder `spec.webhookConfigRef` and the field `name`. */
function nameField(path: string): { readonly holder: string; readonly field: string } {
  const dot = path.lastIndexOf('.')
  return { holder: path.slice(0, Math.max(dot, 0)), field: path.slice(dot + 1) }
}

/** Its targets are kinds of the table (test/policy/kinds.test.ts holds it so). */
function targetKinds(target: Reference['target']): ToolHiveKind[] {
  return ('kind' in target ? [target.kind] : target.allowed) as ToolHiveKind[]
}

function targetKind(target: Reference['target'], holder: JsonObject): ToolHiveKind | undefined {
  if ('kind' in target) return target.kind as ToolHiveKind
  const kind = Object.hasOwn(holder, target.kindFrom) ? holder[target.kindFrom] : undefined
  return typeof kind === 'string' && target.allowed.includes(kind)
    ? (kind as ToolHiveKind)
    : undefined
}
