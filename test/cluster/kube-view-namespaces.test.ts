/**
 * KubeView's namespaces (against a fake API server with a real KubeApi): which are terminating,
 * from the list and the watch, and that readiness never waits for them (the delete guard, the one
 * reader, fails open: before namespaces are listed every answer is false).
 */

import { setTimeout as sleep } from 'node:timers/promises'
import { pino } from 'pino'
import t from 'tap'
import type { Test } from 'tap'
import { KubeView } from '../../src/cluster/kube-view.ts'
import { VIEW_RESOURCES } from '../../src/cluster/resources.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { startFakeKubeApi, statusObject } from '../helpers/fake-kube-api.ts'
import type { FakeKubeApi } from '../helpers/fake-kube-api.ts'

const MCP_SERVERS = VIEW_RESOURCES.filter((resource) => resource.kind === 'MCPServer')
const DELETED_AT = '2026-03-01T12:00:00Z'

/** A Namespace as the API server sends it: status, labels and managedFields, which are not kept. */
function namespace(name: string, deletionTimestamp?: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: '5',
      labels: { 'kubernetes.io/metadata.name': name },
      managedFields: [{ manager: 'kubectl-create' }],
      ...(deletionTimestamp === undefined ? {} : { deletionTimestamp }),
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: deletionTimestamp === undefined ? 'Active' : 'Terminating' },
  }
}

function startView(t: Test, fake: FakeKubeApi) {
  const errors: string[] = []
  const warnings: string[] = []
  let synced = 0
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) },
  )
  const view = new KubeView({
    api: fake.api,
    logger,
    resources: MCP_SERVERS,
    reflector: { pageSize: 2, backoff: { initialMs: 1, maxMs: 5 } },
    onWatchError: (kind) => errors.push(kind),
    onSynced: () => synced++,
  })
  view.start()
  t.teardown(() => view.stop())
  return { view, errors, warnings, synced: () => synced }
}

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(2)
  }
}

t.test('terminating after the list and after a MODIFIED event; DELETED removes it', async (t) => {
  const fake = await startFakeKubeApi(t)
  fake.namespaces = [
    namespace('team-a'),
    namespace('going', DELETED_AT),
    namespace('team-b'),
    namespace('team-c'),
    namespace('also-going', DELETED_AT),
  ]
  const { view } = startView(t, fake)
  const watch = await fake.nextNamespaceWatch()

  t.same(
    fake.namespaceRequests.map((request) => [request.watch, request.query.continue]),
    [
      [false, undefined],
      [false, 'offset-2'],
      [false, 'offset-4'],
      [true, undefined],
    ],
    'listed in pages at /api/v1/namespaces (cluster-scoped), then watched',
  )
  t.equal(view.isTerminating('going'), true, 'from a list page')
  t.equal(view.isTerminating('also-going'), true, 'from the last page')
  t.equal(view.isTerminating('team-a'), false)
  t.equal(view.isTerminating('nowhere'), false, 'a namespace not listed is not terminating')

  watch.send('MODIFIED', namespace('team-a', DELETED_AT))
  await until('team-a terminating', () => view.isTerminating('team-a'))
  t.pass('terminating after a MODIFIED event sets its deletionTimestamp')

  watch.send('DELETED', namespace('going', DELETED_AT))
  await until('going gone', () => !view.isTerminating('going'))
  t.pass('a DELETED namespace leaves the set')
  // Created again under the same name: a new namespace, not terminating.
  watch.send('ADDED', namespace('going'))
  watch.send('MODIFIED', namespace('team-b'))
  watch.send('BOOKMARK', { kind: 'Namespace', metadata: { resourceVersion: '9' } })
  // Nameless (malformed): nothing to add or remove.
  watch.send('MODIFIED', { metadata: { deletionTimestamp: DELETED_AT } })
  watch.send('DELETED', { metadata: {} })
  // Events apply in order: once this one shows, the ones before it have been applied.
  watch.send('ADDED', namespace('marker', DELETED_AT))
  await until('the marker', () => view.isTerminating('marker'))
  t.equal(view.isTerminating('going'), false, 'created again: not terminating')
  t.equal(view.isTerminating('team-a'), true, 'the rest unchanged')

  // A relist (the watch expired) replaces everything: what is gone, or no longer listed as
  // terminating, leaves the set even though no DELETED event was seen.
  fake.namespaces = [namespace('team-b'), namespace('new-going', DELETED_AT)]
  watch.send('ERROR', statusObject(410, 'too old resource version'))
  await fake.nextNamespaceWatch()
  t.equal(view.isTerminating('team-a'), false, 'gone while unwatched: dropped by the relist')
  t.equal(view.isTerminating('also-going'), false)
  t.equal(view.isTerminating('new-going'), true)
})

t.test('readiness does not wait for the namespaces list', async (t) => {
  const fake = await startFakeKubeApi(t)
  fake.namespaces = [namespace('going', DELETED_AT)]
  const { promise: held, resolve: release } = Promise.withResolvers<undefined>()
  fake.beforeNamespacesPage = () => held
  const { view, synced } = startView(t, fake)

  await fake.nextWatch()
  t.equal(view.isSynced(), true, 'synced with every served kind listed')
  t.equal(view.isReady(), true)
  t.equal(synced(), 1, 'onSynced called')
  t.same(
    fake.namespaceRequests.map((request) => request.watch),
    [false],
    'while the namespaces list is still under way',
  )
  t.equal(view.isTerminating('going'), false, 'not listed yet: false')

  release(undefined)
  await fake.nextNamespaceWatch()
  t.equal(view.isTerminating('going'), true, 'listed')
  t.equal(synced(), 1, 'the namespaces list is no sync of the view')
})

for (const status of [403, 500]) {
  t.test(`a namespaces list that fails (${status}) does not block readiness`, async (t) => {
    const fake = await startFakeKubeApi(t)
    fake.namespaces = [namespace('going', DELETED_AT)]
    let failing = true
    fake.beforeNamespacesPage = async () => (failing ? status : undefined)
    const { view, errors, warnings } = startView(t, fake)

    await fake.nextWatch()
    await until('three failed lists', () => errors.length >= 3)
    t.equal(view.isSynced(), true)
    t.equal(view.isReady(), true)
    t.same(view.degradedKinds(), new Map(), 'no kind is degraded by it')
    t.equal(view.isTerminating('going'), false, 'not listed: false')
    t.same([...new Set(errors)], ['Namespace'], 'each failure counted, as kind Namespace')
    const explained = warnings.filter((line) => line.startsWith('namespaces cannot be listed'))
    if (status === 403)
      t.match(explained, [/a DELETE in a terminating namespace is checked for referrers/])
    t.equal(explained.length, status === 403 ? 1 : 0, 'a refusal is explained once')

    // Retried with backoff: once the list succeeds the answer is there.
    failing = false
    await fake.nextNamespaceWatch()
    t.equal(view.isTerminating('going'), true, 'listed once it succeeds')
  })
}
