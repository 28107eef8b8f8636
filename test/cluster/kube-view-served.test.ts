/**
 * KubeView follows what the cluster serves (API discovery, against a fake API server with a real
 * KubeApi): a kind not served is neither watched nor waited for, one that appears, moves or goes is
 * followed without a restart, and a list that is refused or keeps failing stops holding readiness.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import { pino } from 'pino'
import t from 'tap'
import type { Test } from 'tap'
import { withDeadline } from '../../src/admission/deadline.ts'
import type { KubeApi } from '../../src/cluster/kube-api.ts'
import { KubeView } from '../../src/cluster/kube-view.ts'
import { VIEW_RESOURCES } from '../../src/cluster/resources.ts'
import type { ViewResource } from '../../src/cluster/resources.ts'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import type { ToolHiveKind } from '../../src/policy/kinds.ts'
import type { KindTable } from '../../src/policy/kinds.ts'
import { startFakeKubeApi } from '../helpers/fake-kube-api.ts'
import type { FakeKubeApi } from '../helpers/fake-kube-api.ts'

const WITHOUT_WEBHOOK_CONFIG = VIEW_RESOURCES.filter((r) => r.kind !== 'MCPWebhookConfig')

function startView(
  t: Test,
  fake: FakeKubeApi,
  options: { syncGraceMs?: number; discoveryIntervalMs?: number; kinds?: KindTable } = {},
) {
  const lines: { level: number; msg: string; kind?: string }[] = []
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) },
  )
  let watchErrors = 0
  const view = new KubeView({
    api: fake.api,
    logger,
    discoveryIntervalMs: options.discoveryIntervalMs ?? 30,
    syncGraceMs: options.syncGraceMs ?? 60_000,
    reflector: { backoff: { initialMs: 5, maxMs: 20 } },
    onWatchError: () => watchErrors++,
    ...(options.kinds ? { kinds: options.kinds } : {}),
  })
  view.start()
  t.teardown(() => view.stop())
  const warnings = () => lines.filter((line) => line.level === 40).map((line) => line.msg)
  return { view, warnings, watchErrors: () => watchErrors }
}

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(5)
  }
}

const listsOf = (fake: FakeKubeApi, plural: string) =>
  fake.requests.filter((request) => request.path.endsWith(`/${plural}`))

t.test(
  'a kind the cluster does not serve is not watched, and does not hold readiness',
  async (t) => {
    const fake = await startFakeKubeApi(t)
    fake.served = WITHOUT_WEBHOOK_CONFIG
    // Every collection the fake lists holds one object of this name.
    fake.objects = [{ metadata: { name: 'hooks', namespace: 'team' } }]
    const { view, warnings } = startView(t, fake)
    await until('ready', () => view.isReady())
    t.equal(view.isSynced(), true, 'every served kind listed')
    t.equal(view.serves('MCPWebhookConfig'), false)
    t.equal(view.serves('MCPServer'), true)
    t.same(listsOf(fake, 'mcpwebhookconfigs'), [], 'never listed or watched')
    t.match(warnings(), [/^MCPWebhookConfig is not served by the cluster: .*webhookConfigRef/])
    t.equal(warnings().length, 1, 'one line, for what is off')

    // Its CRD installed later: picked up by the next discovery round, no restart.
    fake.served = VIEW_RESOURCES
    await until('MCPWebhookConfig watched', () => view.isSynced('MCPWebhookConfig'))
    t.ok(listsOf(fake, 'mcpwebhookconfigs').length > 0, 'listed once served')
    t.match(warnings()[1], /^MCPWebhookConfig is served at toolhive.stacklok.dev\/v1alpha1/)

    // And removed again: no longer watched, its cached objects dropped and reported.
    t.equal(view.keysOf('MCPWebhookConfig').length, 1, 'its object cached')
    const dropped: string[] = []
    view.onChange((key) => dropped.push(`${key.kind}/${key.name}`))
    fake.served = WITHOUT_WEBHOOK_CONFIG
    await until('MCPWebhookConfig dropped', () => !view.serves('MCPWebhookConfig'))
    t.equal(view.isReady(), true, 'still ready')
    t.equal(view.isSynced('MCPWebhookConfig'), false)
    t.match(
      warnings()[2],
      /^MCPWebhookConfig is not served by the cluster \(was toolhive.stacklok.dev\/v1alpha1\)/,
    )
    t.equal(warnings().length, 3, 'one line per change')
    t.same(view.keysOf('MCPWebhookConfig'), [], 'its objects dropped from the cache')
    t.same(dropped, ['MCPWebhookConfig/hooks'], 'and reported')
    t.equal(view.keysOf('MCPServer').length, 1, 'the served kinds keep theirs')
  },
)

t.test('a kind that moves version is relisted there, and stays ready meanwhile', async (t) => {
  const fake = await startFakeKubeApi(t)
  const at = (version: string): ViewResource[] =>
    VIEW_RESOURCES.map((r) => (r.kind === 'MCPServer' ? { ...r, version } : r))
  fake.served = at('v1alpha1')
  fake.objects = [{ metadata: { name: 'a', namespace: 'team' } }]
  const { view, warnings } = startView(t, fake)
  await until('synced', () => view.isSynced())
  t.ok(
    fake.requests.some((r) => r.path === '/apis/toolhive.stacklok.dev/v1alpha1/mcpservers'),
    'listed at the version served',
  )
  t.equal(view.resourceOf('MCPServer')?.version, 'v1alpha1')

  // The new version's list is held: the cache still holds the kind, so the view can answer.
  // Every page is held (another kind may relist meanwhile), and all are let go together.
  const held: (() => void)[] = []
  fake.beforePage = () =>
    new Promise((resolve) => {
      held.push(() => {
        resolve(undefined)
      })
    })
  fake.served = at('v1beta1')
  await until('the relist at v1beta1', () =>
    fake.requests.some((r) => r.path === '/apis/toolhive.stacklok.dev/v1beta1/mcpservers'),
  )
  t.equal(view.isReady(), true, 'ready while the moved kind relists')
  t.equal(view.keysOf('MCPServer').length, 1, 'its objects kept meanwhile')
  fake.beforePage = async () => undefined
  for (const release of held) release()
  await until('synced at v1beta1', () => view.isSynced('MCPServer'))
  t.ok(fake.requests.some((r) => r.path === '/apis/toolhive.stacklok.dev/v1beta1/mcpservers'))
  t.match(warnings(), [
    /^MCPServer moved from toolhive.stacklok.dev\/v1alpha1 to toolhive.stacklok.dev\/v1beta1/,
  ])
})

t.test(
  'a refused list stops holding readiness at once; the cache is used once it lists',
  async (t) => {
    const fake = await startFakeKubeApi(t)
    let refuse = true
    fake.beforePage = async () => (refuse ? 403 : undefined)
    const { view, warnings } = startView(t, fake)
    await until('ready, degraded', () => view.isReady())
    t.equal(view.isSynced(), false, 'nothing listed')
    // Readiness waits for some kinds only; each of the others is refused in its own time.
    await until('every kind degraded', () => view.degradedKinds().size === VIEW_RESOURCES.length)
    t.same([...view.degradedKinds().keys()].sort(), VIEW_RESOURCES.map((r) => r.kind).sort())
    const degraded = warnings().filter((line) => line.startsWith('serving without'))
    t.equal(degraded.length, VIEW_RESOURCES.length, 'one line per kind')
    t.match(degraded[0], /^serving without a cache of \w+: the list is refused: .*403/)

    refuse = false
    await until('synced', () => view.isSynced())
    await until('every kind listed', () =>
      VIEW_RESOURCES.every((r) => view.isSynced(r.kind as ToolHiveKind)),
    )
    t.same([...view.degradedKinds().keys()], [], 'no longer degraded')
  },
)

t.test('a kind whose entry says readiness does not wait is watched, not waited for', async (t) => {
  const fake = await startFakeKubeApi(t)
  let failing = true
  // Called as the list arrives, so the last request recorded is this one.
  fake.beforePage = async () =>
    failing && fake.requests.at(-1)?.path.endsWith('/mcpservers') ? 500 : undefined
  const kinds = TOOLHIVE_KIND_TABLE.map((entry) =>
    entry.kind === 'MCPServer'
      ? { ...entry, view: { ...entry.view, readinessWaits: false } }
      : entry,
  )
  const waiting = startView(t, fake).view
  const { view } = startView(t, fake, { kinds })
  await until('ready', () => view.isReady())
  t.equal(view.isSynced(), true, 'synced: every kind it waits for has listed')
  t.equal(view.isSynced('MCPServer'), false)
  t.equal(waiting.isReady(), false, 'with the real table it waits')
  t.ok(listsOf(fake, 'mcpservers').length > 0, 'listed all the same')
  failing = false
  await until('its cache', () => view.isSynced('MCPServer'))
  await until('the other view', () => waiting.isReady())
})

for (const [status, counted] of [
  [500, true],
  [429, false],
] as const) {
  t.test(`a list answered ${status} stops holding readiness after the grace period`, async (t) => {
    const fake = await startFakeKubeApi(t)
    fake.beforePage = async () => status
    const { view, warnings, watchErrors } = startView(t, fake, { syncGraceMs: 300 })
    await sleep(100)
    t.equal(view.isReady(), false, 'waited for within the grace period')
    await until('ready, degraded', () => view.isReady())
    t.equal(view.isSynced(), false)
    // Readiness waits for some kinds only; each of the others is given up on in its own time.
    await until('every kind degraded', () => view.degradedKinds().size === VIEW_RESOURCES.length)
    const degraded = warnings().filter((line) => line.startsWith('serving without'))
    t.equal(degraded.length, VIEW_RESOURCES.length, 'one line per kind')
    t.match(
      degraded[0],
      new RegExp(`^serving without a cache of \\w+: not synced within 0.3 s: .*${status}`),
    )
    // A 429 asks to wait: the reason a kind stays unsynced, not a failure to count.
    t.equal(watchErrors() > 0, counted, counted ? 'counted as failures' : 'not counted')
  })
}

t.test(
  'not ready until discovery has answered once; its failures keep what was known',
  async (t) => {
    const fake = await startFakeKubeApi(t)
    fake.served = 503
    const { view, warnings } = startView(t, fake)
    await until('a discovery attempt', () => fake.requests.length > 0)
    await sleep(50)
    t.equal(view.isReady(), false, 'nothing known yet')
    t.match(warnings(), [/^cannot read API discovery; not ready until the served kinds are known/])
    fake.served = VIEW_RESOURCES
    await until('ready', () => view.isReady(), 5_000)

    fake.served = 503
    const requests = fake.requests.length
    await until('another discovery attempt', () => fake.requests.length > requests + 2)
    t.equal(view.serves('MCPServer'), true, 'a failed round turns nothing off')
    t.equal(view.isReady(), true)
  },
)

t.test('a live read of a kind not known to be served asks discovery again first', async (t) => {
  const fake = await startFakeKubeApi(t)
  fake.served = WITHOUT_WEBHOOK_CONFIG.filter((r) => r.kind !== 'MCPServer')
  // Rounds far apart: only the read can make the view look again.
  const { view } = startView(t, fake, { discoveryIntervalMs: 60_000 })
  await until('ready', () => view.isReady())
  // MCPServer's CRD appears; MCPWebhookConfig's does not.
  fake.served = WITHOUT_WEBHOOK_CONFIG
  // Past the refresh's minimum gap after the round that made it ready.
  await sleep(1_100)
  const before = fake.requests.length
  await view.get({ kind: 'MCPServer', namespace: 'team', name: 'demo' }, { live: true })
  const paths = fake.requests.slice(before).map((r) => r.path)
  t.equal(paths[0], '/apis/toolhive.stacklok.dev', 'discovery first')
  t.ok(paths.includes('/apis/toolhive.stacklok.dev/v1beta1/namespaces/team/mcpservers/demo'))
  t.equal(view.serves('MCPServer'), true)

  // Still not served after asking (and asked again at most once a second): no read at all.
  const after = fake.requests.length
  t.equal(
    await view.get({ kind: 'MCPWebhookConfig', namespace: 'team', name: 'x' }, { live: true }),
    undefined,
  )
  t.same(fake.requests.slice(after), [], 'nothing asked within a second of the last round')
})

/** An API server that never answers, until the request is aborted. */
function hungApi(): KubeApi {
  return {
    get: (_path: string, _query: unknown, signal?: AbortSignal) =>
      new Promise((_resolve, reject) => {
        signal?.addEventListener('abort', () => {
          reject(new Error('aborted'))
        })
      }),
    close: () => undefined,
  } as unknown as KubeApi
}

