/**
 * Leader election on a `coordination.k8s.io/v1` Lease, the way client-go's leaderelection does
 * it: acquire when the Lease is free or expired, renew every `retryPeriod`, and stop leading at
 * once when a renewal has not succeeded within `renewDeadline`. On graceful shutdown the Lease
 * is released (holder cleared, one-second duration) so a successor takes over at once.
 *
 * Every replica runs this; only the leader writes status. Admission is served by all.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { KubeApi } from '../cluster/kube-api.ts'

export interface LeaderElectionConfig {
  readonly namespace: string
  readonly name: string
  readonly identity: string
  readonly leaseDurationMs: number
  readonly renewDeadlineMs: number
  readonly retryPeriodMs: number
}

export const LEASE_NAME = 'mcp-admission-reconciler'

/** controller-runtime's defaults. */
export const DEFAULT_TIMING = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const

interface LeaseSpec {
  holderIdentity?: string
  leaseDurationSeconds?: number
  acquireTime?: string
  renewTime?: string
  leaseTransitions?: number
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1'
  kind: 'Lease'
  metadata: { name: string; namespace: string; resourceVersion?: string }
  spec: LeaseSpec
}

export interface LeaderCallbacks {
  /** Called when this replica becomes the leader; the signal aborts when leadership ends. */
  readonly onStartedLeading: (signal: AbortSignal) => void
  readonly onStoppedLeading: () => void
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}

/** Whether a Lease held by someone else has expired by `nowMs` (free when it has no holder). */
export function isLeaseFree(spec: LeaseSpec, identity: string, nowMs: number): boolean {
  if (!spec.holderIdentity) return true
  if (spec.holderIdentity === identity) return true
  const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? '')
  const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000
  return Number.isNaN(renewed) || renewed + durationMs < nowMs
}

export class LeaderElector {
  readonly #api: KubeApi
  readonly #config: LeaderElectionConfig
  readonly #logger: Logger
  readonly #stopped = new AbortController()
  #leading: AbortController | undefined
  #lease: Lease | undefined
  #running: Promise<void> | undefined

  constructor(api: KubeApi, config: LeaderElectionConfig, logger: Logger) {
    this.#api = api
    this.#config = config
    this.#logger = logger.child({
      component: 'leader-election',
      lease: `${config.namespace}/${config.name}`,
    })
  }

  get isLeader(): boolean {
    return this.#leading !== undefined
  }

  start(callbacks: LeaderCallbacks): void {
    this.#running ??= this.#run(callbacks)
  }

  /** Stops campaigning; a leader releases the Lease first. */
  async stop(): Promise<void> {
    this.#stopped.abort()
    await this.#running
  }

  async #run(callbacks: LeaderCallbacks): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs } = this.#config
    let lastRenewal = 0
    while (!this.#stopped.signal.aborted) {
      const held = await this.#tryAcquireOrRenew().catch((error: unknown) => {
        this.#logger.warn({ err: (error as Error).message }, 'lease update failed')
        return false
      })
      const now = Date.now()
      if (held) {
        lastRenewal = now
        if (!this.#leading) {
          this.#leading = new AbortController()
          this.#logger.info({ identity: this.#config.identity }, 'became leader')
          callbacks.onStartedLeading(this.#leading.signal)
        }
      } else if (this.#leading && now - lastRenewal >= renewDeadlineMs) {
        this.#loseLeadership(callbacks, 'renewal deadline passed')
      }
      await sleep(retryPeriodMs, undefined, { signal: this.#stopped.signal }).catch(() => undefined)
    }
    if (this.#leading) {
      this.#loseLeadership(callbacks, 'shutting down')
      await this.#release()
    }
  }

  #loseLeadership(callbacks: LeaderCallbacks, why: string): void {
    this.#logger.warn({ why }, 'stopped leading')
    this.#leading?.abort()
    this.#leading = undefined
    callbacks.onStoppedLeading()
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity, leaseDurationMs } = this.#config
    const path = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`
    const now = Date.now()
    const current = (await this.#api.get(`${path}/${name}`)) as Lease | undefined
    const spec: LeaseSpec = current?.spec ?? {}
    if (current && !isLeaseFree(spec, identity, now)) {
      this.#lease = undefined
      return false
    }
    const takingOver = spec.holderIdentity !== identity
    const desired: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace,
        ...(current?.metadata.resourceVersion
          ? { resourceVersion: current.metadata.resourceVersion }
          : {}),
      },
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
        acquireTime: takingOver ? microTime(now) : (spec.acquireTime ?? microTime(now)),
        renewTime: microTime(now),
        leaseTransitions:
          (spec.leaseTransitions ?? 0) + (takingOver && spec.holderIdentity ? 1 : 0),
      },
    }
    // The resourceVersion makes the write conditional: a competing write fails with 409.
    const result = current
      ? await this.#api.write('PUT', `${path}/${name}`, desired)
      : await this.#api.write('POST', path, desired)
    if (result.status === 200 || result.status === 201) {
      this.#lease = result.body as unknown as Lease
      return true
    }
    if (result.status !== 409)
      this.#logger.warn(
        { status: result.status, message: result.body?.['message'] },
        'lease write refused',
      )
    return false
  }

  /** Clears the holder so the next candidate acquires at once instead of waiting for expiry. */
  async #release(): Promise<void> {
    const lease = this.#lease
    if (!lease) return
    const { namespace, name } = this.#config
    const now = microTime(Date.now())
    const released: Lease = {
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: '',
        leaseDurationSeconds: 1,
        renewTime: now,
        acquireTime: now,
      },
    }
    const result = await this.#api
      .write('PUT', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`, released)
      .catch((error: unknown) => ({ status: 0, body: { message: (error as Error).message } }))
    if (result.status === 200) this.#logger.info('lease released')
    else
      this.#logger.warn(
        { status: result.status },
        'could not release the lease; it expires by itself',
      )
  }
}
