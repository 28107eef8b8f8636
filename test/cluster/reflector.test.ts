import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { pino } from 'pino'
import t from 'tap'
import type { Test } from 'tap'
import { backoffDelay } from '../../src/cluster/backoff.ts'
import type { KubeApiError } from '../../src/cluster/kube-api.ts'
import {
  BACKOFF_JITTER,
  DEFAULT_BACKOFF,
  RETRY_AFTER_MAX_MS,
  Reflector,
} from '../../src/cluster/reflector.ts'
import type { ReflectorStore } from '../../src/cluster/reflector.ts'
import type { ViewResource } from '../../src/cluster/resources.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { startFakeKubeApi, statusObject } from '../helpers/fake-kube-api.ts'
import type { FakeKubeApi } from '../helpers/fake-kube-api.ts'

t.test('the default policy retries quickly and never waits more than 12 s', async (t) => {
  const highest = () => 1
  t.ok(Math.round(backoffDelay(1, DEFAULT_BACKOFF, BACKOFF_JITTER, highest)) <= 300)
  t.ok(Math.round(backoffDelay(1_000, DEFAULT_BACKOFF, BACKOFF_JITTER, highest)) <= 12_000)
})

// List/watch against a fake API server (real KubeApi, loopback HTTP).

const SERVERS: ViewResource = {
  kind: 'MCPServer',
  group: 'toolhive.stacklok.io',
  version: 'v1beta1',
  plural: 'mcpservers',
  namespaced: true,
}
const PATH = '/apis/toolhive.stacklok.io/v1beta1/mcpservers'

function server(name: string, resourceVersion = '1'): KubeObject {
  return {
    apiVersion: 'toolhive.stacklok.io/v1beta1',
    kind: 'MCPServer',
    metadata: { name, namespace: 'default', resourceVersion },
  }
}

/**
 * A store keyed by name that remembers how often it was replaced wholesale. Its `keep` trims an
 * object to apiVersion, kind, name, namespace and resourceVersion, and it counts every object it
 * is handed that `keep` did not return.
 */
class NamedStore implements ReflectorStore {
  readonly objects = new Map<string, KubeObject>()
  replaced = 0
  /** Objects given to replace, upsert or remove that are not `keep`'s results. */
  unkept = 0
  /**
   * The metadata of each object `keep` was given (the very object the API server's page carried,
   * managedFields and all), held weakly: once a page is read, nothing else should hold it.
   */
  readonly given: WeakRef<object>[] = []
  readonly #kept = new WeakSet<KubeObject>()
  keep(object: KubeObject): KubeObject {
    this.given.push(new WeakRef(object.metadata ?? {}))
    const { name, namespace, resourceVersion } = object.metadata ?? {}
    const kept = {
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata: { name, namespace, resourceVersion },
    }
    this.#kept.add(kept)
    return kept
  }
  replace(objects: readonly KubeObject[]): void {
    this.replaced++
    this.objects.clear()
    for (const object of objects) this.upsert(object)
  }
  upsert(object: KubeObject): void {
    this.#check(object)
    this.objects.set(String(object.metadata?.name), object)
  }
  remove(object: KubeObject): void {
    this.#check(object)
    this.objects.delete(String(object.metadata?.name))
  }
  names(): string[] {
    return [...this.objects.keys()].sort()
  }
  #check(object: KubeObject): void {
    if (!this.#kept.has(object)) this.unkept++
  }
}

