/**
 * Keeps one resource's objects in a store by list-then-watch, the way client-go's reflector does:
 * list every page, then watch from the list's resourceVersion; resume the watch where it ended;
 * relist on 410 Gone; after any other failure retry with capped, jittered exponential backoff, for
 * as long as it runs. The cache keeps serving what it has while the API server is away.
 *
 * A 429 is the API server asking to wait, not a failure: its watch cache answers so while it
 * initializes (right after a CRD is created, after an API server restart), and API priority and
 * fairness when it sheds load. Like client-go, the reflector waits (at least the Retry-After asked
 * for) and tries again without reporting it as an error.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { KubeObject } from '../policy/kube/object.ts'
import { backoffDelay } from './backoff.ts'
import type { Backoff } from './backoff.ts'
import { KubeApiError, retryAfterOf } from './kube-api.ts'
import type { KubeApi, WatchEvent } from './kube-api.ts'
import { apiVersionOf, resourcePath } from './resources.ts'
import type { ApiResource } from './resources.ts'

/**
 * Where a reflector puts what it sees. The store decides what it keeps: every object the reflector
 * receives passes through `keep` first (list items as each page arrives), and the other methods
 * get only what `keep` returned. So a list holds only kept objects until it ends, and each page's
 * untrimmed objects are garbage as soon as the page is read.
 */
export interface ReflectorStore {
  /** The form of an object the store holds (e.g. trimmed). Must not modify `object`. */
  keep(object: KubeObject): KubeObject
  /** Replaces every object of the resource by `objects` (after a complete list). */
  replace(objects: readonly KubeObject[]): void
  upsert(object: KubeObject): void
  remove(object: KubeObject): void
}

export interface ReflectorOptions {
  readonly pageSize?: number
  /** Server-side watch length; the server ends the watch then and it is resumed at once. */
  readonly watchSeconds?: number
  readonly backoff?: Backoff
  /** Called after each failure, before the backoff wait (for metrics). */
  readonly onError?: (error: unknown) => void
  /** Called when the API server asks to wait (429), which is not a failure, before the wait. */
  readonly onThrottled?: (error: KubeApiError) => void
  /** Called once, when the first complete list has been stored. */
  readonly onSynced?: () => void
}

/** Where a list goes on after a page: its continue token (none after the last) and version. */
interface ListPosition {
  readonly continueToken: string | undefined
  readonly resourceVersion: string
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 250, maxMs: 10_000 }
/** Each wait is spread by ±20 % (then rounded to whole milliseconds). */
export const BACKOFF_JITTER = 0.2
/** The longest Retry-After honoured: a server asking for more is asked again after this. */
export const RETRY_AFTER_MAX_MS = 60_000

export class Reflector {
  readonly #api: KubeApi
  readonly #resource: ApiResource
  /** Computed once: list items and watch objects all get this very string. */
  readonly #apiVersion: string
  readonly #store: ReflectorStore
  readonly #logger: Logger
  readonly #options: Required<Omit<ReflectorOptions, 'onError' | 'onThrottled' | 'onSynced'>>
  readonly #onError: (error: unknown) => void
  readonly #onThrottled: (error: KubeApiError) => void
  readonly #onSynced: () => void
  readonly #abort = new AbortController()
  #resourceVersion = ''
  #synced = false
  #running: Promise<void> | undefined

