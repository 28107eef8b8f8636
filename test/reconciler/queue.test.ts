// The key queue is coordinated through promises the tests resolve, and asserts orders and counts,
// never elapsed times, so a loaded machine cannot make it flaky.
import t from 'tap'
import { KeyQueue } from '../../src/reconciler/queue.ts'
import type { RunOutcome, RetryTimers } from '../../src/reconciler/queue.ts'

const DONE: RunOutcome = { result: 'done' }
const RETRY: RunOutcome = { result: 'retry' }

interface Deferred<T = void> {
  readonly promise: Promise<T>
  readonly resolve: (value: T) => void
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

/** Lets every already-queued callback and microtask run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Timers the test fires by hand: `pending` holds the retries scheduled and not cancelled, so a
 * test can check what is waiting without waiting itself.
 */
function manualTimers() {
  interface Timer {
    readonly callback: () => void
    readonly ms: number
  }
  const pending = new Set<Timer>()
  const scheduled: Timer[] = []
  const timers: RetryTimers = {
    setTimeout(callback, ms) {
      const timer = { callback, ms }
      pending.add(timer)
      scheduled.push(timer)
      return timer
    },
    clearTimeout(handle) {
      pending.delete(handle as Timer)
    },
  }
  return { timers, pending, scheduled }
}

/** Counts runs and the most runs of one key (and of all keys) at the same time. */
function tracker() {
  const calls: string[] = []
  const running = new Map<string, number>()
  let total = 0
  const max = { perKey: 0, total: 0 }
  return {
    calls,
    max,
    async around<T>(key: string, body: () => Promise<T>): Promise<T> {
      calls.push(key)
      running.set(key, (running.get(key) ?? 0) + 1)
      total++
      max.perKey = Math.max(max.perKey, running.get(key) ?? 0)
      max.total = Math.max(max.total, total)
      try {
        return await body()
      } finally {
        running.set(key, (running.get(key) ?? 0) - 1)
        total--
      }
    },
  }
}

t.test('options are checked up front', async (t) => {
  t.throws(() => new KeyQueue({ concurrency: 0 }), RangeError)
  t.throws(() => new KeyQueue({ concurrency: 1.5 }), RangeError)
  t.throws(() => new KeyQueue({ backoff: { initialMs: 10, maxMs: 5 } }), RangeError)
  t.throws(() => new KeyQueue({ backoff: { initialMs: -1, maxMs: 5 } }), RangeError)
  t.throws(() => new KeyQueue({ backoff: { initialMs: Number.NaN, maxMs: 5 } }), RangeError)
})

t.test('a key added many times before start runs once', async (t) => {
  const queue = new KeyQueue({ concurrency: 1 })
  const calls: string[] = []
  for (let i = 0; i < 5; i++) queue.add('a')
  t.equal(queue.depth, 1)
  queue.add('b')
  t.equal(queue.depth, 2)
  queue.start(async (key) => {
    calls.push(key)
    return DONE
  })
  await queue.whenIdle()
  t.same(calls, ['a', 'b'])
  t.equal(queue.depth, 0)
  await queue.stop()
})

t.test(
  'a key added during its own run runs once more afterwards, never concurrently',
  async (t) => {
    const track = tracker()
    const release = deferred()
    const firstStarted = deferred()
    const queue = new KeyQueue({ concurrency: 4 })
    queue.start((key) =>
      track.around(key, async () => {
        if (track.calls.length === 1) {
          firstStarted.resolve()
          await release.promise
        }
        return DONE
      }),
    )
    queue.add('a')
    await firstStarted.promise
    for (let i = 0; i < 3; i++) queue.add('a')
    t.equal(queue.depth, 0, 'the running key is marked, not queued')
    await settle()
    t.same(track.calls, ['a'], 'nothing starts while the key runs')
    release.resolve()
    await queue.whenIdle()
    t.same(track.calls, ['a', 'a'], 'three adds during the run collapse into one more run')
    t.equal(track.max.perKey, 1)
    await queue.stop()
  },
)

t.test('different keys run concurrently, up to the limit', async (t) => {
  const track = tracker()
  const gates = new Map<string, Deferred>()
  const started = new Map<string, Deferred>()
  for (const key of ['a', 'b', 'c']) {
    gates.set(key, deferred())
    started.set(key, deferred())
  }
  const queue = new KeyQueue({ concurrency: 2 })
  queue.start((key) =>
    track.around(key, async () => {
      started.get(key)!.resolve()
      await gates.get(key)!.promise
      return DONE
    }),
  )
  for (const key of ['a', 'b', 'c']) queue.add(key)
  // Both must be running at once: each waits for its own gate, opened only after both started.
  await Promise.all([started.get('a')!.promise, started.get('b')!.promise])
  await settle()
  t.same(track.calls, ['a', 'b'], 'the third key waits for a free slot')
  t.equal(queue.depth, 1)
  gates.get('b')!.resolve()
  await started.get('c')!.promise
  gates.get('a')!.resolve()
  gates.get('c')!.resolve()
  await queue.whenIdle()
  t.same(track.calls, ['a', 'b', 'c'])
  t.equal(track.max.total, 2)
  await queue.stop()
})

t.test('failures back off exponentially, capped, and reset after success', async (t) => {
  const delays: (number | undefined)[] = []
  const outcomes: unknown[] = []
  // Fails four times, succeeds, then (after another add) fails once and succeeds.
  const script = [RETRY, 'throw', RETRY, RETRY, DONE, RETRY, DONE] as const
  const finished = deferred()
  const secondRoundDone = deferred()
  let call = 0
  const queue = new KeyQueue({
    backoff: { initialMs: 1, maxMs: 4 },
    onResult: (_key, outcome, _ms, retryInMs) => {
      outcomes.push(outcome)
      delays.push(retryInMs)
      if (outcomes.length === 5) finished.resolve()
      if (outcomes.length === 7) secondRoundDone.resolve()
    },
  })
  queue.start(async () => {
    const step = script[call++]
    if (step === 'throw') throw new Error('boom')
    return step ?? DONE
  })
  queue.add('a')
  await finished.promise
  t.same(delays, [1, 2, 4, 4, undefined], 'doubling from 1 ms, capped at 4 ms, none after done')
  t.match(
    outcomes[1],
    { result: 'threw', error: { message: 'boom' } },
    'a thrown error is reported as `threw` and retried like a retry outcome',
  )
  queue.add('a')
  await secondRoundDone.promise
  t.same(delays.slice(5), [1, undefined], 'the count restarted after success')
  t.equal(call, 7)
  await queue.stop()
})

t.test('a malformed outcome retries rather than losing the key', async (t) => {
  const second = deferred()
  const reports: unknown[] = []
  let call = 0
  const queue = new KeyQueue({
    backoff: { initialMs: 1, maxMs: 1 },
    onResult: (_key, report) => reports.push(report),
  })
  queue.start(async () => {
    call++
    if (call === 2) second.resolve()
    return (call === 1 ? undefined : DONE) as unknown as RunOutcome
  })
  queue.add('a')
  await second.promise
  t.equal(call, 2)
  t.match(reports[0], { result: 'threw', error: { message: 'reconcile returned no outcome' } })
  await queue.stop()
})

t.test('an explicit add supersedes a scheduled retry and keeps the failure count', async (t) => {
  const delays: (number | undefined)[] = []
  const reported = [deferred(), deferred()]
  let calls = 0
  // A minute-long backoff: only the explicit add can make the second run happen in time.
  const queue = new KeyQueue({
    backoff: { initialMs: 60_000, maxMs: 600_000 },
    onResult: (_key, _outcome, _ms, retryInMs) => {
      delays.push(retryInMs)
      reported[delays.length - 1]?.resolve()
    },
  })
  queue.start(async () => {
    calls++
    return RETRY
  })
  queue.add('a')
  await reported[0]!.promise
  t.equal(queue.depth, 0, 'a key waiting out its backoff is not queued')
  queue.add('a')
  await reported[1]!.promise
  t.equal(calls, 2)
  t.same(delays, [60_000, 120_000], 'the second failure doubles the first')
  await queue.stop() // also cancels the pending two-minute timer, so the test ends now
})

t.test('a failed run that was added again meanwhile reruns at once', async (t) => {
  const release = deferred()
  const started = deferred()
  const rerun = deferred()
  let calls = 0
  const queue = new KeyQueue({ backoff: { initialMs: 60_000, maxMs: 60_000 } })
  queue.start(async () => {
    calls++
    if (calls === 1) {
      started.resolve()
      await release.promise
      return RETRY
    }
    rerun.resolve()
    return DONE
  })
  queue.add('a')
  await started.promise
  queue.add('a')
  release.resolve()
  await rerun.promise
  t.equal(calls, 2)
  await queue.stop()
})

t.test('stop waits for running work, then nothing more runs', async (t) => {
  const track = tracker()
  const release = deferred()
  const started = deferred()
  const retried = deferred()
  const clock = manualTimers()
  let signal: AbortSignal | undefined
  const queue = new KeyQueue({
    concurrency: 1,
    backoff: { initialMs: 5, maxMs: 5 },
    timers: clock.timers,
  })
  queue.start((key, s) =>
    track.around(key, async () => {
      if (key === 'fails') {
        retried.resolve()
        return RETRY
      }
      signal = s
      started.resolve()
      await release.promise
      return DONE
    }),
  )
  queue.add('fails') // fails, then waits out its backoff (a timer only the test can fire)
  await retried.promise
  queue.add('slow')
  await started.promise
  t.same(
    [...clock.pending].map((timer) => timer.ms),
    [5],
    'the failed key waits out its backoff',
  )
  queue.add('slow') // marked to run again: dropped by stop
  queue.add('queued') // waiting for the only slot: dropped by stop
  let stopped = false
  const stopping = queue.stop().then(() => (stopped = true))
  await settle()
  t.notOk(stopped, 'stop waits for the running reconcile')
  t.equal(signal?.aborted, true, 'the running reconcile is told to give up')
  t.equal(clock.pending.size, 0, 'stop cancels the pending retry')
  queue.add('late')
  release.resolve()
  await stopping
  t.ok(stopped)
  t.equal(queue.depth, 0)
  // A retry timer that fires anyway (cancelled too late) must not bring its key back.
  for (const timer of clock.scheduled) timer.callback()
  await settle()
  t.equal(queue.depth, 0, 'a late retry queues nothing')
  t.same(track.calls, ['fails', 'slow'])
  t.throws(() => {
    queue.start(async () => DONE)
  }, 'a stopped queue cannot restart')
  await queue.stop() // idempotent
})

t.test('an explicit add cancels the scheduled retry timer', async (t) => {
  const clock = manualTimers()
  const reported = [deferred(), deferred()]
  let runs = 0
  const queue = new KeyQueue({
    backoff: { initialMs: 60_000, maxMs: 60_000 },
    timers: clock.timers,
  })
  queue.start(async () => {
    reported[runs++]?.resolve()
    return runs === 1 ? RETRY : DONE
  })
  queue.add('a')
  await reported[0]!.promise
  await settle()
  t.equal(clock.pending.size, 1, 'a retry is scheduled')
  queue.add('a')
  await reported[1]!.promise
  await queue.whenIdle()
  t.equal(clock.pending.size, 0, 'the add cancelled it')
  t.equal(runs, 2)
  await queue.stop()
})

t.test('a throwing onResult does not wedge the queue', async (t) => {
  const calls: string[] = []
  const queue = new KeyQueue({
    concurrency: 1,
    onResult: () => {
      throw new Error('observer bug')
    },
  })
  queue.start(async (key) => {
    calls.push(key)
    return DONE
  })
  queue.add('a')
  queue.add('b')
  await queue.whenIdle()
  t.same(calls, ['a', 'b'])
  await queue.stop()
})
