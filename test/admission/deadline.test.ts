/** The live reads' deadline: aborts late work with a TimeoutError, leaves no timer behind. */

import t from 'tap'
import { withDeadline } from '../../src/admission/deadline.ts'

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length

t.test('work that settles in time leaves no timer running', async (t) => {
  const before = timers()
  t.equal(await withDeadline(async () => 'read', 60_000), 'read')
  await t.rejects(
    withDeadline(async () => {
      throw new Error('refused')
    }, 60_000),
    { message: 'refused' },
  )
  t.equal(timers(), before, 'both deadlines dropped with their work')
})

t.test('work past the deadline sees its signal abort with a TimeoutError', async (t) => {
  const reason = await withDeadline(
    (signal) =>
      new Promise<unknown>((resolve) => {
        signal.addEventListener(
          'abort',
          () => {
            resolve(signal.reason)
          },
          { once: true },
        )
      }),
    20,
  )
  t.match(reason, { name: 'TimeoutError' })
})

t.test('a read left running when the work settles is ended then', async (t) => {
  let leftover: AbortSignal | undefined
  const failing = withDeadline(async (signal) => {
    leftover = signal
    // A sibling read failed first: Promise.all settles while this signal's read still runs.
    throw new Error('403 forbidden')
  }, 60_000)
  await t.rejects(failing, { message: '403 forbidden' })
  t.equal(leftover?.aborted, true, 'aborted at once, not after the deadline')
})
