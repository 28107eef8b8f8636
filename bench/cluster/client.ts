/**
 * The benchmark's own writes to the API server: the e2e harness's admin client (HTTP/1.1 over
 * keep-alive connections with the admin client certificate), and a bounded pool that runs jobs
 * closed-loop (each writer sends its next request when the last one answered). kubectl
 * per write would measure process start-up, and client-node's object layer costs more CPU than
 * the API server's answer on a two-core machine, so neither is used on the measured path.
 */

import { adminClient } from '../../test/e2e/harness/environment.ts'
import type { ApiAnswer, ApiClient, ControlPlane } from '../../test/e2e/harness/environment.ts'

export type { ApiClient }

/** Every request ends by then: the API server answers writes in milliseconds, lists in seconds. */
const REQUEST_TIMEOUT_MS = 60_000

/** The e2e harness's admin client, with a pool of `maxSockets` and the benchmark's deadline. */
export function apiClient(plane: ControlPlane, maxSockets: number): ApiClient {
  return adminClient(plane, { maxSockets, timeoutMs: REQUEST_TIMEOUT_MS })
}

/** The outcome of one pooled job: its latency and whether the API server accepted it. */
export interface Sample {
  readonly ms: number
  readonly ok: boolean
  /** HTTP status, or 0 for a transport error. */
  readonly status: number
  readonly message?: string
}

/**
 * Runs `job(i)` for i in [0, count) on `concurrency` writers, closed loop, until all are done or
 * `deadlineMs` has passed (then no new job starts). Returns every finished job's sample, in
 * completion order, and the wall time.
 */
export async function runPool(
  count: number,
  concurrency: number,
  deadlineMs: number,
  job: (i: number) => Promise<ApiAnswer>,
): Promise<{ samples: Sample[]; wallMs: number }> {
  const samples: Sample[] = []
  const started = performance.now()
  const stopAt = started + deadlineMs
  let next = 0
  const writer = async (): Promise<void> => {
    while (next < count && performance.now() < stopAt) {
      const i = next++
      const begun = performance.now()
      try {
        const response = await job(i)
        const ok = response.status >= 200 && response.status < 300
        samples.push({
          ms: performance.now() - begun,
          ok,
          status: response.status,
          ...(ok ? {} : { message: statusMessage(response.body) }),
        })
      } catch (error) {
        samples.push({
          ms: performance.now() - begun,
          ok: false,
          status: 0,
          message: error instanceof Error ? error.message : String(error),
        })
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, writer))
  return { samples, wallMs: performance.now() - started }
}

/** The message of a Kubernetes Status body, or the start of any other body. */
function statusMessage(body: string): string {
  try {
    const status = JSON.parse(body) as { message?: unknown }
    if (typeof status.message === 'string') return status.message.slice(0, 600)
  } catch {
    // not JSON
  }
  return body.slice(0, 300)
}

/** Throws with the API server's answer unless it is a 2xx. */
export function must(response: ApiAnswer, what: string): ApiAnswer {
  if (response.status < 200 || response.status >= 300)
    throw new Error(`${what}: HTTP ${response.status}: ${response.body.slice(0, 500)}`)
  return response
}
