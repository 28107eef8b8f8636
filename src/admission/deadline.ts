/**
 * The deadline of one admission request's live reads. AbortSignal.timeout would do, but its
 * timer cannot be cancelled: every review would leave one that fires seconds after the reads
 * are done and builds a DOMException (stack trace included) for a signal nobody listens to any
 * more, about 3 % of a proxy Deployment review's CPU in the one-writer profile.
 */

/** How long the live reads of one admission request may take: well inside the webhook's 5 s. */
export const LIVE_READ_DEADLINE_MS = 2_000

/** The reason given once the work settled; one object, so no stack is captured per review. */
const SETTLED = new DOMException('the work under this deadline has settled', 'AbortError')

/**
 * Runs `work` with a signal that aborts with a TimeoutError (as AbortSignal.timeout's does, which
 * KubeApi reports as "no answer before the deadline") after `ms`. Once the work settles the timer
 * goes and the signal aborts: a read left running (its sibling failed first) ends then, not later.
 */
export async function withDeadline<T>(
  work: (signal: AbortSignal) => Promise<T>,
  ms: number = LIVE_READ_DEADLINE_MS,
): Promise<T> {
  const controller = new AbortController()
  const timer = setTimeout(() => {
    controller.abort(new DOMException('The operation timed out.', 'TimeoutError'))
  }, ms)
  try {
    return await work(controller.signal)
  } finally {
    clearTimeout(timer)
    controller.abort(SETTLED)
  }
}
