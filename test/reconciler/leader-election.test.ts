/**
 * Leader election among candidates sharing an in-memory Lease API, on a fake clock that moves
 * only when a test advances it. Each candidate sees the same passage of time through offsets of
 * its own (monotonic origin, wall clock), so skew is a parameter and nothing sleeps for real.
 * Times in assertions are the shared fake time in milliseconds since the test began.
 */

import t from 'tap'
import pino from 'pino'
import type { ElectionClock } from '../../src/reconciler/election-clock.ts'
import { DEFAULT_TIMING, LeaderElector } from '../../src/reconciler/leader-election.ts'
import type { LeaderElectionConfig } from '../../src/reconciler/leader-election.ts'
import { kubeLeaseStore, microTime } from '../../src/reconciler/lease-store.ts'
import type { Lease, LeaseSpec, LeaseStore, LeaseWrite } from '../../src/reconciler/lease-store.ts'

const { leaseDurationMs: LEASE, renewDeadlineMs: DEADLINE, retryPeriodMs: RETRY } = DEFAULT_TIMING
const EPOCH = Date.parse('2026-11-23T10:00:00Z')
const HOUR = 3_600_000

/** Lets every queued promise continuation run (the fakes schedule nothing else). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

interface Timer {
  readonly at: number
  readonly seq: number
  readonly fire: () => void
}

/** Time shared by every candidate of a test. */
class FakeTime {
  #now = 0
  #seq = 0
  readonly #timers = new Set<Timer>()

  get now(): number {
    return this.#now
  }

  /** A candidate's view: its own monotonic origin and wall-clock offset, the common rate. */
  clock(offsets: { readonly monoMs?: number; readonly wallMs?: number } = {}): ElectionClock {
    return {
      now: () => this.#now + (offsets.monoMs ?? 0),
      wallNow: () => EPOCH + this.#now + (offsets.wallMs ?? 0),
      sleep: (ms, signal) => this.#sleep(ms, signal),
    }
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) {
        resolve()
        return
      }
      const onAbort = () => {
        this.#timers.delete(timer)
        resolve()
      }
      const timer: Timer = {
        at: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        fire: () => {
          signal.removeEventListener('abort', onAbort)
          resolve()
        },
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.#timers.add(timer)
    })
  }

  /** Moves on by `ms`, firing due timers one at a time in order, each at its own time. */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms
    await settle()
    for (let fired = 0; ; fired++) {
      if (fired > 100_000) throw new Error('timers keep firing without time passing')
      let next: Timer | undefined
      for (const timer of this.#timers)
        if (
          timer.at <= end &&
          (!next || timer.at < next.at || (timer.at === next.at && timer.seq < next.seq))
        )
          next = timer
      if (!next) break
      this.#timers.delete(next)
      this.#now = next.at
      next.fire()
      await settle()
    }
    this.#now = end
    await settle()
  }

  async advanceTo(at: number): Promise<void> {
    await this.advance(at - this.#now)
  }
}

interface Call {
  readonly who: string
  readonly op: 'get' | 'create' | 'update'
  readonly at: number
  /** The resourceVersion a write was conditional on. */
  readonly sentVersion?: string
  /** What the server did: the resourceVersion read or written, or why not. */
  readonly result: string
}

/** The API server's one Lease: every write bumps the resourceVersion; stale writes conflict. */
class FakeLeaseServer {
  readonly calls: Call[] = []
  readonly time: FakeTime
  #lease: Lease | undefined
  #version = 0

  constructor(time: FakeTime) {
    this.time = time
  }

  get lease(): Lease | undefined {
    return this.#lease && structuredClone(this.#lease)
  }

  /** Writes the Lease directly, as another tool or a vanished holder would have. */
  put(spec: LeaseSpec): Lease {
    this.#lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'lease', namespace: 'ns', resourceVersion: String(++this.#version) },
      spec,
    }
    return structuredClone(this.#lease)
  }

  get(who: string): Lease | undefined {
    this.calls.push({
      who,
      op: 'get',
      at: this.time.now,
      result: this.#lease?.metadata.resourceVersion ?? 'missing',
    })
    return this.lease
  }