/** Polls `condition` (cheap, in-memory) until it holds; fails the wait after `timeoutMs`. */
async function until(condition: () => boolean, what: string, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

interface Running {
  readonly fake: FakeKubeApi
  readonly store: NamedStore
  readonly reflector: Reflector
  readonly errors: unknown[]
  /** The 429s it was answered (waits, not failures). */
  readonly throttled: KubeApiError[]
  /** What it logged at info and above, parsed. */
  readonly logs: { level: number; msg: string; retryInMs?: number }[]
}

async function reflectorOn(t: Test, objects: KubeObject[], pageSize = 500): Promise<Running> {
  const fake = await startFakeKubeApi(t)
  fake.objects = objects
  fake.resourceVersion = '10'
  const store = new NamedStore()
  const errors: unknown[] = []
  const throttled: KubeApiError[] = []
  const logs: Running['logs'] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) })
  const reflector = new Reflector(fake.api, SERVERS, store, logger, {
    pageSize,
    watchSeconds: 5,
    // Tiny, so a retry the test does not expect shows up as extra requests, not as a slow test.
    backoff: { initialMs: 1, maxMs: 5 },
    onError: (error) => errors.push(error),
    onThrottled: (error) => throttled.push(error),
  })
  reflector.start()
  // Stopped before the fake server closes (teardowns run last-registered first).
  t.teardown(() => reflector.stop())
  return { fake, store, reflector, errors, throttled, logs }
}

const lists = (fake: FakeKubeApi) => fake.requests.filter((request) => !request.watch)

t.test(
  'a list in several pages stores every object and is synced only after the last',
  async (t) => {
    const names = ['a', 'b', 'c', 'd', 'e']
    let releaseLastPage = () => {}
    const lastPageHeld = new Promise<void>((resolve) => (releaseLastPage = resolve))
    const fake = await startFakeKubeApiHolding(t, 'offset-4', lastPageHeld)
    fake.objects = names.map((name) => server(name))
    fake.resourceVersion = '42'
    const store = new NamedStore()
    const reflector = startPagedReflector(fake, store)
    t.teardown(() => reflector.stop())

    await until(() => lists(fake).length === 3, 'the last page requested')
    t.equal(reflector.synced, false, 'not synced while the last page is outstanding')
    t.equal(store.replaced, 0, 'nothing stored from a partial list')
    releaseLastPage()
    const watch = await fake.nextWatch()

    t.equal(reflector.synced, true)
    t.same(store.names(), names, 'every page is in the store')
    t.equal(store.replaced, 1, 'stored once, as a whole')
    t.same(
      lists(fake).map((request) => [request.query.limit, request.query.continue]),
      [
        ['2', undefined],
        ['2', 'offset-2'],
        ['2', 'offset-4'],
      ],
      'each page asks for the continuation the previous one returned',
    )
    t.equal(watch.query.resourceVersion, '42', 'the watch starts at the list resourceVersion')
    t.equal(watch.query.allowWatchBookmarks, 'true')
    t.ok(
      fake.requests.every((request) => request.path === PATH),
      'lists and the watch go to the collection path',
    )
    t.equal(
      store.objects.get('a')?.kind,
      'MCPServer',
      'list items get their kind back (the server omits it)',
    )
  },
)

/** A fake whose page with continue token `heldToken` waits for `release`. */
async function startFakeKubeApiHolding(
  t: Test,
  heldToken: string,
  release: Promise<void>,
): Promise<FakeKubeApi> {
  const fake = await startFakeKubeApi(t)
  fake.beforePage = (token) =>
    token === heldToken ? release.then(() => undefined) : Promise.resolve(undefined)
  return fake
}

/** The cluster moved on while the watch was away: `a` deleted, `c` created. */
function moveOn(fake: FakeKubeApi): void {
  fake.objects = [server('b', '15'), server('c', '18')]
  fake.resourceVersion = '20'
}

t.test('an ERROR event with code 410 relists from scratch', async (t) => {
  const { fake, store, errors } = await reflectorOn(t, [server('a'), server('b')], 1)
  const first = await fake.nextWatch()
  t.same(store.names(), ['a', 'b'])
  moveOn(fake)
  first.send('ERROR', statusObject(410, 'too old resource version: 10 (12)'))

  const second = await fake.nextWatch()
  t.same(store.names(), ['b', 'c'], 'the deleted object is gone, the new one is there')
  t.same(
    lists(fake).map((request) => request.query.continue),
    [undefined, 'offset-1', undefined, 'offset-1'],
    'the relist starts at the first page',
  )
  t.equal(second.query.resourceVersion, '20', 'the new watch starts at the relist')
  t.equal(errors.length, 0, 'an expired watch is not a failure (no backoff)')
})

