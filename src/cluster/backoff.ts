/**
 * Capped exponential backoff for retrying against the API server, shared by the reflector (which
 * jitters it, so replicas that lost the API server together do not all relist at once) and the
 * reconciler's key queue (which does not, like client-go's per-item exponential rate limiter).
 */

export interface Backoff {
  readonly initialMs: number
  readonly maxMs: number
}

/**
 * The wait before the retry that follows `failures` consecutive failures (0 for none):
 * `initialMs × 2^(failures-1)`, at most `maxMs`, then scaled by a factor drawn from
 * [1 − jitter, 1 + jitter) (`jitter` 0.2 is ±20 %; with 0, the default, nothing is drawn).
 */
export function backoffDelay(
  failures: number,
  backoff: Backoff,
  jitter = 0,
  random = Math.random,
): number {
  if (!(failures >= 1)) return 0
  // 2 ** n overflows to Infinity for huge n, which the cap turns back into maxMs.
  const base = Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failures - 1))
  return jitter === 0 ? base : base * (1 - jitter + 2 * jitter * random())
}
