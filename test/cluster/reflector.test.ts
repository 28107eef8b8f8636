import t from 'tap'
import { DEFAULT_BACKOFF, backoffDelay } from '../../src/cluster/reflector.ts'

t.test('backoff doubles from the initial delay and is capped', async (t) => {
  const policy = { initialMs: 100, maxMs: 1_000 }
  const middle = () => 0.5 // no jitter
  t.same(
    [1, 2, 3, 4, 5, 10, 100].map((failures) => backoffDelay(failures, policy, middle)),
    [100, 200, 400, 800, 1_000, 1_000, 1_000],
  )
})

t.test('backoff jitter stays within ±20 %', async (t) => {
  t.equal(
    backoffDelay(1, { initialMs: 1_000, maxMs: 1_000 }, () => 0),
    800,
  )
  t.equal(
    backoffDelay(1, { initialMs: 1_000, maxMs: 1_000 }, () => 1),
    1_200,
  )
})

t.test('the default policy retries quickly and never waits more than 12 s', async (t) => {
  t.ok(backoffDelay(1, DEFAULT_BACKOFF) <= 300)
  t.ok(backoffDelay(1_000, DEFAULT_BACKOFF) <= 12_000)
})
