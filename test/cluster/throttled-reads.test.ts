/**
 * A 429 is waited out, as the reflector waits (at least the Retry-After asked for, at most a
 * minute, at least the backoff), a bounded number of times; anything else fails at once; a
 * signal ends a wait.
 */

import t from 'tap'
import { KubeApiError } from '../../src/cluster/kube-api.ts'
import type { KubeApi } from '../../src/cluster/kube-api.ts'
import { RETRY_AFTER_MAX_MS } from '../../src/cluster/reflector.ts'
import {
  MAX_THROTTLED_RETRIES,
  throttledWaitMs,
  waitingOutThrottling,
} from '../../src/cluster/throttled-reads.ts'

const FAST = { initialMs: 1, maxMs: 2 }

/** A GET that answers each call with the next of `answers` (the last one for ever). */
function scripted(answers: readonly (Error | Record<string, unknown>)[]) {
  const calls: string[] = []
  const api: Pick<KubeApi, 'get'> = {
    get: async (path) => {
      const answer = answers[Math.min(calls.length, answers.length - 1)]
      calls.push(path)
      if (answer instanceof Error) throw answer
      return answer
    },
  }
  return { api, calls }
}

const throttled = (retryAfterSeconds?: number) =>
  new KubeApiError('GET /p: 429 too many requests', 429, retryAfterSeconds)

t.test('a 429 then an answer: waited, then the answer', async (t) => {
  const { api, calls } = scripted([throttled(), throttled(), { kind: 'List' }])
  const waits: number[] = []
  const reads = waitingOutThrottling(api, { backoff: FAST, onWait: (_e, ms) => waits.push(ms) })
  t.same(await reads.get('/p', {}), { kind: 'List' })
  t.equal(calls.length, 3)
  t.equal(waits.length, 2)
})

t.test('the Retry-After asked for is waited, not less', async (t) => {
  const { api } = scripted([throttled(1), { kind: 'List' }])
  const started = Date.now()
  await waitingOutThrottling(api, { backoff: FAST }).get('/p', {})
  t.ok(Date.now() - started >= 1_000, 'waited the second asked for')
})

t.test('a 429 for ever: given up after the retries, saying so', async (t) => {
  const { api, calls } = scripted([throttled()])
  await t.rejects(waitingOutThrottling(api, { backoff: FAST }).get('/p', {}), {
    name: 'KubeApiError',
    status: 429,
    message: `GET /p: 429 too many requests (still throttled after ${MAX_THROTTLED_RETRIES} retries)`,
  })
  t.equal(calls.length, MAX_THROTTLED_RETRIES + 1, 'the first request and 10 retries')
  t.equal(MAX_THROTTLED_RETRIES, 10, "client-go's request retries")
})

t.test('any other failure is not retried', async (t) => {
  const refused = new KubeApiError('GET /p: 403 forbidden', 403)
  const { api, calls } = scripted([refused, { kind: 'List' }])
  await t.rejects(waitingOutThrottling(api, { backoff: FAST }).get('/p', {}), refused)
  t.equal(calls.length, 1)
})

t.test('a signal ends the wait: the 429 is the error', async (t) => {
  const { api, calls } = scripted([throttled(30), { kind: 'List' }])
  const deadline = AbortSignal.timeout(100)
  const started = Date.now()
  await t.rejects(waitingOutThrottling(api).get('/p', {}, deadline), {
    name: 'KubeApiError',
    status: 429,
  })
  t.ok(Date.now() - started < 5_000, 'not the 30 s asked for')
  t.equal(calls.length, 1)
})

t.test('each wait: at least the backoff and the Retry-After, at most a minute', async (t) => {
  const half = () => 0.5 // no jitter
  const backoff = { initialMs: 250, maxMs: 10_000 }
  t.equal(throttledWaitMs(1, throttled(), backoff, half), 250, 'no Retry-After: the backoff')
  t.equal(throttledWaitMs(4, throttled(), backoff, half), 2_000, 'doubling')
  t.equal(throttledWaitMs(1, throttled(5), backoff, half), 5_000, 'the Retry-After asked for')
  t.equal(throttledWaitMs(9, throttled(1), backoff, half), 10_000, 'the backoff when longer')
  t.equal(
    throttledWaitMs(1, throttled(86_400), backoff, half),
    RETRY_AFTER_MAX_MS,
    'a day asked for: a minute',
  )
})