t.test('a live read does not wait on a hung discovery past its deadline', async (t) => {
  const hung = hungApi()
  const view = new KubeView({ api: hung, logger: pino({ level: 'silent' }) })
  t.teardown(() => view.stop())
  // As admission reads: under withDeadline (here 100 ms instead of 2 s). The API never answers,
  // so without the deadline this would wait until the test's timeout.
  await t.rejects(
    withDeadline(
      (signal) =>
        view.get({ kind: 'MCPServer', namespace: 'team', name: 'demo' }, { live: true, signal }),
      100,
    ),
    {
      name: 'ClusterReadError',
      message:
        'cannot read MCPServer team/demo from the API server: GET /apis/toolhive.stacklok.dev: no answer before the deadline',
      // What lets the operator's own proxy Deployment write through a slow API server.
      deadlineMissed: true,
    },
  )
})

t.test('a live read ended for another reason did not miss a deadline', async (t) => {
  const hung = hungApi()
  const view = new KubeView({ api: hung, logger: pino({ level: 'silent' }) })
  t.teardown(() => view.stop())
  const controller = new AbortController()
  setTimeout(() => {
    controller.abort(new Error('shutting down'))
  }, 20)
  await t.rejects(
    view.get(
      { kind: 'MCPServer', namespace: 'team', name: 'demo' },
      { live: true, signal: controller.signal },
    ),
    { name: 'ClusterReadError', deadlineMissed: false },
  )
})
