/**
 * The ClusterView of a real cluster: reflectors keep trimmed copies of the ToolHive objects in
 * memory; a cache miss, a read that must be current
 * (docs/enforcement.md#read-live-not-from-the-cache), and every ConfigMap or Deployment (never
 * cached) go to the API server. Which ToolHive kinds are listed and watched, and at which version,
 * follows API discovery while it runs (`kind-discovery.ts`): a kind the cluster does not serve is
 * neither watched nor waited for. Namespaces are watched too, for whether each is terminating
 * (`namespace-cache.ts`), and never waited for.
 */

import type { Logger } from 'pino'
import type { KindTable, ToolHiveKind } from '../policy/kinds.ts'
import { isToolHiveKind, toolHiveKind } from '../policy/kinds.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { errorMessage } from '../policy/messages/render.ts'
import { referrersIn, referringKinds, sortReferrers } from '../policy/references.ts'
import type { Referrer } from '../policy/references.ts'
import { KindDiscovery } from './kind-discovery.ts'
import { isDeadline, isRefusal } from './kube-api.ts'
import type { KubeApi } from './kube-api.ts'
import { MemoryView, objectKey } from './memory-view.ts'
import { NamespaceCache } from './namespace-cache.ts'
import { Reflector } from './reflector.ts'
import type { ReflectorOptions, ReflectorStore } from './reflector.ts'
import { LIVE_ONLY_RESOURCES, apiVersionOf, resourcePath } from './resources.ts'
import type { ViewResource } from './resources.ts'
import { sameResource, servedKindsOf } from './served-kinds.ts'
import type { ServedKinds, ServedResource } from './served-kinds.ts'
import { trimForView } from './trim.ts'
import { ClusterReadError } from './view.ts'
import type { ClusterView, ObjectKey, ReadOptions, ToolHiveKey, ViewKind } from './view.ts'

/**
 * A served kind whose first list has not completed by then stops holding readiness: the view
 * serves with its reads of that kind going to the API server (a list RBAC forbids, a watch that
 * keeps failing, a list too large for the API server's timeout must not keep every replica
 * unready, and so every fail-closed write refused, for as long as it lasts).
 */
export const SYNC_GRACE_MS = 30_000

interface KubeViewOptions {
  readonly api: KubeApi
  readonly logger: Logger
  /** The kind table, for what readiness waits for (tests pass their own). */
  readonly kinds?: KindTable
  /** Fixed resources (tests, benchmarks); without them the served kinds are discovered. */
  readonly resources?: readonly ViewResource[]
  readonly reflector?: ReflectorOptions
  readonly discoveryIntervalMs?: number
  readonly syncGraceMs?: number
  /**
   * Every list or watch failure, by kind (for metrics; `Namespace` for the namespaces'); a 429
   * asks to wait and is not one.
   */
  readonly onWatchError?: (kind: ToolHiveKind | 'Namespace', error: unknown) => void
  /**
   * Called once, when every served resource has first been listed: synchronously with
   * `isSynced()` turning true, so it runs before any readiness check can see the view synced.
   */
  readonly onSynced?: () => void
}

/** One served kind's list/watch and what readiness knows of it. */
interface KindWatch {
  readonly resource: ServedResource
  readonly reflector: Reflector
  /** The cache already held this kind, synced, at another version (a moved kind). */
  readonly inheritedSync: boolean
  /** Why readiness no longer waits for this kind's first list. */
  degraded: string | undefined
  lastError: unknown
  graceTimer: NodeJS.Timeout | undefined
  retired: boolean
}

export class KubeView implements ClusterView {
  readonly #api: KubeApi
  readonly #logger: Logger
  readonly #options: KubeViewOptions
  readonly #cache = new MemoryView()
  readonly #discovery: KindDiscovery | undefined
  readonly #watches = new Map<ToolHiveKind, KindWatch>()
  readonly #stopping = new Set<Promise<void>>()
  readonly #listeners = new Set<(key: ObjectKey) => void>()
  readonly #namespaces: NamespaceCache
  #served: ServedKinds = new Map()
  #started = false
  #syncedOnce = false