  create(who: string, lease: Lease): LeaseWrite {
    if (this.#lease) {
      this.calls.push({ who, op: 'create', at: this.time.now, result: 'conflict' })
      return { outcome: 'conflict' }
    }
    return this.#store(who, 'create', lease)
  }

  update(who: string, lease: Lease): LeaseWrite {
    const sentVersion = lease.metadata.resourceVersion
    if (!this.#lease || sentVersion !== this.#lease.metadata.resourceVersion) {
      this.calls.push({
        who,
        op: 'update',
        at: this.time.now,
        result: 'conflict',
        ...(sentVersion ? { sentVersion } : {}),
      })
      return { outcome: 'conflict' }
    }
    return this.#store(who, 'update', lease)
  }

  #store(who: string, op: 'create' | 'update', lease: Lease): LeaseWrite {
    const resourceVersion = String(++this.#version)
    const sent = lease.metadata.resourceVersion
    this.#lease = structuredClone({ ...lease, metadata: { ...lease.metadata, resourceVersion } })
    this.calls.push({
      who,
      op,
      at: this.time.now,
      result: resourceVersion,
      ...(sent ? { sentVersion: sent } : {}),
    })
    return { outcome: 'written', lease: structuredClone(this.#lease) }
  }

  /** Successful writes by `who`, in order. */
  writesBy(who: string): Call[] {
    return this.calls.filter(
      (call) => call.who === who && call.op !== 'get' && /^\d+$/.test(call.result),
    )
  }

  /** When `who` first read the record that `write` left (its first sight of that change). */
  firstSeen(who: string, write: Call): number | undefined {
    return this.calls.find(
      (call) => call.who === who && call.op === 'get' && call.result === write.result,
    )?.at
  }
}

interface Deferred {
  readonly promise: Promise<void>
  readonly resolve: () => void
}

function deferred(): Deferred {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

/** One candidate's access to the server, with switches to break it. */
class FakeLeaseClient implements LeaseStore {
  /**
   * `before`: every call waits until its signal aborts, never reaching the server; `after`: the
   * server applies it, but the answer never comes.
   */
  hang: false | 'before' | 'after' = false
  /** The next writes fail, in order: a thrown error (no answer), or a refusal with this status. */
  failures: ('throw' | number)[] = []
  /** While set, writes wait for it before reaching the server. */
  writeGate: Promise<void> | undefined
  calls = 0
  /** When the signals of calls left hanging aborted. */
  readonly abandonedAt: number[] = []
  readonly #who: string
  readonly #server: FakeLeaseServer

  constructor(server: FakeLeaseServer, who: string) {
    this.#server = server
    this.#who = who
  }

  get(signal: AbortSignal): Promise<Lease | undefined> {
    this.calls++
    return this.#answer(signal, () => this.#server.get(this.#who))
  }

  create(lease: Lease, signal: AbortSignal): Promise<LeaseWrite> {
    this.calls++
    return this.#write(signal, () => this.#server.create(this.#who, lease))
  }

  update(lease: Lease, signal: AbortSignal): Promise<LeaseWrite> {
    this.calls++
    return this.#write(signal, () => this.#server.update(this.#who, lease))
  }

  async #write(signal: AbortSignal, apply: () => LeaseWrite): Promise<LeaseWrite> {
    if (this.writeGate) await this.writeGate
    const failure = this.failures.shift()
    if (failure === 'throw') throw new Error('connection reset')
    if (failure !== undefined)
      return { outcome: 'refused', status: failure, message: 'etcdserver: request timed out' }
    return this.#answer(signal, apply)
  }

  async #answer<T>(signal: AbortSignal, apply: () => T): Promise<T> {
    if (!this.hang) return apply()
    if (this.hang === 'after') apply()
    return new Promise<T>((_, reject) => {
      const abandon = () => {
        this.abandonedAt.push(this.#server.time.now)
        reject(new Error('abandoned'))
      }
      if (signal.aborted) abandon()
      else signal.addEventListener('abort', abandon, { once: true })
    })
  }
}

interface LeadershipEvent {
  readonly event: 'started' | 'aborted' | 'stopped'
  readonly at: number
}

function world() {
  const time = new FakeTime()
  const server = new FakeLeaseServer(time)
  const logs: Record<string, unknown>[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) })

