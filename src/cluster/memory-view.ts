/** An in-memory ClusterView over plain objects (CLI, embedded default, unit tests). */

import { groupOf } from '../policy/kube.ts'
import type { KubeObject } from '../policy/kube.ts'
import { TOOLHIVE_GROUP, isToolHiveKind } from '../policy/kinds.ts'
import { webhookConfigRefName } from '../policy/webhook-config-ref.ts'
import { keyString } from './view.ts'
import type { ClusterView, ObjectKey, ViewKind } from './view.ts'

export class MemoryView implements ClusterView {
  readonly #objects = new Map<string, KubeObject>()
  /** `namespace/configName` → MCPServer names, kept in step with #objects. */
  readonly #webhookConfigRefs = new Map<string, Set<string>>()

  constructor(objects: Iterable<KubeObject> = []) {
    for (const object of objects) this.put(object)
  }

  /** Stores (or replaces) an object; returns false for objects a view does not hold. */
  put(object: KubeObject): boolean {
    const key = objectKey(object)
    if (!key) return false
    this.delete(key)
    this.#objects.set(keyString(key), object)
    const ref = webhookConfigRefOf(key, object)
    if (ref !== undefined) {
      const index = `${key.namespace}/${ref}`
      let names = this.#webhookConfigRefs.get(index)
      if (!names) this.#webhookConfigRefs.set(index, (names = new Set()))
      names.add(key.name)
    }
    return true
  }

  delete(key: ObjectKey): void {
    const previous = this.#objects.get(keyString(key))
    if (!previous) return
    this.#objects.delete(keyString(key))
    const ref = webhookConfigRefOf(key, previous)
    if (ref !== undefined) this.#webhookConfigRefs.get(`${key.namespace}/${ref}`)?.delete(key.name)
  }

  /** The keys of every held object of `kind`. */
  keysOf(kind: ViewKind): ObjectKey[] {
    const keys: ObjectKey[] = []
    for (const object of this.#objects.values()) {
      const key = object.kind === kind ? objectKey(object) : undefined
      if (key) keys.push(key)
    }
    return keys
  }

  get size(): number {
    return this.#objects.size
  }

  get(key: ObjectKey): Promise<KubeObject | undefined> {
    return Promise.resolve(this.#objects.get(keyString(key)))
  }

  serversReferencingWebhookConfig(namespace: string, configName: string): Promise<string[]> {
    const names = this.#webhookConfigRefs.get(`${namespace}/${configName}`)
    return Promise.resolve(names ? [...names].sort() : [])
  }

  isSynced(): boolean {
    return true
  }
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

function webhookConfigRefOf(key: ObjectKey, object: KubeObject): string | undefined {
  return key.kind === 'MCPServer' ? webhookConfigRefName(object) : undefined
}