  constructor(options: KubeViewOptions) {
    this.#api = options.api
    this.#options = options
    this.#logger = options.logger.child({ component: 'cluster-view' })
    this.#namespaces = new NamespaceCache(options.api, this.#logger, {
      ...(options.reflector ? { reflector: options.reflector } : {}),
      onError: (error) => options.onWatchError?.('Namespace', error),
    })
    this.#discovery = options.resources
      ? undefined
      : new KindDiscovery(options.api, this.#logger, {
          ...(options.discoveryIntervalMs === undefined
            ? {}
            : { intervalMs: options.discoveryIntervalMs }),
          onChange: (served) => {
            this.#follow(served)
          },
        })
  }

  /**
   * Starts discovery (or the fixed resources' list/watches) and the namespaces' list/watch;
   * `isSynced()` turns true once every served kind has listed.
   */
  start(): void {
    if (this.#started) return
    this.#started = true
    this.#namespaces.start()
    if (this.#discovery) this.#discovery.start()
    else this.#follow(servedKindsOf(this.#options.resources ?? []))
  }

  async stop(): Promise<void> {
    this.#started = false
    await this.#discovery?.stop()
    for (const kind of [...this.#watches.keys()]) this.#retire(kind)
    await Promise.all([...this.#stopping, this.#namespaces.stop()])
    this.#api.close()
  }

  /** Whether the cluster serves `kind` now, as far as discovery knows. */
  serves(kind: ToolHiveKind): boolean {
    return this.#served.has(kind)
  }

  /** The resource `kind` is served at now, or undefined when it is not served. */
  resourceOf(kind: ToolHiveKind): ViewResource | undefined {
    return this.#served.get(kind)
  }

  /** The served kinds and the version of each (for metrics and tests). */
  servedKinds(): ServedKinds {
    return this.#served
  }

  /** The served kinds readiness no longer waits for, with why. */
  degradedKinds(): ReadonlyMap<ToolHiveKind, string> {
    const degraded = new Map<ToolHiveKind, string>()
    for (const [kind, watch] of this.#watches)
      if (watch.degraded !== undefined && !watch.reflector.synced)
        degraded.set(kind, watch.degraded)
    return degraded
  }

  /**
   * Every served kind's cache that readiness waits for has listed (for `kind`: that kind's, false
   * when it is not served). Before discovery has answered once, nothing is known and the view is
   * not synced.
   */
  isSynced(kind?: ToolHiveKind): boolean {
    if (kind !== undefined) return this.#watches.get(kind)?.reflector.synced === true
    return this.#known() && this.#awaited().every((watch) => watch.reflector.synced)
  }

  /**
   * The view can answer now: the served kinds are known, and each one readiness waits for has
   * listed, or held the kind before it moved version, or has been given up on (its reads go to
   * the API server).
   */
  isReady(): boolean {
    return (
      this.#known() &&
      this.#awaited().every(
        (watch) => watch.reflector.synced || watch.inheritedSync || watch.degraded !== undefined,
      )
    )
  }

  /** The watches readiness waits for: their kind's entry says so (the rest are watched all the same). */
  #awaited(): KindWatch[] {
    return [...this.#watches.values()].filter(
      (watch) => toolHiveKind(watch.resource.kind, this.#options.kinds)?.view.readinessWaits,
    )
  }

  #known(): boolean {
    return this.#discovery ? this.#discovery.discovered : this.#started
  }

  /** Starts, restarts and stops list/watches so that exactly the served kinds are watched. */
  #follow(served: ServedKinds): void {
    this.#served = served
    if (!this.#started) return
    for (const [kind, watch] of [...this.#watches]) {
      const now = served.get(kind)
      if (now && sameResource(now, watch.resource)) continue
      const wasSynced = watch.reflector.synced || watch.inheritedSync
      this.#retire(kind)
      if (now) this.#watch(now, wasSynced)
      else this.#forget(kind)
    }
    for (const resource of served.values())
      if (!this.#watches.has(resource.kind)) this.#watch(resource, false)
    this.#checkSynced()
  }

  #watch(resource: ServedResource, inheritedSync: boolean): void {
    const options = this.#options
    const watch: KindWatch = {
      resource,
      inheritedSync,
      degraded: undefined,
      lastError: undefined,
      graceTimer: undefined,
      retired: false,
      reflector: new Reflector(
        this.#api,
        resource,
        this.#storeFor(resource, () => watch.retired),
        this.#logger,
        {
          ...options.reflector,
          onError: (error) => {
            options.reflector?.onError?.(error)
            options.onWatchError?.(resource.kind, error)
            watch.lastError = error
            // Waiting cannot help a refusal: RBAC does not change by itself.
            if (!watch.reflector.synced && isRefusal(error))
              this.#degrade(watch, `the list is refused: ${errorMessage(error)}`)
          },
          // Not a failure, but what a kind that never syncs was last told.
          onThrottled: (error) => {
            options.reflector?.onThrottled?.(error)
            watch.lastError = error
          },
          onSynced: () => {
            options.reflector?.onSynced?.()
            clearTimeout(watch.graceTimer)
            if (watch.degraded !== undefined)
              this.#logger.info(
                { kind: resource.kind },
                'cache synced: reads of this kind are served from it again',
              )
            this.#checkSynced()
          },
        },
      ),
    }
    watch.graceTimer = setTimeout(() => {
      if (!watch.reflector.synced && !watch.retired) {
        const last =
          watch.lastError === undefined
            ? 'the list has not completed'
            : errorMessage(watch.lastError)
        this.#degrade(
          watch,
          `not synced within ${(this.#options.syncGraceMs ?? SYNC_GRACE_MS) / 1000} s: ${last}`,
        )
      }
    }, options.syncGraceMs ?? SYNC_GRACE_MS)
    watch.graceTimer.unref()
    this.#watches.set(resource.kind, watch)
    watch.reflector.start()
  }

  #degrade(watch: KindWatch, why: string): void {
    if (watch.degraded !== undefined) return
    watch.degraded = why
    this.#logger.warn(
      { kind: watch.resource.kind, version: watch.resource.version },
      `serving without a cache of ${watch.resource.kind}: ${why}; its reads go to the API server until its list succeeds`,
    )
  }

  #retire(kind: ToolHiveKind): void {
    const watch = this.#watches.get(kind)
    if (!watch) return
    watch.retired = true
    clearTimeout(watch.graceTimer)
    this.#watches.delete(kind)
    const stopping = watch.reflector.stop().finally(() => this.#stopping.delete(stopping))
    this.#stopping.add(stopping)
  }

  /** A kind no longer served: its objects are gone from the API server, so from the cache too. */
  #forget(kind: ToolHiveKind): void {
    for (const key of this.#cache.keysOf(kind)) {
      this.#cache.delete(key)
      this.#notify(key)
    }
  }

  #checkSynced(): void {
    if (this.#syncedOnce || !this.isSynced()) return
    this.#syncedOnce = true
    this.#options.onSynced?.()
  }

  /**
   * From the namespaces' cache, which readiness does not wait for: only the webhooks that fail
   * closed need a synced view to be ready, and the one that asks this (the delete guard's) fails
   * open. Until namespaces have been listed (or while their list fails) this answers false, and
   * the delete guard looks at the referrers as for any namespace that is not terminating.
   */
  isTerminating(namespace: string): boolean {
    return this.#namespaces.isTerminating(namespace)
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
    let object
    try {
      const resource = await this.#readableResource(key.kind, options.signal)
      if (!resource) return undefined
      object = await this.#api.get(resourcePath(resource, key), {}, options.signal)
    } catch (error) {
      // Named for people, as kubectl does (`Kind namespace/name`), not by the index key.
      throw new ClusterReadError(`${key.kind} ${key.namespace}/${key.name}`, error, {
        deadlineMissed: isDeadline(options.signal),
      })
    }
    return object ? trimForView(key.kind, { ...object, kind: key.kind }) : undefined
  }

  /**
   * Where to read `kind` from the API server; undefined for a ToolHive kind the cluster does not
   * serve, after asking discovery again (its CRD may have appeared since the last round, and an
   * owner missed for that would leave a proxy Deployment unstamped).
   */
  async #readableResource(
    kind: ViewKind,
    signal: AbortSignal | undefined,
  ): Promise<ViewResource | undefined> {
    if (!isToolHiveKind(kind)) return LIVE_ONLY.get(kind)
    if (!this.#served.has(kind)) await this.#discovery?.refresh(signal)
    return this.#served.get(kind)
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

  /**
   * From the cache once every kind that may name `target` has listed; live when asked, or while
   * one has not (readiness does not wait for every cache, and a half-filled one would miss
   * referrers).
   */
  referrersOf(target: ToolHiveKey, options: ReadOptions = {}): Promise<Referrer[]> {
    const cached = referringKinds(target.kind).every(
      (kind) => !this.#served.has(kind) || this.isSynced(kind),
    )
    if (!options.live && cached) return this.#cache.referrersOf(target)
    return this.#listReferrers(target, options.signal)
  }

  /** Lists the namespace's objects of every kind that may name `target`, from the API server. */
  async #listReferrers(target: ToolHiveKey, signal: AbortSignal | undefined): Promise<Referrer[]> {
    const lists = await Promise.all(
      referringKinds(target.kind).map((kind) => this.#listReferrersOfKind(kind, target, signal)),
    )
    return sortReferrers(lists.flat())
  }

  /** One kind's objects in the target's namespace that name it, a page at a time. */
  async #listReferrersOfKind(
    kind: ToolHiveKind,
    target: ToolHiveKey,
    signal: AbortSignal | undefined,
  ): Promise<Referrer[]> {
    const referrers: Referrer[] = []
    let next: string | undefined
    try {
      const resource = await this.#readableResource(kind, signal)
      if (!resource) return []
      const path = resourcePath(resource, { namespace: target.namespace })
      do {
        const page = await this.#api.get(path, { limit: 500, continue: next }, signal)
        const items = Array.isArray(page?.['items']) ? (page['items'] as KubeObject[]) : []
        // List items carry no apiVersion or kind; a reference is read at the version listed.
        const apiVersion = apiVersionOf(resource)
        for (const item of items)
          referrers.push(...referrersIn({ ...item, apiVersion, kind }, target))
        const metadata = page?.['metadata'] as { continue?: unknown } | undefined
        next =
          typeof metadata?.continue === 'string' && metadata.continue !== ''
            ? metadata.continue
            : undefined
      } while (next !== undefined)
    } catch (error) {
      throw new ClusterReadError(`the ${pluralOf(kind)} of namespace ${target.namespace}`, error)
    }
    return referrers
  }

  /** The cache's side of one kind's reflector; nothing lands once `retired()` (kind gone or moved). */
  #storeFor(resource: ViewResource, retired: () => boolean): ReflectorStore {
    const cache = this.#cache
    // Objects arrive here already kept (trimmed): the reflector applies `keep` as each arrives.
    const upsert = (object: KubeObject): ObjectKey | undefined => {
      if (retired()) return undefined
      cache.put(object)
      const key = objectKey(object)
      this.#notify(key)
      return key
    }
    const remove = (key: ObjectKey | undefined) => {
      if (!key || retired()) return
      cache.delete(key)
      this.#notify(key)
    }
    return {
      keep: (object) => trimForView(resource.kind, object),
      replace(objects) {
        if (retired()) return
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

const LIVE_ONLY: ReadonlyMap<ViewKind, ViewResource> = new Map(
  LIVE_ONLY_RESOURCES.map((resource) => [resource.kind, resource]),
)

/** A kind's plural as people write it (`MCPServers`, `MCPRemoteProxies`). */
function pluralOf(kind: string): string {
  return kind.endsWith('y') ? `${kind.slice(0, -1)}ies` : `${kind}s`
}
