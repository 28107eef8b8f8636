/**
 * Reads that wait out a 429, for a command that reads a cluster once (`audit`): the API server
 * answers 429 while its watch cache initializes (right after a CRD is created, after a restart)
 * and when API priority and fairness sheds load, and asks to be asked again later. The service's
 * reflector waits as long as it runs; a command waits as client-go's requests wait (up to 10
 * retries), each wait as the reflector's: at least the `Retry-After` asked for, capped at
 * RETRY_AFTER_MAX_MS, and at least the backoff (250 ms doubling to 10 s, ±20 %), so a server that
 * asks for no wait is not asked again at once. In all, at most ten minutes of waiting for one
 * request (10 waits of at most a minute), then the 429 is the error. Documented in docs/cli.md
 * (Auditing a cluster).
 */

import { setTimeout as sleep } from 'node:timers/promises'
import { backoffDelay } from './backoff.ts'
import type { Backoff } from './backoff.ts'
import { KubeApiError } from './kube-api.ts'
import type { KubeApi } from './kube-api.ts'
import { BACKOFF_JITTER, DEFAULT_BACKOFF, RETRY_AFTER_MAX_MS } from './reflector.ts'

/** client-go's default for a request (rest.Request's maxRetries). */
export const MAX_THROTTLED_RETRIES = 10

export interface ThrottleOptions {
  /** Retries of one request after a 429; MAX_THROTTLED_RETRIES unless a test says otherwise. */
  readonly maxRetries?: number
  /** The least wait before each retry; the reflector's DEFAULT_BACKOFF unless a test says otherwise. */
  readonly backoff?: Backoff
  /** Told of each wait before it starts (how long, and the 429 that asked for it). */
  readonly onWait?: (error: KubeApiError, waitMs: number) => void
}

/** The wait before retry number `retry` (from 1) after `error`, a 429. */
export function throttledWaitMs(
  retry: number,
  error: KubeApiError,
  backoff: Backoff = DEFAULT_BACKOFF,
  random = Math.random,
): number {
  const backoffMs = backoffDelay(retry, backoff, BACKOFF_JITTER, random)
  const askedMs = Math.min((error.retryAfterSeconds ?? 0) * 1000, RETRY_AFTER_MAX_MS)
  return Math.round(Math.max(backoffMs, askedMs))
}

/**
 * `api`'s GETs, each retried after a 429 as said above; the last 429 (its message saying how many
 * retries it outlasted) once they run out. `signal` ends a wait as it ends a read: the 429 is
 * then the error, and the caller knows from its signal why.
 */
export function waitingOutThrottling(
  api: Pick<KubeApi, 'get'>,
  options: ThrottleOptions = {},
): Pick<KubeApi, 'get'> {
  const maxRetries = options.maxRetries ?? MAX_THROTTLED_RETRIES
  const backoff = options.backoff ?? DEFAULT_BACKOFF
  return {
    async get(path, query, signal) {
      for (let retry = 1; ; retry++) {
        try {
          return await api.get(path, query, signal)
        } catch (error) {
          if (!(error instanceof KubeApiError) || error.status !== 429) throw error
          if (retry > maxRetries)
            throw new KubeApiError(
              `${error.message} (still throttled after ${maxRetries} retries)`,
              429,
              error.retryAfterSeconds,
            )
          const waitMs = throttledWaitMs(retry, error, backoff)
          options.onWait?.(error, waitMs)
          await sleep(waitMs, undefined, { signal }).catch(() => {
            throw error
          })
        }
      }
    },
  }
}
