/**
 * Leader election on a `coordination.k8s.io/v1` Lease with client-go's `leaderelection` semantics.
 *
 * Safety rests on clocks running at the same rate, never on them agreeing. A candidate does not
 * read the holder's timestamps: it notes, on its own monotonic clock, when it first saw the record
 * as it now is, and takes the Lease over only once that record has stood unchanged for the lease
 * duration. The leader steps down at `renewDeadline` after the start of its last successful
 * renewal, a timer enforcing it and every request it sends aborting then; followers saw that
 * renewal after it started and wait the longer `leaseDuration` from then, so the old leader has
 * stopped before anyone else can start. The price, as in client-go: a candidate that has just
 * started waits a full lease duration before replacing a holder that vanished without releasing.
 *
 * On graceful shutdown the leader releases the Lease (holder cleared, one-second duration) so a
 * successor takes over at its next retry. Every replica runs this; only the leader writes status.
 */

import type { Logger } from 'pino'
import type { KubeApi } from '../cluster/kube-api.ts'
import { boundedSignal, systemClock } from './election-clock.ts'
import type { ElectionClock } from './election-clock.ts'
import { kubeLeaseStore, microTime } from './lease-store.ts'
import type { Lease, LeaseSpec, LeaseStore, LeaseWrite } from './lease-store.ts'

export interface LeaderElectionConfig {
  readonly namespace: string
  readonly name: string
  readonly identity: string
  /** How long followers wait, after last seeing the record change, before taking over. */
  readonly leaseDurationMs: number
  /** How long after the start of its last successful renewal the leader keeps leading. */
  readonly renewDeadlineMs: number
  /** The pause between attempts, to acquire or to renew. */
  readonly retryPeriodMs: number
}

export const LEASE_NAME = 'mcp-admission-reconciler'

/** controller-runtime's defaults. */
export const DEFAULT_TIMING = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const

/** A release that gets no answer gives up after this long (or `renewDeadline`, if shorter). */
const RELEASE_TIMEOUT_MS = 5_000

interface LeaderCallbacks {
  /** Called when this replica becomes the leader; the signal aborts when leadership ends. */
  readonly onStartedLeading: (signal: AbortSignal) => void
  /** Called when leadership ends, after the signal has aborted. */
  readonly onStoppedLeading: () => void
}

interface LeaderElectorOptions {
  readonly clock?: ElectionClock
  /** Where the Lease lives; by default the cluster, through the elector's KubeApi. */
  readonly leases?: LeaseStore
}

/** The record fields whose change shows that the holder (or anyone) is still writing. */
function sameRecord(a: LeaseSpec, b: LeaseSpec): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  )
}

function checkConfig(config: LeaderElectionConfig): void {
  for (const field of ['namespace', 'name', 'identity'] as const)
    if (config[field] === '') throw new Error(`leader election: ${field} must not be empty`)
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = config
  for (const [field, value] of Object.entries({ leaseDurationMs, renewDeadlineMs, retryPeriodMs }))
    if (!(Number.isFinite(value) && value > 0))
      throw new RangeError(`leader election: ${field} must be a positive number, got ${value}`)
  if (!(leaseDurationMs > renewDeadlineMs))
    throw new RangeError(
      `leader election: leaseDurationMs (${leaseDurationMs}) must exceed renewDeadlineMs ` +
        `(${renewDeadlineMs}), or a follower could take over before the leader has stepped down`,
    )
  if (!(renewDeadlineMs > retryPeriodMs))
    throw new RangeError(
      `leader election: renewDeadlineMs (${renewDeadlineMs}) must exceed retryPeriodMs ` +
        `(${retryPeriodMs}), or a failed renewal is never retried before the deadline`,
    )
}

interface Term {
  readonly controller: AbortController
  /** Monotonic start of the last successful attempt: the deadline counts from here. */
  renewedAt: number
}

type Attempt =
  | { readonly outcome: 'held'; readonly lease: Lease }
  /** The record names another holder (for a follower: one whose lease has not expired). */
  | { readonly outcome: 'taken'; readonly holder: string }
  /** A lost race, a refusal, no answer: nothing is known to have changed. */
  | { readonly outcome: 'not-held' }

const NOT_HELD: Attempt = { outcome: 'not-held' }