t.test('an HTTP 410 on the watch request relists from scratch', async (t) => {
  const { fake, store, errors } = await reflectorOn(t, [server('a'), server('b')])
  const first = await fake.nextWatch()
  moveOn(fake)
  first.refuse(410, 'too old resource version: 10 (12)')

  const second = await fake.nextWatch()
  t.same(store.names(), ['b', 'c'], 'the deleted object is gone, the new one is there')
  t.equal(lists(fake).length, 2, 'listed again')
  t.equal(second.query.resourceVersion, '20')
  t.equal(errors.length, 0, 'an expired watch is not a failure (no backoff)')
})

t.test('any other watch error backs off and resumes without relisting', async (t) => {
  const { fake, errors } = await reflectorOn(t, [server('a')])
  const first = await fake.nextWatch()
  first.send('ERROR', statusObject(500, 'etcd hiccup'))

  const second = await fake.nextWatch()
  t.equal(errors.length, 1, 'counted as a failure')
  t.equal(lists(fake).length, 1, 'no relist: the resourceVersion is still good')
  t.equal(second.query.resourceVersion, '10')
})

// A 429 is the API server asking to wait: its watch cache answers so while it initializes (just
// after a CRD is created, after a restart), and priority and fairness when it sheds load.

const WAIT_LOG = 'the API server asks to wait (429); retrying'

t.test('a 429 on the watch waits the Retry-After asked for, and is not a failure', async (t) => {
  const { fake, errors, throttled, logs } = await reflectorOn(t, [server('a')])
  const first = await fake.nextWatch()
  first.refuse(429, 'storage is (re)initializing', 1)

  const second = await fake.nextWatch()
  t.equal(errors.length, 0, 'not counted as a failure')
  t.same(
    throttled.map((error) => [error.status, error.retryAfterSeconds]),
    [[429, 1]],
  )
  const waits = logs.filter((line) => line.msg === WAIT_LOG)
  t.equal(waits.length, 1)
  t.ok((waits[0]?.retryInMs ?? 0) >= 1_000, 'waited the second asked for, not the 5 ms backoff')
  t.same(
    logs.filter((line) => line.level >= 40),
    [],
    'nothing at warn',
  )
  t.equal(lists(fake).length, 1, 'no relist: the resourceVersion is still good')
  t.equal(second.query.resourceVersion, '10')
})

t.test('a 429 in the watch stream is waited out too', async (t) => {
  const { fake, errors, throttled } = await reflectorOn(t, [server('a')])
  ;(await fake.nextWatch()).send('ERROR', statusObject(429, 'too many requests'))
  const second = await fake.nextWatch()
  t.equal(throttled.length, 1)
  t.equal(errors.length, 0, 'not counted as a failure')
  t.equal(lists(fake).length, 1, 'no relist')
  t.equal(second.query.resourceVersion, '10')
})

t.test('a 429 on a list page is waited out, then the list is stored', async (t) => {
  const { fake, store, errors, throttled } = await reflectorOn(t, [server('a')])
  const first = await fake.nextWatch()
  moveOn(fake)
  let pages = 0
  fake.beforePage = async () => (++pages === 1 ? 429 : undefined)
  first.send('ERROR', statusObject(410, 'too old resource version: 10 (12)'))

  const second = await fake.nextWatch()
  t.equal(pages, 2, 'the page refused once, then answered')
  t.equal(throttled.length, 1)
  t.equal(errors.length, 0, 'not counted as a failure')
  t.same(store.names(), ['b', 'c'], 'the list after the wait is stored')
  t.equal(second.query.resourceVersion, '20')
})