  /** A candidate started now, with its own view of time. */
  const candidate = (identity: string, offsets: { monoMs?: number; wallMs?: number } = {}) => {
    const client = new FakeLeaseClient(server, identity)
    const events: LeadershipEvent[] = []
    let signal: AbortSignal | undefined
    let abortedBeforeStopped: boolean | undefined
    const elector = new LeaderElector(unreachableApi, { ...config, identity }, logger, {
      clock: time.clock(offsets),
      leases: client,
    })
    elector.start({
      onStartedLeading(leadership) {
        signal = leadership
        events.push({ event: 'started', at: time.now })
        leadership.addEventListener('abort', () => events.push({ event: 'aborted', at: time.now }))
      },
      onStoppedLeading() {
        abortedBeforeStopped = signal?.aborted
        events.push({ event: 'stopped', at: time.now })
      },
    })
    return {
      identity,
      elector,
      client,
      events,
      get abortedBeforeStopped() {
        return abortedBeforeStopped
      },
      /** When `event` first happened, if it has. */
      when: (event: LeadershipEvent['event']) => events.find((e) => e.event === event)?.at,
    }
  }
  return { time, server, logs, candidate }
}

const config: LeaderElectionConfig = {
  namespace: 'ns',
  name: 'lease',
  identity: 'x',
  ...DEFAULT_TIMING,
}

/** The elector is given a Lease store; it must never reach for the cluster. */
const unreachableApi = {
  get: () => Promise.reject(new Error('the cluster API was used')),
  write: () => Promise.reject(new Error('the cluster API was used')),
}

const startedCount = (candidates: { events: LeadershipEvent[] }[]) =>
  candidates.flatMap((c) => c.events).filter((e) => e.event === 'started').length

t.test('microTime: RFC 3339 with microseconds', async (t) => {
  t.equal(microTime(EPOCH + 42), '2026-11-23T10:00:00.042000Z')
})

t.test('the timing is checked up front', async (t) => {
  const logger = pino({ level: 'silent' })
  const make = (change: Partial<LeaderElectionConfig>) => () =>
    new LeaderElector(unreachableApi, { ...config, ...change }, logger)
  t.doesNotThrow(make({}), 'the defaults')
  t.throws(
    make({ leaseDurationMs: 10_000 }),
    /leaseDurationMs \(10000\) must exceed renewDeadlineMs/,
  )
  t.throws(make({ leaseDurationMs: 9_000 }), RangeError)
  t.throws(make({ retryPeriodMs: 10_000 }), /renewDeadlineMs \(10000\) must exceed retryPeriodMs/)
  t.throws(make({ retryPeriodMs: 0 }), /retryPeriodMs must be a positive number/)
  t.throws(make({ retryPeriodMs: -1 }), RangeError)
  t.throws(make({ leaseDurationMs: Number.POSITIVE_INFINITY }), /leaseDurationMs must be/)
  t.throws(make({ renewDeadlineMs: Number.NaN }), /renewDeadlineMs must be/)
  t.throws(make({ identity: '' }), /identity must not be empty/)
  t.throws(make({ namespace: '' }), /namespace must not be empty/)
})

t.test('the first candidate creates the Lease; another follows while it renews', async (t) => {
  const { time, server, candidate } = world()
  const a = candidate('a')
  await time.advance(0)
  t.ok(a.elector.isLeader, 'a leads at once')
  t.same(a.events, [{ event: 'started', at: 0 }])
  t.match(server.lease?.spec, {
    holderIdentity: 'a',
    leaseDurationSeconds: 15,
    acquireTime: microTime(EPOCH),
    renewTime: microTime(EPOCH),
    leaseTransitions: 0,
  })

  await time.advance(1_000)
  const b = candidate('b')
  await time.advance(60_000)
  t.notOk(b.elector.isLeader, 'b follows')
  t.same(b.events, [], 'b never led')
  t.same(a.events, [{ event: 'started', at: 0 }], 'a led throughout')
  t.match(server.lease?.spec, {
    holderIdentity: 'a',
    acquireTime: microTime(EPOCH),
    renewTime: microTime(EPOCH + 60_000),
    leaseTransitions: 0,
  })
  t.equal(server.writesBy('a').length, 31, 'created, then renewed every retry period')
  const aReads = server.calls.filter((call) => call.who === 'a' && call.op === 'get')
  t.equal(aReads.length, 1, 'renewals take the fast path: a PUT of the object written last, no GET')
})

