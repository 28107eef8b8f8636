/**
 * KubeView against a fake API server (real KubeApi, loopback HTTP): when it reports synced, and
 * what it caches.
 */

import { pino } from 'pino'
import t from 'tap'
import type { Test } from 'tap'
import { KubeView } from '../../src/cluster/kube-view.ts'
import { objectKey } from '../../src/cluster/memory-view.ts'
import { VIEW_RESOURCES } from '../../src/cluster/resources.ts'
import { trimForView } from '../../src/cluster/trim.ts'
import type { ViewResource } from '../../src/cluster/resources.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { startFakeKubeApi, statusObject } from '../helpers/fake-kube-api.ts'
import type { FakeKubeApi } from '../helpers/fake-kube-api.ts'

t.test('onSynced is called once, when every resource has been listed', async (t) => {
  const fake = await startFakeKubeApi(t)
  fake.resourceVersion = '7'
  // What the view saw at each call: the hook exists to run before the view first reports synced.
  const calls: boolean[] = []
  const view = new KubeView({
    api: fake.api,
    logger: pino({ level: 'silent' }),
    reflector: { backoff: { initialMs: 1, maxMs: 5 } },
    onSynced: () => calls.push(view.isSynced()),
  })
  view.start()
  t.teardown(() => view.stop())

  const watches = await Promise.all(VIEW_RESOURCES.map(() => fake.nextWatch()))
  t.equal(view.isSynced(), true)
  t.same(calls, [true], 'once, with every resource listed')
  t.same(
    fake.requests.filter((request) => /\/(configmaps|deployments)$/.test(request.path)),
    [],
    'ConfigMaps and Deployments are never listed or watched: they are read live, one at a time',
  )

  // A relist (the watch expired) is no new initial sync.
  const lists = () => fake.requests.filter((request) => !request.watch).length
  const listed = lists()
  watches[0]?.send('ERROR', statusObject(410, 'too old resource version'))
  await fake.nextWatch()
  t.equal(lists(), listed + 1, 'relisted')
  // The relist stores its objects before it watches again, so any call would have come by now.
  t.same(calls, [true], 'not called again')
})

t.test('a list in several pages is cached trimmed: nothing the trim drops survives', async (t) => {
  const noise = {
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'toolhive-operator', fieldsV1: { 'f:data': {} } }],
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"huge": "copy"}' },
  }
  const listed: Record<string, (name: string) => KubeObject> = {
    MCPServer: (name) => ({
      apiVersion: 'toolhive.stacklok.dev/v1beta1',
      kind: 'MCPServer',
      metadata: { name, namespace: 'default', uid: `uid-${name}`, ...noise },
      spec: { image: 'ghcr.io/example/fetch:1.0.0', transport: 'stdio' },
    }),
  }
  for (const [kind, build] of Object.entries(listed)) {
    await t.test(kind, async (t) => {
      const resource = VIEW_RESOURCES.find((candidate) => candidate.kind === kind)!
      const fake = await startFakeKubeApi(t)
      const objects = ['a', 'b', 'c', 'd', 'e'].map(build)
      fake.objects = objects
      const view = startPagedView(t, fake, resource)
      await fake.nextWatch()

      t.equal(view.keysOf(resource.kind).length, 5, 'every page is cached')
      for (const object of objects) {
        const cached = await view.cached(objectKey(object)!)
        t.same(
          cached,
          trimForView(resource.kind, object),
          `${String(object.metadata?.name)} as trimmed`,
        )
        t.equal(cached?.metadata?.['managedFields'], undefined)
        t.equal(cached?.metadata?.['creationTimestamp'], undefined)
      }
    })
  }
})

