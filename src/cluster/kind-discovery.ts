/**
 * Asks the API server, at start and every few seconds after, which ToolHive kinds it serves and at
 * which version, by API discovery (`GET /apis/<group>`, then each version's resource list). Any
 * authenticated client may read discovery (the `system:discovery` role), so this needs no RBAC of
 * its own. A failed round keeps what was known: a kind is only turned off when the API server says
 * it is not served, never because it could not be asked.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { TOOLHIVE_GROUP, TOOLHIVE_KIND_TABLE } from '../policy/kinds.ts'
import { isRecord } from '../policy/kube/object.ts'
import { backoffDelay } from './backoff.ts'
import { KubeApiError } from './kube-api.ts'
import type { KubeApi } from './kube-api.ts'
import { mapBounded } from './map-bounded.ts'
import { DEFAULT_BACKOFF } from './reflector.ts'
import { pathSegment } from './resources.ts'
import {
  describeServedChange,
  discoveryVersions,
  servedChanges,
  servedFromDiscovery,
} from './served-kinds.ts'
import type { ServedChange, ServedKinds } from './served-kinds.ts'

/** Between rounds once discovery has succeeded: a CRD that appears or goes is seen within this. */
export const DISCOVERY_INTERVAL_MS = 10_000
/** A read asked for a kind not known to be served refreshes at most this often (`refresh`). */
const REFRESH_MIN_GAP_MS = 1_000

/**
 * The most versions of the group read at once. client-go reads every group version at once; the
 * ToolHive group has two or three, so this costs a real cluster nothing and holds a hostile list
 * of thousands to a few requests at a time.
 */
export const DISCOVERY_CONCURRENCY = 4

/**
 * The most versions of the group read at all. A CRD lists every version it ever served (the
 * ToolHive CRDs: v1alpha1, v1beta1), and no group has come near this many; past it, discovery is
 * an error rather than thousands of reads.
 */
export const MAX_DISCOVERY_VERSIONS = 100

/**
 * The kinds `GET /apis/toolhive.stacklok.dev[/<version>]` says are served; throws KubeApiError,
 * and an Error for an answer that is not discovery (no `versions` or `resources` list, more than
 * MAX_DISCOVERY_VERSIONS versions, a version that cannot be a path segment): only a 404 says
 * nothing is served, and an answer that cannot be read must not be taken for one. The versions
 * are read DISCOVERY_CONCURRENCY at a time, each as one escaped segment of its path.
 */
export async function discoverServedKinds(
  api: Pick<KubeApi, 'get'>,
  signal?: AbortSignal,
): Promise<ServedKinds> {
  const groupPath = `/apis/${pathSegment(TOOLHIVE_GROUP)}`
  const group = await api.get(groupPath, {}, signal)
  // 404: no CRD of the group is established at all.
  if (group !== undefined) mustList(group, 'versions', groupPath, 'APIGroup')
  const versions = group === undefined ? [] : discoveryVersions(group)
  if (versions.length > MAX_DISCOVERY_VERSIONS)
    throw new Error(
      `${groupPath} lists ${versions.length} versions, more than the ${MAX_DISCOVERY_VERSIONS} read`,
    )
  const lists = await mapBounded(versions, DISCOVERY_CONCURRENCY, async (version) => {
    const path = `${groupPath}/${pathSegment(version)}`
    const list = await api.get(path, {}, signal)
    // 404: the version went between the two reads; it serves nothing.
    if (list !== undefined) mustList(list, 'resources', path, 'APIResourceList')
    return [version, list] as const
  })
  return servedFromDiscovery(versions, new Map(lists))
}

/** Throws unless `body` (a JSON document, maybe not an object) holds a list at `field`. */
function mustList(body: unknown, field: string, path: string, kind: string): void {
  if (isRecord(body) && Array.isArray(body[field])) return
  throw new Error(`${path} answered with something that is not an ${kind} (no ${field} list)`)
}

interface KindDiscoveryOptions {
  readonly intervalMs?: number
  /** Called with the new state and what changed, after every round that changed something. */
  readonly onChange: (served: ServedKinds, changes: readonly ServedChange[]) => void
}

