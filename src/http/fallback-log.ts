/**
 * The log of slow-API-server fallbacks (docs/enforcement.md#a-slow-api-server): seen, not noisy. A
 * loaded API server makes them come in bursts of hundreds, one per operator write; a line each
 * would bury everything else at the moment someone reads the log. So the first is said at once and
 * the rest counted: one line at most every interval, with how many came since the last.
 */

import type { Logger } from 'pino'

/** At most one line per this long. */
export const FALLBACK_LOG_INTERVAL_MS = 10_000

export const FALLBACK_LOG_MESSAGE =
  'live reads missed their deadline: operator writes admitted without the freshness proof'

export interface FallbackLog {
  /** One fallback, of a proxy owned by `kind`. */
  record(kind: string): void
  /** Says what is still counted (at shutdown) and stops the timer. */
  flush(): void
}

export function fallbackLog(
  logger: Logger,
  intervalMs: number = FALLBACK_LOG_INTERVAL_MS,
): FallbackLog {
  let pending = new Map<string, number>()
  let timer: NodeJS.Timeout | undefined
  const say = () => {
    if (pending.size === 0) return false
    const kinds = Object.fromEntries(pending)
    const fallbacks = [...pending.values()].reduce((sum, n) => sum + n, 0)
    pending = new Map()
    logger.info({ fallbacks, kinds, intervalSeconds: intervalMs / 1000 }, FALLBACK_LOG_MESSAGE)
    return true
  }
  // Each line opens a quiet window; the window's end says what came during it and opens the next,
  // until one ends with nothing to say.
  const open = () => {
    timer = setTimeout(() => {
      timer = undefined
      if (say()) open()
    }, intervalMs)
    timer.unref()
  }
  return {
    record(kind) {
      pending.set(kind, (pending.get(kind) ?? 0) + 1)
      if (timer !== undefined) return
      say()
      open()
    },
    flush() {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      say()
    },
  }
}