for (const skew of [HOUR, -HOUR]) {
  t.test(
    `a follower whose wall clock is ${skew > 0 ? 'an hour ahead' : 'an hour behind'}`,
    async (t) => {
      const { time, server, candidate } = world()
      const a = candidate('a')
      await time.advance(1_000)
      // Its monotonic origin differs too: only how fast time passes may matter.
      const b = candidate('b', { wallMs: skew, monoMs: 987_654_321 })
      await time.advance(60_000)
      t.same(b.events, [], 'never takes over from a leader that renews')
      t.same(a.events, [{ event: 'started', at: 0 }], 'the leader keeps leading')

      // The leader vanishes: the follower takes over in a lease duration, not an hour.
      a.client.hang = 'before'
      const lastWrite = server.writesBy('a').at(-1)!
      await time.advance(LEASE + 2 * RETRY)
      const takeover = b.when('started')
      t.ok(takeover !== undefined, 'the follower took over')
      t.ok(takeover! >= lastWrite.at + LEASE, 'not before the record stood still for a lease')
      t.match(server.lease?.spec, {
        holderIdentity: 'b',
        acquireTime: microTime(EPOCH + takeover! + skew),
      })
    },
  )
}

t.test('a holder that vanished is replaced once its record stood still for a lease', async (t) => {
  const { time, server, candidate } = world()
  const a = candidate('a')
  await time.advance(1_000)
  const b = candidate('b', { monoMs: 5_000 })
  await time.advance(19_000)
  a.client.hang = 'before' // from now on a reaches nobody, and nobody hears from it

  await time.advance(LEASE + 2 * RETRY)
  const lastWrite = server.writesBy('a').at(-1)!
  const seen = server.firstSeen('b', lastWrite)!
  const takeover = b.when('started')!
  t.ok(
    takeover >= seen + LEASE,
    `not before the lease duration (seen ${seen}, took over ${takeover})`,
  )
  t.ok(takeover <= seen + LEASE + RETRY, 'at its first retry after that')
  t.ok(a.when('stopped')! < takeover, 'the old leader had stepped down before')
  t.match(server.lease?.spec, {
    holderIdentity: 'b',
    acquireTime: microTime(EPOCH + takeover),
    leaseTransitions: 1,
  })
})

t.test(
  'a freshly started candidate waits a full lease for a holder that never renews',
  async (t) => {
    const { time, server, candidate } = world()
    // Its timestamps say it expired long ago; they are not to be trusted.
    server.put({
      holderIdentity: 'ghost',
      leaseDurationSeconds: 15,
      acquireTime: microTime(EPOCH - 2 * HOUR),
      renewTime: microTime(EPOCH - HOUR),
      leaseTransitions: 4,
    })
    const b = candidate('b')
    await time.advance(LEASE - 1)
    t.same(b.events, [], 'still waiting just before the lease duration')
    await time.advance(RETRY + 1)
    t.equal(
      b.when('started'),
      LEASE + RETRY - (LEASE % RETRY),
      'took over at the first retry after it',
    )
    t.match(server.lease?.spec, {
      holderIdentity: 'b',
      acquireTime: microTime(EPOCH + b.when('started')!),
      leaseTransitions: 5,
    })
  },
)