t.test('a Retry-After over a minute is capped, and stop() ends the wait', async (t) => {
  const { fake, reflector, logs } = await reflectorOn(t, [server('a')])
  ;(await fake.nextWatch()).refuse(429, 'come back in an hour', 3_600)
  await until(() => logs.some((line) => line.msg === WAIT_LOG), 'the wait logged')
  t.equal(logs.find((line) => line.msg === WAIT_LOG)?.retryInMs, RETRY_AFTER_MAX_MS)
  // A wait stop() did not end would hold this test until tap's timeout.
  await reflector.stop()
  t.equal(fake.requests.filter((request) => request.watch).length, 1, 'no watch after the stop')
})

t.test(
  'after a clean watch end it resumes from the last event, then the last bookmark',
  async (t) => {
    const { fake, store, errors } = await reflectorOn(t, [server('a'), server('b')])
    const first = await fake.nextWatch()
    first.send('ADDED', server('c', '11'))
    first.send('DELETED', server('a', '12'))
    first.send('MODIFIED', server('b', '13'))
    first.end()

    const second = await fake.nextWatch()
    t.equal(second.query.resourceVersion, '13', 'resumed from the last event seen')
    t.same(store.names(), ['b', 'c'], 'events applied to the store')
    t.equal(store.objects.get('b')?.metadata?.resourceVersion, '13')
    // A bookmark carries only a resourceVersion: it moves the resume point, not the store.
    second.send('BOOKMARK', {
      kind: 'MCPServer',
      apiVersion: 'toolhive.stacklok.io/v1beta1',
      metadata: { resourceVersion: '30' },
    })
    second.end()

    const third = await fake.nextWatch()
    t.equal(third.query.resourceVersion, '30', 'resumed from the bookmark')
    t.same(store.names(), ['b', 'c'])
    t.equal(lists(fake).length, 1, 'never relisted')
    t.equal(errors.length, 0)
  },
)

t.test('stop() ends a list whose page never comes, and stores nothing', async (t) => {
  const fake = await startFakeKubeApiHolding(t, 'offset-2', new Promise<void>(() => {}))
  fake.objects = ['a', 'b', 'c'].map((name) => server(name))
  const store = new NamedStore()
  const reflector = startPagedReflector(fake, store)
  await until(() => lists(fake).length === 2, 'the second page requested')
  // Within the until() limit, far below KubeApi's 5 s request timeout.
  await until(
    (() => {
      let stopped = false
      void reflector.stop().then(() => (stopped = true))
      return () => stopped
    })(),
    'stop() to return',
  )
  t.equal(store.replaced, 0, 'nothing stored from the abandoned list')
  t.equal(reflector.synced, false)
})

// What a list holds while it runs, and what the store is handed (issue 27: the start-up peak).

/** An MCPServer as the API server sends it: with what a store's trim drops. */
function listedServer(name: string, resourceVersion = '1'): KubeObject {
  return {
    ...server(name, resourceVersion),
    metadata: {
      name,
      namespace: 'default',
      resourceVersion,
      creationTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [{ manager: 'toolhive-operator', fieldsV1: { 'f:spec': {} } }],
    },
    spec: { image: `ghcr.io/example/${name}:1.0.0`, transport: 'stdio' },
  }
}