export class LeaderElector {
  readonly #config: LeaderElectionConfig
  readonly #leaseSeconds: number
  readonly #logger: Logger
  readonly #clock: ElectionClock
  readonly #leases: LeaseStore
  readonly #stopped = new AbortController()
  #term: Term | undefined
  /** The Lease as we last wrote it: renewed by the fast path, and put back cleared on release. */
  #written: Lease | undefined
  /** The last record read, and when (monotonic) it was first seen as it is. */
  #observed: { readonly spec: LeaseSpec; readonly at: number } | undefined
  #running: Promise<void> | undefined

  constructor(
    api: Pick<KubeApi, 'get' | 'write'>,
    config: LeaderElectionConfig,
    logger: Logger,
    options: LeaderElectorOptions = {},
  ) {
    checkConfig(config)
    this.#config = config
    // Rounded up: followers must never wait less than the leader assumes they do.
    this.#leaseSeconds = Math.ceil(config.leaseDurationMs / 1000)
    this.#logger = logger.child({
      component: 'leader-election',
      lease: `${config.namespace}/${config.name}`,
    })
    this.#clock = options.clock ?? systemClock
    this.#leases = options.leases ?? kubeLeaseStore(api, config.namespace, config.name)
  }

  /** Checked against the clock as well, in case the deadline timer runs late. */
  get isLeader(): boolean {
    const term = this.#term
    return term !== undefined && this.#clock.now() < this.#deadlineOf(term)
  }

  start(callbacks: LeaderCallbacks): void {
    this.#running ??= this.#run(callbacks)
  }

  /** Stops campaigning, abandoning any request in flight; a leader releases the Lease first. */
  async stop(): Promise<void> {
    this.#stopped.abort()
    await this.#running
  }

  async #run(callbacks: LeaderCallbacks): Promise<void> {
    while (!this.#stopped.signal.aborted) {
      await this.#attempt(callbacks)
      await this.#clock.sleep(this.#config.retryPeriodMs, this.#stopped.signal)
    }
    const term = this.#endIfOverdue(callbacks)
    if (!term) return
    this.#endTerm(term, callbacks, 'shutting down')
    await this.#release()
  }

  /** One try to acquire the Lease, or to renew it while leading. */
  async #attempt(callbacks: LeaderCallbacks): Promise<void> {
    const started = this.#clock.now()
    const term = this.#endIfOverdue(callbacks)
    // A follower's attempt gets the same bound a renewal has, so no request outlives its use.
    const deadline = (term?.renewedAt ?? started) + this.#config.renewDeadlineMs
    const parents = term ? [this.#stopped.signal, term.controller.signal] : [this.#stopped.signal]
    const bounded = boundedSignal(this.#clock, deadline, parents)
    const attempt = await this.#tryAcquireOrRenew(bounded.signal, term !== undefined)
      .catch((error: unknown) => {
        // Requests cut short by stop() are expected, not worth a warning.
        if (!this.#stopped.signal.aborted) this.#logger.warn({ err: error }, 'lease update failed')
        return NOT_HELD
      })
      .finally(bounded.dispose)
    const inTime = this.#clock.now() < deadline
    if (attempt.outcome === 'held') {
      this.#written = attempt.lease
      if (!inTime) return
      if (!term) {
        if (!this.#stopped.signal.aborted) this.#startTerm(callbacks, started)
      } else if (this.#term === term) term.renewedAt = started
    } else if (attempt.outcome === 'taken' && term) {
      this.#endTerm(term, callbacks, `the lease is held by ${attempt.holder}`)
    }
  }

  async #tryAcquireOrRenew(signal: AbortSignal, leading: boolean): Promise<Attempt> {
    const { identity } = this.#config
    const written = this.#written
    if (leading && written) {
      // Fast path: the object we wrote last is still current unless someone wrote since.
      const write = await this.#leases.update(this.#claim(written), signal)
      if (write.outcome !== 'conflict') return this.#settle(write)
    }
    const current = await this.#leases.get(signal)
    if (!current) return this.#settle(await this.#leases.create(this.#claim(undefined), signal))
    this.#observe(current.spec)
    const holder = current.spec.holderIdentity ?? ''
    // A leader that finds another name in the record has lost it, expired or not.
    if (holder !== '' && holder !== identity && (leading || this.#heldByOther(current.spec)))
      return { outcome: 'taken', holder }
    return this.#settle(await this.#leases.update(this.#claim(current), signal))
  }

  /** Valid while the record has stood unchanged, by our clock, for less than its duration. */
  #heldByOther(spec: LeaseSpec): boolean {
    const observedAt = this.#observed?.at ?? this.#clock.now()
    return observedAt + (spec.leaseDurationSeconds ?? 0) * 1000 > this.#clock.now()
  }

  #observe(spec: LeaseSpec): void {
    if (!this.#observed || !sameRecord(this.#observed.spec, spec))
      this.#observed = { spec, at: this.#clock.now() }
  }

  #settle(write: LeaseWrite): Attempt {
    switch (write.outcome) {
      case 'written':
        this.#observe(write.lease.spec)
        return { outcome: 'held', lease: write.lease }
      case 'conflict':
        return NOT_HELD
      case 'refused':
        this.#logger.warn({ status: write.status, message: write.message }, 'lease write refused')
        return NOT_HELD
    }
  }

  /** `lease` (a new one when undefined) with us as holder, renewed now. */
  #claim(lease: Lease | undefined): Lease {
    const { namespace, name, identity } = this.#config
    const now = microTime(this.#clock.wallNow())
    const spec = lease?.spec ?? {}
    const ours = spec.holderIdentity === identity
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      ...lease,
      // The resourceVersion read makes the write conditional: a competing write fails with 409.
      metadata: lease?.metadata ?? { name, namespace },
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: this.#leaseSeconds,
        acquireTime: ours ? (spec.acquireTime ?? now) : now,
        renewTime: now,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (ours || !lease ? 0 : 1),
      },
    }
  }

  #deadlineOf(term: Term): number {
    return term.renewedAt + this.#config.renewDeadlineMs
  }

  /** The current term, unless its deadline has passed unnoticed (then it ends here). */
  #endIfOverdue(callbacks: LeaderCallbacks): Term | undefined {
    const term = this.#term
    if (!term || this.#clock.now() < this.#deadlineOf(term)) return term
    this.#endTerm(term, callbacks, 'renewal deadline passed')
    return undefined
  }

  #startTerm(callbacks: LeaderCallbacks, renewedAt: number): void {
    const term: Term = { controller: new AbortController(), renewedAt }
    this.#term = term
    this.#logger.info({ identity: this.#config.identity }, 'became leader')
    void this.#enforceDeadline(term, callbacks)
    callbacks.onStartedLeading(term.controller.signal)
  }

  /** Ends the term the moment its deadline passes, whether or not a renewal is in flight. */
  async #enforceDeadline(term: Term, callbacks: LeaderCallbacks): Promise<void> {
    while (!term.controller.signal.aborted) {
      // Re-read after every wake: a renewal in between has moved the deadline on.
      const left = this.#deadlineOf(term) - this.#clock.now()
      if (left <= 0) {
        this.#endTerm(term, callbacks, 'renewal deadline passed')
        return
      }
      await this.#clock.sleep(left, term.controller.signal)
    }
  }

  #endTerm(term: Term, callbacks: LeaderCallbacks, why: string): void {
    if (this.#term !== term) return
    this.#term = undefined
    // Before anything else: work in flight under this leadership is abandoned at once.
    term.controller.abort(new Error(`leadership ended: ${why}`))
    this.#logger.warn({ why }, 'stopped leading')
    callbacks.onStoppedLeading()
  }

  /**
   * Clears the holder so the next candidate acquires at once instead of waiting for expiry. A
   * conflict means a renewal cut short by stop() landed after all: the Lease is read again and,
   * if still ours, released from there.
   */
  async #release(): Promise<void> {
    const limitMs = Math.min(this.#config.renewDeadlineMs, RELEASE_TIMEOUT_MS)
    const bounded = boundedSignal(this.#clock, this.#clock.now() + limitMs, [])
    const attempt = async (): Promise<LeaseWrite | { outcome: 'not-ours' }> => {
      const first =
        this.#written && (await this.#leases.update(this.#released(this.#written), bounded.signal))
      if (first && first.outcome !== 'conflict') return first
      const current = await this.#leases.get(bounded.signal)
      if (current?.spec.holderIdentity !== this.#config.identity) return { outcome: 'not-ours' }
      return this.#leases.update(this.#released(current), bounded.signal)
    }
    const write = await attempt()
      .catch((error: unknown) => ({ outcome: 'failed' as const, err: error }))
      .finally(bounded.dispose)
    if (write.outcome === 'written') this.#logger.info('lease released')
    else if (write.outcome !== 'not-ours')
      this.#logger.warn(write, 'could not release the lease; it expires by itself')
  }

  /** `lease` with no holder and a one-second duration, as client-go releases it. */
  #released(lease: Lease): Lease {
    const now = microTime(this.#clock.wallNow())
    return {
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: '',
        leaseDurationSeconds: 1,
        renewTime: now,
        acquireTime: now,
      },
    }
  }
}