for (const hang of ['before', 'after'] as const) {
  t.test(
    `a renewal that hangs (${hang} reaching the server) ends leadership at the deadline`,
    async (t) => {
      const { time, server, candidate } = world()
      const a = candidate('a')
      await time.advance(1_000)
      const b = candidate('b')
      await time.advance(6_000)
      a.client.hang = hang
      const lastRenewal = server.writesBy('a').at(-1)!
      t.equal(lastRenewal.at, 6_000, 'the last renewal that got an answer started at 6 s')
      const deadline = lastRenewal.at + DEADLINE

      await time.advanceTo(deadline - 1)
      t.ok(a.elector.isLeader, 'still leading a moment before the deadline')
      t.same(a.client.abandonedAt, [], 'the renewal sent at 8 s is still waiting')
      await time.advance(1)
      t.notOk(a.elector.isLeader, 'not leading at the deadline')
      t.same(a.events, [
        { event: 'started', at: 0 },
        { event: 'aborted', at: deadline },
        { event: 'stopped', at: deadline },
      ])
      t.equal(a.abortedBeforeStopped, true, 'the leadership signal aborted before onStoppedLeading')
      t.same(a.client.abandonedAt, [deadline], 'the hung request was abandoned at the deadline')

      const seen = server.firstSeen('b', lastRenewal)!
      t.ok(seen + LEASE > deadline, 'no follower could have taken over yet')
      t.same(b.events, [])
      await time.advance(LEASE)
      const takeover = b.when('started')
      t.ok(takeover !== undefined && takeover > deadline, 'the follower takes over afterwards')
      // Applied but unanswered, the renewal at 8 s is a change b saw: it waits from then.
      const bSawLast = server.firstSeen('b', server.writesBy('a').at(-1)!)!
      t.ok(takeover! >= bSawLast + LEASE)
    },
  )
}

t.test('two candidates racing for a free Lease: one leads, the other stays follower', async (t) => {
  const starts = {
    missing: () => undefined,
    released: (server: FakeLeaseServer) =>
      server.put({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 2 }),
  }
  for (const [state, prepare] of Object.entries(starts)) {
    const { time, server, candidate } = world()
    prepare(server)
    const gate = deferred()
    const a = candidate('a')
    const b = candidate('b')
    a.client.writeGate = gate.promise
    b.client.writeGate = gate.promise
    await time.advance(0)
    t.same(startedCount([a, b]), 0, `${state}: both have read it and wait to write`)
    gate.resolve()
    a.client.writeGate = undefined
    b.client.writeGate = undefined
    await time.advance(0)
    const writes = server.calls.filter((call) => call.op !== 'get')
    t.equal(writes.length, 2, `${state}: both wrote`)
    t.equal(
      writes[0]?.sentVersion,
      writes[1]?.sentVersion,
      `${state}: with the same resourceVersion`,
    )
    t.same(
      writes.map((call) => call.result === 'conflict'),
      [false, true],
      `${state}: the second lost`,
    )
    const [winner, loser] = writes[0]?.who === 'a' ? [a, b] : [b, a]
    t.ok(winner.elector.isLeader, `${state}: the winner leads`)
    t.notOk(loser.elector.isLeader, `${state}: the loser does not`)
    t.same(loser.events, [], `${state}: onStartedLeading was never called on the loser`)
    await time.advance(30_000)
    t.equal(startedCount([a, b]), 1, `${state}: still one leader after 30 s`)
    t.same(loser.events, [])
    t.equal(server.lease?.spec.holderIdentity, winner.identity)
    if (state === 'released')
      t.equal(server.lease?.spec.leaseTransitions, 3, 'a transition counted')
  }
})

t.test('graceful stop releases the Lease; a follower acquires at its next retry', async (t) => {
  const { time, server, candidate, logs } = world()
  const a = candidate('a')
  await time.advance(1_000)
  const b = candidate('b')
  await time.advance(4_500)
  await a.elector.stop()
  t.same(a.events, [
    { event: 'started', at: 0 },
    { event: 'aborted', at: 5_500 },
    { event: 'stopped', at: 5_500 },
  ])
  t.match(server.lease?.spec, {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: microTime(EPOCH + 5_500),
    renewTime: microTime(EPOCH + 5_500),
    leaseTransitions: 0,
  })
  t.ok(logs.some((line) => line['msg'] === 'lease released'))
  await time.advance(RETRY)
  t.equal(b.when('started'), 7_000, 'b took over at its next retry, with no lease duration to wait')
  t.match(server.lease?.spec, { holderIdentity: 'b', leaseTransitions: 1 })
})

