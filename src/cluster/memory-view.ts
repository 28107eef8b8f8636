/** An in-memory ClusterView over plain objects (CLI, embedded default, unit tests). */

import { groupOf } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { TOOLHIVE_GROUP, isToolHiveKind } from '../policy/kinds.ts'
import type { ToolHiveKind } from '../policy/kinds.ts'
import { referencesIn, referrersIn, sortReferrers } from '../policy/references.ts'
import type { Referrer } from '../policy/references.ts'
import type { ClusterView, ObjectKey, ToolHiveKey, ViewKind } from './view.ts'

export class MemoryView implements ClusterView {
  /**
   * kind → namespace → name → object. Nested rather than keyed by `keyString`: the names are the
   * objects' own strings, where a joined key is one more string per object (with 100,000
   * MCPServers, some 25 MiB of keys: issue 27).
   */
  readonly #objects = new Map<ViewKind, Map<string, Map<string, KubeObject>>>()
  #size = 0
  /**
   * The reverse index of the kind table's references, kept in step with #objects: `namespace/
   * kind/name` of a target → the kinds and names of the objects that name it (their own strings).
   */
  readonly #referrers = new Map<string, Map<ViewKind, Set<string>>>()

  readonly #serves: (kind: ToolHiveKind) => boolean
  /** The namespaces given as Namespace objects with a `deletionTimestamp`. */
  readonly #terminating = new Set<string>()

  /**
   * `serves` says which ToolHive kinds the simulated cluster serves (`check` with CRDs: those they
   * define); by default every kind.
   */
  constructor(
    objects: Iterable<KubeObject> = [],
    options: { readonly serves?: (kind: ToolHiveKind) => boolean } = {},
  ) {
    this.#serves = options.serves ?? (() => true)
    for (const object of objects) this.put(object)
  }

  /** Stores (or replaces) an object; returns false for objects a view does not hold. */
  put(object: KubeObject): boolean {
    if (isNamespace(object)) return this.#putNamespace(object)
    const key = objectKey(object)
    if (!key) return false
    this.delete(key)
    let namespaces = this.#objects.get(key.kind)
    if (!namespaces)
      this.#objects.set(key.kind, (namespaces = new Map<string, Map<string, KubeObject>>()))
    let names = namespaces.get(key.namespace)
    if (!names) namespaces.set(key.namespace, (names = new Map<string, KubeObject>()))
    names.set(key.name, object)
    this.#size++
    for (const target of referencesIn(object)) {
      const index = indexKey(key.namespace, target)
      let byKind = this.#referrers.get(index)
      if (!byKind) this.#referrers.set(index, (byKind = new Map<ViewKind, Set<string>>()))
      let referring = byKind.get(key.kind)
      if (!referring) byKind.set(key.kind, (referring = new Set()))
      referring.add(key.name)
    }
    return true
  }

  delete(key: ObjectKey): void {
    const namespaces = this.#objects.get(key.kind)
    const names = namespaces?.get(key.namespace)
    const previous = names?.get(key.name)
    if (!namespaces || !names || !previous) return
    names.delete(key.name)
    // A namespace emptied by deletes is dropped, so churn does not leave maps behind.
    if (names.size === 0) namespaces.delete(key.namespace)
    this.#size--
    for (const target of referencesIn(previous)) {
      const index = indexKey(key.namespace, target)
      const byKind = this.#referrers.get(index)
      const referring = byKind?.get(key.kind)
      referring?.delete(key.name)
      // Emptied entries are dropped, so churn does not leave maps behind.
      if (referring?.size === 0) byKind?.delete(key.kind)
      if (byKind?.size === 0) this.#referrers.delete(index)
    }
  }

  /** The keys of every held object of `kind`. */
  keysOf(kind: ViewKind): ObjectKey[] {
    const keys: ObjectKey[] = []
    for (const [namespace, names] of this.#objects.get(kind) ?? []) {
      for (const name of names.keys()) keys.push({ kind, namespace, name })
    }
    return keys
  }

  get size(): number {
    return this.#size
  }

  get(key: ObjectKey): Promise<KubeObject | undefined> {
    return Promise.resolve(this.#objects.get(key.kind)?.get(key.namespace)?.get(key.name))
  }

  referrersOf(target: ToolHiveKey): Promise<Referrer[]> {
    const referrers: Referrer[] = []
    for (const [kind, names] of this.#referrers.get(indexKey(target.namespace, target)) ?? []) {
      for (const name of names) {
        const object = this.#objects.get(kind)?.get(target.namespace)?.get(name)
        if (object) referrers.push(...referrersIn(object, target))
      }
    }
    return Promise.resolve(sortReferrers(referrers))
  }

  serves(kind: ToolHiveKind): boolean {
    return this.#serves(kind)
  }

  isTerminating(namespace: string): boolean {
    return this.#terminating.has(namespace)
  }

  #putNamespace(object: KubeObject): boolean {
    const { name, deletionTimestamp } = object.metadata ?? {}
    if (typeof name !== 'string') return false
    if (deletionTimestamp === undefined || deletionTimestamp === null)
      this.#terminating.delete(name)
    else this.#terminating.add(name)
    return true
  }

  isSynced(): boolean {
    return true
  }

  isReady(): boolean {
    return true
  }
}

function isNamespace(object: KubeObject): boolean {
  return object.kind === 'Namespace' && object.apiVersion === 'v1'
}

/** The view key of an object, or undefined when it is not a kind views hold. */
export function objectKey(object: KubeObject, defaultNamespace = 'default'): ObjectKey | undefined {
  const { kind, apiVersion } = object
  const held =
    kind === 'ConfigMap'
      ? apiVersion === 'v1'
      : kind === 'Deployment'
        ? apiVersion === 'apps/v1'
        : isToolHiveKind(kind) && groupOf(apiVersion) === TOOLHIVE_GROUP
  if (!held) return undefined
  const { name, namespace } = object.metadata ?? {}
  if (typeof name !== 'string' || name === '') return undefined
  const ns = typeof namespace === 'string' && namespace !== '' ? namespace : defaultNamespace
  return { kind: kind as ViewKind, namespace: ns, name }
}

function indexKey(namespace: string, target: { readonly kind: string; readonly name: string }) {
  return `${namespace}/${target.kind}/${target.name}`
}
