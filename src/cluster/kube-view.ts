/**
 * The ClusterView of a real cluster: reflectors keep trimmed copies of the ToolHive objects in
 * memory; a cache miss, a read that must be current (DESIGN §4.2), and every ConfigMap or
 * Deployment (never cached) go to the API server.
 */

import type { Logger } from 'pino'
import type { KubeObject } from '../policy/kube/object.ts'
import type { KubeApi } from './kube-api.ts'
import { webhookConfigRefName } from '../policy/webhook-config-ref.ts'
import { MemoryView, objectKey } from './memory-view.ts'
import { Reflector } from './reflector.ts'
import type { ReflectorOptions, ReflectorStore } from './reflector.ts'
import { LIVE_ONLY_RESOURCES, VIEW_RESOURCES, resourcePath } from './resources.ts'
import type { ViewResource } from './resources.ts'
import { trimForView } from './trim.ts'
import { ClusterReadError } from './view.ts'
import type { ClusterView, ObjectKey, ReadOptions } from './view.ts'

interface KubeViewOptions {
  readonly api: KubeApi
  readonly logger: Logger
  readonly resources?: readonly ViewResource[]
  readonly reflector?: ReflectorOptions
  /**
   * Called once, when every resource has been listed: synchronously with `isSynced()` turning
   * true, so it runs before any readiness check can see the view synced.
   */
  readonly onSynced?: () => void
}

export class KubeView implements ClusterView {
  readonly #api: KubeApi
  readonly #cache = new MemoryView()
  readonly #resources: ReadonlyMap<string, ViewResource>
  readonly #reflectors: Reflector[]
  readonly #listeners = new Set<(key: ObjectKey) => void>()

  constructor(options: KubeViewOptions) {
    const resources = options.resources ?? VIEW_RESOURCES
    this.#api = options.api
    this.#resources = new Map(
      [...resources, ...LIVE_ONLY_RESOURCES].map((resource) => [resource.kind, resource]),
    )
    const logger = options.logger.child({ component: 'cluster-view' })
    const reflectorOptions: ReflectorOptions = {
      ...options.reflector,
      onSynced: () => {
        options.reflector?.onSynced?.()
        if (this.isSynced()) options.onSynced?.()
      },
    }
    this.#reflectors = resources.map(
      (resource) =>
        new Reflector(options.api, resource, this.#storeFor(resource), logger, reflectorOptions),
    )
  }

  /** Starts every list/watch; `isSynced()` turns true once all have listed. */
  start(): void {
    for (const reflector of this.#reflectors) reflector.start()
  }

  async stop(): Promise<void> {
    await Promise.all(this.#reflectors.map((reflector) => reflector.stop()))
    this.#api.close()
  }

  isSynced(): boolean {
    return this.#reflectors.every((reflector) => reflector.synced)
  }

  /** The cached copy alone, never a live read (for tests and the reconciler). */
  cached(key: ObjectKey): Promise<KubeObject | undefined> {
    return this.#cache.get(key)
  }

  /**
   * The cached object, or the API server's when `live` or on a miss (unless `cacheOnly`); a failed
   * read throws ClusterReadError.
   */
  async get(key: ObjectKey, options: ReadOptions = {}): Promise<KubeObject | undefined> {
    if (!options.live) {
      const cached = await this.#cache.get(key)
      if (cached || options.cacheOnly) return cached
    }
    const resource = this.#resources.get(key.kind)
    if (!resource) return undefined
    try {
      const object = await this.#api.get(resourcePath(resource, key), {}, options.signal)
      return object ? trimForView(key.kind, { ...object, kind: key.kind }) : undefined
    } catch (error) {
      // Named for people, as kubectl does (`Kind namespace/name`), not by the index key.
      throw new ClusterReadError(`${key.kind} ${key.namespace}/${key.name}`, error)
    }
  }

  /** The keys of every cached object of `kind`. */
  keysOf(kind: ObjectKey['kind']): ObjectKey[] {
    return this.#cache.keysOf(kind)
  }

  /** Calls `listener` with the key of every object the cache adds, changes or drops; returns an unsubscribe. */
  onChange(listener: (key: ObjectKey) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #notify(key: ObjectKey | undefined): void {
    if (key) for (const listener of this.#listeners) listener(key)
  }

  serversReferencingWebhookConfig(
    namespace: string,
    configName: string,
    options: ReadOptions = {},
  ): Promise<string[]> {
    if (!options.live) return this.#cache.serversReferencingWebhookConfig(namespace, configName)
    return this.#listReferencingServers(namespace, configName, options.signal)
  }

  /** Lists the namespace's MCPServers from the API server, a page at a time. */
  async #listReferencingServers(
    namespace: string,
    configName: string,
    signal: AbortSignal | undefined,
  ): Promise<string[]> {
    const resource = this.#resources.get('MCPServer')
    if (!resource) return []
    const path = resourcePath(resource, { namespace })
    const names: string[] = []
    let next: string | undefined
    try {
      do {
        const page = await this.#api.get(path, { limit: 500, continue: next }, signal)
        const items = Array.isArray(page?.['items']) ? (page['items'] as KubeObject[]) : []
        for (const item of items) {
          const name = item.metadata?.name
          if (typeof name === 'string' && webhookConfigRefName(item) === configName)
            names.push(name)
        }
        const metadata = page?.['metadata'] as { continue?: unknown } | undefined
        next =
          typeof metadata?.continue === 'string' && metadata.continue !== ''
            ? metadata.continue
            : undefined
      } while (next !== undefined)
    } catch (error) {
      throw new ClusterReadError(`the MCPServers of namespace ${namespace}`, error)
    }
    return names.sort()
  }

  #storeFor(resource: ViewResource): ReflectorStore {
    const cache = this.#cache
    // Objects arrive here already kept (trimmed): the reflector applies `keep` as each arrives.
    const upsert = (object: KubeObject): ObjectKey | undefined => {
      cache.put(object)
      const key = objectKey(object)
      this.#notify(key)
      return key
    }
    const remove = (key: ObjectKey | undefined) => {
      if (!key) return
      cache.delete(key)
      this.#notify(key)
    }
    return {
      keep: (object) => trimForView(resource.kind, object),
      replace(objects) {
        // Names by namespace, the objects' own strings: a relist holds the old view and the new
        // list already, and a joined key string per object came on top (issue 27).
        const listed = new Map<string, Set<string>>()
        for (const object of objects) {
          const key = upsert(object)
          if (!key) continue
          let names = listed.get(key.namespace)
          if (!names) listed.set(key.namespace, (names = new Set()))
          names.add(key.name)
        }
        for (const key of cache.keysOf(resource.kind)) {
          if (!listed.get(key.namespace)?.has(key.name)) remove(key)
        }
      },
      upsert(object) {
        upsert(object)
      },
      remove(object) {
        remove(objectKey(object))
      },
    }
  }
}