export class KindDiscovery {
  readonly #api: KubeApi
  readonly #logger: Logger
  readonly #intervalMs: number
  readonly #onChange: KindDiscoveryOptions['onChange']
  readonly #abort = new AbortController()
  #served: ServedKinds = new Map()
  #discovered = false
  #failures = 0
  #round: Promise<void> | undefined
  #lastRoundAt = 0
  #running: Promise<void> | undefined

  constructor(api: KubeApi, logger: Logger, options: KindDiscoveryOptions) {
    this.#api = api
    this.#logger = logger
    this.#intervalMs = options.intervalMs ?? DISCOVERY_INTERVAL_MS
    this.#onChange = options.onChange
  }

  /** True once one round has succeeded: until then nothing is known to be served or not. */
  get discovered(): boolean {
    return this.#discovered
  }

  get served(): ServedKinds {
    return this.#served
  }

  start(): void {
    this.#running ??= this.#loop()
  }

  async stop(): Promise<void> {
    this.#abort.abort()
    await this.#running
    await this.#round
  }

  /**
   * One round now, unless one ran within the last second (then that one's result stands); shares a
   * round already under way. For a read that asks for a kind not known to be served: its CRD may
   * have appeared since the last round, and a missed owner would leave a Deployment unstamped.
   * `signal` is the reader's deadline: once it aborts the reader stops waiting (the round goes on)
   * with a KubeApiError, so an admission read still answers in-band within its deadline.
   */
  async refresh(signal?: AbortSignal): Promise<void> {
    if (this.#round === undefined && Date.now() - this.#lastRoundAt < REFRESH_MIN_GAP_MS) return
    const round = this.#discover()
    if (signal === undefined) return round
    const gaveUp = () =>
      new KubeApiError(`GET /apis/${TOOLHIVE_GROUP}: no answer before the deadline`, 0)
    if (signal.aborted) throw gaveUp()
    let onAbort = () => {}
    try {
      await Promise.race([
        round,
        new Promise<never>((_resolve, reject) => {
          onAbort = () => {
            reject(gaveUp())
          }
          signal.addEventListener('abort', onAbort, { once: true })
        }),
      ])
    } finally {
      signal.removeEventListener('abort', onAbort)
    }
  }

  async #loop(): Promise<void> {
    while (!this.#abort.signal.aborted) {
      await this.#discover()
      // Until the first success, retry as the reflectors do: readiness waits for it.
      const delayMs =
        this.#failures > 0 && !this.#discovered
          ? backoffDelay(this.#failures, DEFAULT_BACKOFF)
          : this.#intervalMs
      await sleep(delayMs, undefined, { signal: this.#abort.signal }).catch(() => undefined)
    }
  }

  #discover(): Promise<void> {
    this.#round ??= this.#oneRound().finally(() => {
      this.#round = undefined
      this.#lastRoundAt = Date.now()
    })
    return this.#round
  }

  async #oneRound(): Promise<void> {
    let served: ServedKinds
    try {
      served = await discoverServedKinds(this.#api, this.#abort.signal)
    } catch (error) {
      if (this.#abort.signal.aborted) return
      this.#failures++
      // One line when a streak begins, not one per round.
      if (this.#failures === 1) {
        this.#logger.warn(
          { err: error },
          this.#discovered
            ? 'cannot read API discovery; keeping the kinds known to be served'
            : 'cannot read API discovery; not ready until the served kinds are known',
        )
      }
      return
    }
    if (this.#failures > 0)
      this.#logger.info({ failures: this.#failures }, 'API discovery read again')
    this.#failures = 0
    const first = !this.#discovered
    const changes = servedChanges(this.#served, served)
    this.#served = served
    this.#discovered = true
    if (first) {
      // At start what is off is news (one line each); what is on is one summary line.
      this.#logger.info({ served: versionsOf(served) }, 'ToolHive kinds served by the cluster')
      for (const { kind } of TOOLHIVE_KIND_TABLE) if (!served.has(kind)) this.#warn({ kind })
    } else {
      for (const change of changes) this.#warn(change)
    }
    if (first || changes.length > 0) this.#onChange(served, changes)
  }

  #warn(change: ServedChange): void {
    this.#logger.warn(
      { kind: change.kind, version: change.after?.version ?? null },
      describeServedChange(change),
    )
  }
}

function versionsOf(served: ServedKinds): Record<string, string> {
  return Object.fromEntries([...served].map(([kind, resource]) => [kind, resource.version]))
}
