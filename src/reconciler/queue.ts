/**
 * A rate-limited key queue in the manner of client-go's workqueue: keys are deduplicated, a key is
 * never reconciled twice at once (one added mid-run runs once more afterwards), different keys
 * run concurrently, and failures retry with per-key capped exponential backoff.
 */

import { backoffDelay } from '../cluster/backoff.ts'
import type { Backoff } from '../cluster/backoff.ts'

/** What a run came to: `retry` runs the key again after a backoff; any other result settles it. */
export interface RunOutcome {
  readonly result: string
}

/** What the queue reports of a run: its outcome, or `threw` (also for a run that returned none). */
export type RunReport<O extends RunOutcome> =
  O | { readonly result: 'threw'; readonly error: unknown }

/** Reconciles one key. The signal aborts when the queue stops, so slow calls can give up early. */
type Reconcile<O extends RunOutcome> = (key: string, signal: AbortSignal) => Promise<O>

interface KeyQueueOptions<O extends RunOutcome> {
  /** Keys reconciled at the same time (default 2). */
  readonly concurrency?: number
  /** Delay before retry n is `initialMs × 2^(n-1)`, at most `maxMs` (default 100 ms → 60 s). */
  readonly backoff?: Backoff
  /**
   * Called after every run with its report; `ms` is how long it ran; `retryInMs` is the backoff
   * when a retry was scheduled for later.
   */
  readonly onResult?: (key: string, report: RunReport<O>, ms: number, retryInMs?: number) => void
  /** Schedules and cancels retries (default: the real timers); tests pass their own clock. */
  readonly timers?: RetryTimers
}

/** The two timer calls the queue makes, so a test can fire or inspect retries itself. */
export interface RetryTimers {
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

const REAL_TIMERS: RetryTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => {
    clearTimeout(handle as NodeJS.Timeout)
  },
}

const DEFAULT_BACKOFF: Backoff = { initialMs: 100, maxMs: 60_000 }
const DEFAULT_CONCURRENCY = 2
/** setTimeout's largest delay; a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647

export class KeyQueue<O extends RunOutcome = RunOutcome> {
  readonly #concurrency: number
  readonly #backoff: Backoff
  readonly #onResult: KeyQueueOptions<O>['onResult']
  readonly #timers: RetryTimers
  /** Keys ready to run, in arrival order; `#queued` mirrors it for deduplication. */
  readonly #ready: string[] = []
  readonly #queued = new Set<string>()
  readonly #running = new Set<string>()
  /** Running keys added again meanwhile: each runs once more when its current run ends. */
  readonly #dirty = new Set<string>()
  readonly #failures = new Map<string, number>()
  readonly #retryTimers = new Map<string, unknown>()
  readonly #idleWaiters: (() => void)[] = []
  readonly #abort = new AbortController()
  #reconcile: Reconcile<O> | undefined
  #stopped = false

  constructor(options: KeyQueueOptions<O> = {}) {
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
    const backoff = options.backoff ?? DEFAULT_BACKOFF
    if (!Number.isSafeInteger(concurrency) || concurrency < 1)
      throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`)
    if (!(backoff.initialMs >= 0) || !(backoff.maxMs >= backoff.initialMs))
      throw new RangeError(
        `backoff needs 0 ≤ initialMs ≤ maxMs, got ${backoff.initialMs} and ${backoff.maxMs}`,
      )
    this.#concurrency = concurrency
    this.#backoff = backoff
    this.#onResult = options.onResult
    this.#timers = options.timers ?? REAL_TIMERS
  }

  /** Keys waiting to run now (not those running or waiting out a backoff), like workqueue Len. */
  get depth(): number {
    return this.#ready.length
  }

  /** Queues `key` unless already queued; a pending retry of it is superseded and runs now. */
  add(key: string): void {
    if (this.#stopped) return
    if (this.#retryTimers.has(key)) {
      this.#timers.clearTimeout(this.#retryTimers.get(key))
      this.#retryTimers.delete(key)
    }
    this.#enqueue(key)
    this.#pump()
  }

  /** Starts running keys, including those added before. Call once. */
  start(reconcile: Reconcile<O>): void {
    if (this.#reconcile !== undefined || this.#stopped)
      throw new Error('KeyQueue.start: already started or stopped')
    this.#reconcile = reconcile
    this.#pump()
  }

  /**
   * Drops queued keys and pending retries, aborts the signal given to running reconciles, and
   * resolves once they have ended. Nothing runs afterwards.
   */
  async stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true
      for (const timer of this.#retryTimers.values()) this.#timers.clearTimeout(timer)
      this.#retryTimers.clear()
      this.#ready.length = 0
      this.#queued.clear()
      this.#dirty.clear()
      this.#abort.abort()
    }
    await this.whenIdle()
  }

  /** Resolves once nothing is queued or running; retries still waiting out a backoff don't count. */
  whenIdle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  #isIdle(): boolean {
    // Before start, queued keys never run, yet they are not done either: not idle.
    return this.#running.size === 0 && (this.#ready.length === 0 || this.#stopped)
  }

  #enqueue(key: string): void {
    if (this.#running.has(key)) this.#dirty.add(key)
    else if (!this.#queued.has(key)) {
      this.#queued.add(key)
      this.#ready.push(key)
    }
  }

  #pump(): void {
    const reconcile = this.#reconcile
    if (reconcile === undefined) return
    while (!this.#stopped && this.#running.size < this.#concurrency) {
      const key = this.#ready.shift()
      if (key === undefined) break
      this.#queued.delete(key)
      this.#running.add(key)
      void this.#run(key, reconcile)
    }
    if (this.#isIdle()) for (const resolve of this.#idleWaiters.splice(0)) resolve()
  }

  async #run(key: string, reconcile: Reconcile<O>): Promise<void> {
    const started = performance.now()
    const report = await reconcile(key, this.#abort.signal).then(
      (outcome): RunReport<O> =>
        // A run that returned no outcome must not lose the key: it counts as having thrown.
        typeof (outcome as Partial<O> | undefined)?.result === 'string'
          ? outcome
          : { result: 'threw', error: new TypeError('reconcile returned no outcome') },
      (error: unknown) => ({ result: 'threw' as const, error }),
    )
    const ms = performance.now() - started
    this.#running.delete(key)
    const settled = report.result !== 'retry' && report.result !== 'threw'
    const retryInMs = this.#settle(key, settled)
    try {
      this.#onResult?.(key, report, ms, retryInMs)
    } catch {
      // An observer (logging, metrics) must not wedge the queue; the outcome is already settled.
    }
    this.#pump()
  }

  /** Records the outcome and requeues as needed; returns the backoff when a retry was scheduled. */
  #settle(key: string, done: boolean): number | undefined {
    if (done) this.#failures.delete(key)
    else this.#failures.set(key, (this.#failures.get(key) ?? 0) + 1)
    if (this.#stopped) return undefined
    if (this.#dirty.delete(key)) {
      // Added while running: that explicit add supersedes any backoff (failures are kept).
      this.#enqueue(key)
      return undefined
    }
    if (done) return undefined
    const delay = backoffDelay(this.#failures.get(key) ?? 1, this.#backoff)
    const timer = this.#timers.setTimeout(
      () => {
        this.#retryTimers.delete(key)
        if (this.#stopped) return
        this.#enqueue(key)
        this.#pump()
      },
      Math.min(delay, MAX_TIMER_MS),
    )
    this.#retryTimers.set(key, timer)
    return delay
  }
}
