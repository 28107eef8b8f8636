import t from 'tap'
import { backoffDelay } from '../../src/cluster/backoff.ts'

t.test('initial × 2^(failures-1), capped; 0 before any failure', async (t) => {
  const backoff = { initialMs: 100, maxMs: 60_000 }
  const cases: [failures: number, delay: number][] = [
    [0, 0],
    [1, 100],
    [2, 200],
    [3, 400],
    [10, 51_200],
    [11, 60_000],
    [12, 60_000],
    [5_000, 60_000],
    [Number.NaN, 0],
    [-1, 0],
  ]
  for (const [failures, delay] of cases)
    t.equal(backoffDelay(failures, backoff), delay, `${failures}`)
  t.equal(backoffDelay(3, { initialMs: 5, maxMs: 5 }), 5, 'initial equal to max')
  t.equal(backoffDelay(1, { initialMs: 0, maxMs: 10 }), 0, 'zero initial')
})

t.test('no jitter draws nothing', async (t) => {
  const random = () => {
    t.fail('random was called')
    return 0
  }
  t.equal(backoffDelay(2, { initialMs: 100, maxMs: 1_000 }, 0, random), 200)
})

t.test('a middle draw leaves the capped doubling as it is', async (t) => {
  const policy = { initialMs: 100, maxMs: 1_000 }
  const middle = () => 0.5
  t.same(
    [1, 2, 3, 4, 5, 10, 100].map((failures) => backoffDelay(failures, policy, 0.2, middle)),
    [100, 200, 400, 800, 1_000, 1_000, 1_000],
  )
})

t.test('jitter stays within ±jitter', async (t) => {
  const policy = { initialMs: 1_000, maxMs: 1_000 }
  t.equal(
    backoffDelay(1, policy, 0.2, () => 0),
    800,
  )
  t.equal(Math.round(backoffDelay(1, policy, 0.2, () => 1)), 1_200)
})