/** A full, synchronous collection (node's gc, switched on for this process). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}

t.test('each page is kept as it arrives, and its untrimmed objects are garbage then', async (t) => {
  let releaseLastPage = () => {}
  const lastPageHeld = new Promise<void>((resolve) => (releaseLastPage = resolve))
  const fake = await startFakeKubeApiHolding(t, 'offset-4', lastPageHeld)
  fake.objects = ['a', 'b', 'c', 'd', 'e'].map((name) => listedServer(name))
  const store = new NamedStore()
  const reflector = startPagedReflector(fake, store)
  t.teardown(() => reflector.stop())

  await until(() => lists(fake).length === 3, 'the last page requested')
  t.equal(store.given.length, 4, 'the first two pages went through keep before the last came')
  t.equal(store.replaced, 0, 'and nothing is stored yet')
  collectGarbage()
  t.same(
    store.given.map((given) => given.deref() === undefined),
    [true, true, true, true],
    'no untrimmed object of a read page is still reachable',
  )
  releaseLastPage()
  await fake.nextWatch()
  t.same(store.names(), ['a', 'b', 'c', 'd', 'e'])
  t.equal(store.unkept, 0, 'replace got only what keep returned')
})

t.test('the store is handed only what keep returned, from lists and from watches', async (t) => {
  const { fake, store } = await reflectorOn(
    t,
    ['a', 'b', 'c'].map((name) => listedServer(name)),
    2,
  )
  const watch = await fake.nextWatch()
  watch.send('ADDED', listedServer('d', '11'))
  watch.send('MODIFIED', listedServer('a', '12'))
  watch.send('DELETED', listedServer('b', '13'))
  await until(() => store.names().join() === 'a,c,d', 'the events applied')

  t.equal(store.unkept, 0, 'nothing untrimmed reached replace, upsert or remove')
  t.equal(store.given.length, 6, 'keep saw every listed object and every event')
  t.same(
    [...store.objects.values()].map((object) => Object.keys(object.metadata ?? {}).sort()),
    [
      ['name', 'namespace', 'resourceVersion'],
      ['name', 'namespace', 'resourceVersion'],
      ['name', 'namespace', 'resourceVersion'],
    ],
    'what the store holds is what its keep made',
  )
  t.equal(store.objects.get('a')?.metadata?.resourceVersion, '12')
  t.equal(store.objects.get('a')?.kind, 'MCPServer', 'keep gets the object with its kind back')
})

t.test('a relist that fails on page 2 leaves the old store whole', async (t) => {
  const { fake, store, errors } = await reflectorOn(t, [server('a'), server('b'), server('c')], 2)
  const first = await fake.nextWatch()
  const before = new Map(store.objects)
  // The cluster moved on: a deleted, b changed, d created; the relist's second page fails once.
  fake.objects = [server('b', '15'), server('c'), server('d', '18')]
  fake.resourceVersion = '20'
  let refusals = 0
  let releaseRetry = () => {}
  const retryHeld = new Promise<void>((resolve) => (releaseRetry = resolve))
  fake.beforePage = async (token) => {
    if (token !== 'offset-2') return undefined
    if (++refusals === 1) return 500
    await retryHeld
    return undefined
  }
  first.send('ERROR', statusObject(410, 'too old resource version: 10 (12)'))

  // The retry has read its first page again and waits for the second.
  await until(() => refusals === 2, 'the relist retried after the failed page')
  t.equal(errors.length, 1, 'the failed page counted as a failure')
  t.equal(store.replaced, 1, 'not replaced by the failed list, nor by the half-read retry')
  t.same(store.names(), ['a', 'b', 'c'], 'the old objects, all of them')
  t.ok(
    [...before].every(([name, object]) => store.objects.get(name) === object),
    'each the very object stored before',
  )

  releaseRetry()
  const second = await fake.nextWatch()
  t.equal(store.replaced, 2)
  t.same(store.names(), ['b', 'c', 'd'], 'the deleted object is gone once a list succeeds')
  t.equal(store.objects.get('b')?.metadata?.resourceVersion, '15')
  t.equal(second.query.resourceVersion, '20', 'the watch resumes from the list that succeeded')
})

/** A started reflector of MCPServers into `store`, listing in pages of two. */
function startPagedReflector(fake: FakeKubeApi, store: ReflectorStore): Reflector {
  const reflector = new Reflector(fake.api, SERVERS, store, pino({ level: 'silent' }), {
    pageSize: 2,
    backoff: { initialMs: 1, maxMs: 5 },
  })
  reflector.start()
  return reflector
}