  constructor(
    api: KubeApi,
    resource: ApiResource,
    store: ReflectorStore,
    logger: Logger,
    options: ReflectorOptions = {},
  ) {
    this.#api = api
    this.#resource = resource
    this.#apiVersion = apiVersionOf(resource)
    this.#store = store
    this.#logger = logger.child({ resource: resource.plural })
    this.#options = {
      pageSize: options.pageSize ?? 500,
      watchSeconds: options.watchSeconds ?? 300,
      backoff: options.backoff ?? DEFAULT_BACKOFF,
    }
    this.#onError = options.onError ?? (() => undefined)
    this.#onThrottled = options.onThrottled ?? (() => undefined)
    this.#onSynced = options.onSynced ?? (() => undefined)
  }

  /** True once the first complete list has been stored. */
  get synced(): boolean {
    return this.#synced
  }

  start(): void {
    this.#running ??= this.#run()
  }

  async stop(): Promise<void> {
    this.#abort.abort()
    await this.#running
  }

  async #run(): Promise<void> {
    let failures = 0
    while (!this.#stopped()) {
      try {
        if (this.#resourceVersion === '') {
          const stored = await this.#list()
          // Here, not in #list: the list's pages are unreachable by now, so whatever onSynced
          // does (a compacting collection, in serve) can free them.
          if (!this.#synced) this.#markSynced(stored)
        }
        await this.#watch()
        failures = 0
      } catch (error) {
        if (this.#stopped()) return
        if (error instanceof KubeApiError && error.status === 410) {
          this.#logger.info('watch expired (410 Gone): relisting')
          this.#resourceVersion = ''
          continue
        }
        failures++
        const backoffMs = backoffDelay(failures, this.#options.backoff, BACKOFF_JITTER)
        if (error instanceof KubeApiError && error.status === 429) {
          this.#onThrottled(error)
          const askedMs = Math.min((error.retryAfterSeconds ?? 0) * 1000, RETRY_AFTER_MAX_MS)
          const delayMs = Math.round(Math.max(backoffMs, askedMs))
          this.#logger.info(
            { reason: error.message, retryInMs: delayMs },
            'the API server asks to wait (429); retrying',
          )
          await this.#wait(delayMs)
          continue
        }
        this.#onError(error)
        const delayMs = Math.round(backoffMs)
        this.#logger.warn(
          { err: error, failures, retryInMs: delayMs },
          'list/watch failed; retrying',
        )
        await this.#wait(delayMs)
      }
    }
  }

  /** Sleeps `ms`, or less when stopped. */
  async #wait(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.#abort.signal }).catch(() => undefined)
  }

  #stopped(): boolean {
    return this.#abort.signal.aborted
  }

  #markSynced(objects: number): void {
    this.#synced = true
    this.#logger.info({ objects }, 'synced')
    this.#onSynced()
  }

  /**
   * Lists every page and replaces the store's objects; returns how many it stored. Only kept
   * objects outlive their page; the store is replaced once, and only when every page came.
   */
  async #list(): Promise<number> {
    const kept: KubeObject[] = []
    let next: ListPosition = { continueToken: undefined, resourceVersion: '' }
    do next = await this.#listPage(next.continueToken, kept)
    while (next.continueToken !== undefined)
    this.#store.replace(kept)
    this.#resourceVersion = next.resourceVersion
    return kept.length
  }

  /**
   * Reads one page and appends what the store keeps of it to `kept`. A method of its own so that
   * the page (its items, untrimmed) is unreachable once it returns, not while the next one loads.
   */
  async #listPage(continueToken: string | undefined, kept: KubeObject[]): Promise<ListPosition> {
    // stop() ends a list under way too: a stalled page must not hold shutdown.
    const page = await this.#api.get(
      resourcePath(this.#resource),
      { limit: this.#options.pageSize, continue: continueToken },
      this.#abort.signal,
    )
    if (!page)
      throw new KubeApiError(`list ${this.#resource.plural}: the resource is not served (404)`, 404)
    const metadata = (page.metadata ?? {}) as { resourceVersion?: string; continue?: string }
    const items = Array.isArray(page.items) ? (page.items as KubeObject[]) : []
    for (const item of items) kept.push(this.#store.keep(this.#typed(item)))
    return {
      resourceVersion: metadata.resourceVersion ?? '',
      continueToken: metadata.continue === '' ? undefined : metadata.continue,
    }
  }

  async #watch(): Promise<void> {
    await this.#api.watch(
      resourcePath(this.#resource),
      {
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: this.#options.watchSeconds,
      },
      (event) => {
        this.#apply(event)
      },
      // Bookmarks arrive about once a minute; a silent stream beyond that is a dead connection.
      { signal: this.#abort.signal, idleTimeoutMs: (this.#options.watchSeconds + 90) * 1000 },
    )
  }

  #apply(event: WatchEvent): void {
    if (event.type === 'ERROR') {
      const status = event.object as { code?: unknown; message?: unknown }
      const code = typeof status.code === 'number' ? status.code : 0
      throw new KubeApiError(
        `watch ${this.#resource.plural}: ${String(status.message)}`,
        code,
        retryAfterOf(status),
      )
    }
    const object = this.#typed(event.object)
    // Read before `keep`, which may drop it.
    const version = (object.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion
    if (typeof version === 'string' && version !== '') this.#resourceVersion = version
    if (event.type === 'ADDED' || event.type === 'MODIFIED')
      this.#store.upsert(this.#store.keep(object))
    else if (event.type === 'DELETED') this.#store.remove(this.#store.keep(object))
  }

  /** List items carry no apiVersion/kind; the store needs both. */
  #typed(object: KubeObject): KubeObject {
    return { ...object, apiVersion: this.#apiVersion, kind: this.#resource.kind }
  }
}