t.test('a renewal cut short by stop() that landed anyway does not block the release', async (t) => {
  const { time, server, candidate, logs } = world()
  const a = candidate('a')
  await time.advance(1_000)
  a.client.hang = 'after' // the renewal at 2 s is applied, its answer never comes
  await time.advance(1_500)
  a.client.hang = false
  await a.elector.stop()
  t.match(server.lease?.spec, { holderIdentity: '', leaseDurationSeconds: 1 })
  t.match(
    server.calls.filter((call) => call.who === 'a').map((call) => `${call.op} ${call.result}`),
    ['get missing', 'create 1', 'update 2', 'update conflict', 'get 2', 'update 3'],
    'the stale release conflicts; the Lease is read again and released',
  )
  t.ok(logs.some((line) => line['msg'] === 'lease released'))
})

t.test('a release that gets no answer is abandoned after a bounded time', async (t) => {
  const { time, candidate } = world()
  const a = candidate('a')
  await time.advance(3_000)
  a.client.hang = 'before'
  let stopped = false
  void a.elector.stop().then(() => (stopped = true))
  await time.advance(4_999)
  t.notOk(stopped, 'still releasing')
  await time.advance(1)
  t.ok(stopped, 'stop() returned after 5 s')
  t.same(a.client.abandonedAt, [8_000])
})

t.test('a leader that already lost leadership does not release on stop', async (t) => {
  const { time, server, candidate } = world()
  const a = candidate('a')
  await time.advance(3_000)
  a.client.hang = 'before'
  await time.advanceTo(2_000 + DEADLINE)
  t.equal(a.when('stopped'), 2_000 + DEADLINE)
  const calls = a.client.calls
  await a.elector.stop()
  t.equal(a.client.calls, calls, 'no release was attempted')
  t.equal(a.events.filter((e) => e.event === 'stopped').length, 1, 'onStoppedLeading once')
  t.equal(server.lease?.spec.holderIdentity, 'a', 'the record still names a; it expires by itself')
})

t.test('renewals failing with time left before the deadline keep leadership', async (t) => {
  const { time, server, candidate, logs } = world()
  const a = candidate('a')
  await time.advance(1_000)
  const b = candidate('b')
  await time.advance(1_500)
  a.client.failures = ['throw', 500]
  await time.advance(30_000)
  // Three in a row: the fourth attempt, 8 s after the last good one, is in time.
  a.client.failures = ['throw', 503, 'throw']
  await time.advance(30_000)
  t.same(a.events, [{ event: 'started', at: 0 }], 'a still leads')
  t.ok(a.elector.isLeader)
  t.same(b.events, [], 'b never led')
  const renewedAt = server.writesBy('a').map((write) => write.at)
  const failed = (...times: number[]) => times.every((at) => !renewedAt.includes(at))
  t.ok(failed(4_000, 6_000), 'the two failed')
  t.ok(renewedAt.includes(8_000), 'renewed at 8 s')
  t.ok(failed(34_000, 36_000, 38_000), 'the later three failed')
  t.ok(renewedAt.includes(40_000), 'renewed at 40 s')
  t.ok(
    logs.some(
      (line) =>
        line['msg'] === 'lease write refused' &&
        line['status'] === 500 &&
        line['message'] === 'etcdserver: request timed out',
    ),
    'a refusal is logged with its status and message',
  )
  t.ok(
    logs.some(
      (line) =>
        line['msg'] === 'lease update failed' &&
        (line['err'] as Record<string, unknown> | undefined)?.['message'] === 'connection reset',
    ),
    'the error is logged as an error (pino serializes it), not as a string',
  )
})

t.test('renewals failing until the deadline end leadership at the deadline', async (t) => {
  const { time, candidate } = world()
  const a = candidate('a')
  await time.advance(1_000)
  a.client.failures = Array.from({ length: 20 }, () => 500)
  await time.advance(20_000)
  t.equal(a.when('stopped'), DEADLINE, 'ten seconds after the last good renewal started')
})