t.test('a relist drops what is gone and reports every change', async (t) => {
  const resource = VIEW_RESOURCES.find((candidate) => candidate.kind === 'MCPServer')!
  const server = (name: string, namespace: string): KubeObject => ({
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPServer',
    metadata: { name, namespace },
  })
  const fake = await startFakeKubeApi(t)
  fake.objects = [server('a', 'one'), server('b', 'one'), server('a', 'two')]
  const view = startPagedView(t, fake, resource)
  const keys = () =>
    view
      .keysOf('MCPServer')
      .map((key) => `${key.namespace}/${key.name}`)
      .sort()
  const first = await fake.nextWatch()
  t.same(keys(), ['one/a', 'one/b', 'two/a'])

  const changed: string[] = []
  view.onChange((key) => changed.push(`${key.namespace}/${key.name}`))
  // Same name in another namespace: only the namespace tells them apart.
  fake.objects = [server('b', 'one'), server('a', 'two'), server('c', 'two')]
  first.send('ERROR', statusObject(410, 'too old resource version'))
  await fake.nextWatch()
  t.same(keys(), ['one/b', 'two/a', 'two/c'], 'one/a is gone, two/c is new')
  t.same(changed.sort(), ['one/a', 'one/b', 'two/a', 'two/c'], 'listed and dropped keys reported')
})

t.test('the referrers of an object, from the cache or listed live a page at a time', async (t) => {
  const resource = VIEW_RESOURCES.find((candidate) => candidate.kind === 'MCPServer')!
  const server = (i: number): KubeObject => ({
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPServer',
    metadata: { name: `s${String(i).padStart(3, '0')}`, namespace: 'team' },
    spec: i % 2 === 0 ? { webhookConfigRef: { name: 'hooks' } } : {},
  })
  const fake = await startFakeKubeApi(t)
  // More than one live page (500 a page); every other server names the config.
  fake.objects = Array.from({ length: 503 }, (_, i) => server(i))
  const view = startPagedView(t, fake, resource)
  await fake.nextWatch()
  const hooks = { kind: 'MCPWebhookConfig', namespace: 'team', name: 'hooks' } as const
  const names = (referrers: { name: string; path: string }[]) =>
    referrers.map((referrer) => `${referrer.name} ${referrer.path}`)
  const expected = fake.objects
    .filter((_, i) => i % 2 === 0)
    .map((object) => `${String(object.metadata?.name)} spec.webhookConfigRef.name`)
  t.same(names(await view.referrersOf(hooks)), expected, 'from the cache')

  // Named a moment ago, not yet watched: a live list finds it.
  fake.objects = [
    ...fake.objects,
    { ...server(503), spec: { webhookConfigRef: { name: 'hooks' } } },
  ]
  const before = fake.requests.length
  const live = await view.referrersOf(hooks, { live: true })
  t.same(names(live), [...expected, 's503 spec.webhookConfigRef.name'], 'listed live')
  t.same(
    fake.requests.slice(before).map((request) => [request.path, request.query.continue]),
    [
      ['/apis/toolhive.stacklok.dev/v1beta1/namespaces/team/mcpservers', undefined],
      ['/apis/toolhive.stacklok.dev/v1beta1/namespaces/team/mcpservers', 'offset-500'],
    ],
    'the namespace of the referring kind only, in pages',
  )
  t.same(await view.referrersOf({ ...hooks, kind: 'MCPServer' }, { live: true }), [])

  fake.beforePage = async () => 500
  await t.rejects(view.referrersOf(hooks, { live: true }), {
    name: 'ClusterReadError',
    message: /^cannot read the MCPServers of namespace team from the API server: /,
  })
})

t.test('no referrers are listed of a kind the cluster does not serve', async (t) => {
  const resource = VIEW_RESOURCES.find((candidate) => candidate.kind === 'MCPWebhookConfig')!
  const fake = await startFakeKubeApi(t)
  const view = startPagedView(t, fake, resource)
  await fake.nextWatch()
  const before = fake.requests.length
  t.same(
    await view.referrersOf(
      { kind: 'MCPWebhookConfig', namespace: 'team', name: 'hooks' },
      { live: true },
    ),
    [],
  )
  t.equal(fake.requests.length, before, 'nothing read')
})

/** A started view of `resource` alone, listing in pages of two, stopped when `t` ends. */
function startPagedView(t: Test, fake: FakeKubeApi, resource: ViewResource): KubeView {
  const view = new KubeView({
    api: fake.api,
    logger: pino({ level: 'silent' }),
    resources: [resource],
    reflector: { pageSize: 2, backoff: { initialMs: 1, maxMs: 5 } },
  })
  view.start()
  t.teardown(() => view.stop())
  return view
}
