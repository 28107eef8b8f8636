/**
 * Time as the leader elector sees it. Decisions use a monotonic clock; the wall clock only fills
 * the Lease record's timestamps. Tests substitute a clock they move by hand, so every timer the
 * elector sets (retries, the renewal deadline, request deadlines) goes through this interface.
 */

import { setTimeout as sleep } from 'node:timers/promises'

export interface ElectionClock {
  /** Monotonic milliseconds: every decision is measured on this. */
  now(): number
  /** Epoch milliseconds, only for the record's timestamps, which people and other tools read. */
  wallNow(): number
  /** Resolves once `now()` has moved on by `ms`, or at once when `signal` aborts; never rejects. */
  sleep(ms: number, signal: AbortSignal): Promise<void>
}

export const systemClock: ElectionClock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  sleep: (ms, signal) => sleep(Math.max(0, ms), undefined, { signal }).catch(() => undefined),
}

/**
 * A signal for one bounded piece of work: aborts when any of `parents` does or when `clock`
 * reaches `deadline`. `dispose()` drops the timer and the listeners once the work is over.
 */
export function boundedSignal(
  clock: ElectionClock,
  deadline: number,
  parents: readonly AbortSignal[],
): { readonly signal: AbortSignal; readonly dispose: () => void } {
  const controller = new AbortController()
  const timer = new AbortController()
  const abort = (reason: unknown) => {
    if (!controller.signal.aborted) controller.abort(reason)
  }
  const onParentAbort = (event: Event) => {
    abort((event.target as AbortSignal).reason)
  }
  const dispose = () => {
    timer.abort()
    for (const parent of parents) parent.removeEventListener('abort', onParentAbort)
  }
  for (const parent of parents) {
    if (parent.aborted) abort(parent.reason)
    else parent.addEventListener('abort', onParentAbort, { once: true })
  }
  // KubeApi reports a TimeoutError as "no answer before the deadline".
  const expire = () => {
    abort(new DOMException('deadline reached', 'TimeoutError'))
  }
  const left = deadline - clock.now()
  if (left <= 0) expire()
  else
    void clock.sleep(left, timer.signal).then(() => {
      if (!timer.signal.aborted) expire()
    })
  return { signal: controller.signal, dispose }
}
