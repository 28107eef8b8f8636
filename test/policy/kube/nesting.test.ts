import t from 'tap'
import { MAX_NESTING, nestsDeeperThan } from '../../../src/policy/kube/nesting.ts'

t.test('depth counts containers; scalars are level 0', async (t) => {
  t.equal(nestsDeeperThan('x', 0), false)
  t.equal(nestsDeeperThan({}, 0), true, 'an object is level 1')
  t.equal(nestsDeeperThan({ a: [{ b: 1 }] }, 3), false)
  t.equal(nestsDeeperThan({ a: [{ b: 1 }] }, 2), true)
  t.equal(nestsDeeperThan([1, [2, [3]], {}], 3), false, 'siblings do not add up')
})

t.test('a million levels are walked without recursion', async (t) => {
  let deep: unknown = null
  for (let i = 0; i < 1_000_000; i++) deep = { a: deep }
  t.equal(nestsDeeperThan(deep), true)
  t.equal(nestsDeeperThan(deep, 2_000_000), false)
})

t.test('a cycle is infinitely deep', async (t) => {
  const loop: Record<string, unknown> = {}
  loop['self'] = { back: loop }
  t.equal(nestsDeeperThan(loop, MAX_NESTING), true)
})