t.test('a fast-path conflict falls back at once to reading the Lease', async (t) => {
  const { time, server, candidate } = world()
  const a = candidate('a')
  await time.advance(1_000)
  // Someone else touches the Lease (a label, say) and moves its resourceVersion on.
  server.put({ ...server.lease!.spec })
  await time.advance(1_000)
  const atRenewal = server.calls.filter((call) => call.at === 2_000)
  t.same(
    atRenewal.map((call) => [call.op, call.result === 'conflict' ? 'conflict' : 'ok']),
    [
      ['update', 'conflict'],
      ['get', 'ok'],
      ['update', 'ok'],
    ],
  )
  t.same(a.events, [{ event: 'started', at: 0 }], 'still leading')
  t.match(server.lease?.spec, {
    holderIdentity: 'a',
    leaseTransitions: 0,
    acquireTime: microTime(EPOCH),
  })
})

// With no duration, the intruder's record is expired by the time it is read: a follower would
// take it, but a leader must not write over it and carry on as if nothing had happened.
for (const intruder of [
  { holderIdentity: 'intruder', leaseDurationSeconds: 15 },
  { holderIdentity: 'intruder' },
]) {
  const expired = intruder.leaseDurationSeconds === undefined
  t.test(
    `a leader that reads another holder stops leading at once (${expired ? 'expired' : 'valid'})`,
    async (t) => {
      const { time, server, candidate, logs } = world()
      const a = candidate('a')
      await time.advance(1_000)
      server.put(intruder)
      await time.advance(1_000)
      t.same(a.events, [
        { event: 'started', at: 0 },
        { event: 'aborted', at: 2_000 },
        { event: 'stopped', at: 2_000 },
      ])
      t.ok(
        logs.some(
          (line) =>
            line['msg'] === 'stopped leading' && line['why'] === 'the lease is held by intruder',
        ),
      )
      t.equal(server.lease?.spec.holderIdentity, 'intruder', 'not written over in the same attempt')
    },
  )
}

t.test('the Lease in the cluster: paths, and what each answer means', async (t) => {
  const requests: string[] = []
  const answers: { status: number; body?: Record<string, unknown> }[] = []
  const lease: Lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'l', namespace: 'n', resourceVersion: '7' },
    spec: { holderIdentity: 'a' },
  }
  let stored: Record<string, unknown> | undefined = { ...lease }
  const store = kubeLeaseStore(
    {
      get: async (path, _query, signal) => {
        requests.push(`GET ${path} ${signal?.aborted === false}`)
        return stored
      },
      write: async (method, path, _body, options) => {
        requests.push(`${method} ${path} ${options?.signal?.aborted === false}`)
        return { status: answers[0]?.status ?? 0, body: answers.shift()?.body }
      },
    },
    'n',
    'l',
  )
  const signal = new AbortController().signal
  t.same(await store.get(signal), lease)
  stored = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'l', namespace: 'n' },
  }
  t.same((await store.get(signal))?.spec, {}, 'no spec reads as an empty one')
  stored = undefined
  t.equal(await store.get(signal), undefined, 'missing')
  answers.push(
    { status: 201, body: { ...lease } },
    { status: 409, body: {} },
    { status: 200, body: { ...lease } },
  )
  answers.push({ status: 500, body: { message: 'etcd is sad' } }, { status: 422 })
  t.same(await store.create(lease, signal), { outcome: 'written', lease })
  t.same(await store.create(lease, signal), { outcome: 'conflict' })
  t.same(await store.update(lease, signal), { outcome: 'written', lease })
  t.same(await store.update(lease, signal), {
    outcome: 'refused',
    status: 500,
    message: 'etcd is sad',
  })
  t.same(await store.update(lease, signal), { outcome: 'refused', status: 422, message: '' })
  const collection = '/apis/coordination.k8s.io/v1/namespaces/n/leases'
  t.same(requests, [
    `GET ${collection}/l true`,
    `GET ${collection}/l true`,
    `GET ${collection}/l true`,
    `POST ${collection} true`,
    `POST ${collection} true`,
    `PUT ${collection}/l true`,
    `PUT ${collection}/l true`,
    `PUT ${collection}/l true`,
  ])
})
