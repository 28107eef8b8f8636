/**
 * The informer-backed cluster view against the real API server: ready at once when no ToolHive
 * kind is served, follows CRDs installed later, sees what is created through the API, holds
 * trimmed copies, reads live on a cache miss, sees a namespace being deleted, and recovers by
 * itself after the API server is stopped and started again.
 */

import { KubeConfig } from '@kubernetes/client-node'
import { pino } from 'pino'
import t from 'tap'
import { KubeApi } from '../../src/cluster/kube-api.ts'
import { kubeConfigCredentials } from '../../src/cluster/kubeconfig-credentials.ts'
import { KubeView } from '../../src/cluster/kube-view.ts'
import type { ObjectKey } from '../../src/cluster/view.ts'
import { mustKubectl, startEnvironment, waitFor } from './harness/environment.ts'

// The identity but no CRDs yet (the first test installs them), and the shipped server as the
// service account, whose readiness must follow its view; no webhooks.
const env = await startEnvironment(t, {
  crds: [],
  service: { waitUntilReady: false },
  webhooks: false,
})
const { plane, kubectl, admission } = env

// The view under test runs in this process, as the service account, like the shipped server.
const config = new KubeConfig()
config.loadFromFile(await env.serviceAccountKubeconfig())
const view = new KubeView({
  api: new KubeApi(kubeConfigCredentials(config)),
  logger: pino({ level: 'silent' }),
  reflector: { backoff: { initialMs: 100, maxMs: 1_000 } },
})
view.start()
t.teardown(() => view.stop())

const apply = (object: unknown) =>
  mustKubectl(kubectl, ['apply', '--server-side', '-f', '-'], JSON.stringify(object))

t.test(
  'with no ToolHive CRD, ready at once; CRDs installed later are watched, no restart',
  async (t) => {
    // Nothing of ToolHive is served: nothing to list, so nothing to wait for (issue 35).
    await waitFor(
      'the view to know what is served',
      async () => (view.isReady() ? true : undefined),
      {
        timeoutMs: 15_000,
      },
    )
    t.equal(view.serves('MCPServer'), false)
    t.equal(view.isSynced(), true, 'every served kind (none) listed')
    await waitFor(
      'the server to be ready',
      async () => ((await admission.probe('/readyz')).status === 200 ? true : undefined),
      { timeoutMs: 15_000 },
    )

    await env.installCrds('fixtures')
    // Discovery looks again every 10 s; each kind is then listed and watched.
    await waitFor(
      'the view to serve and sync every kind',
      async () =>
        view.serves('MCPServer') && view.serves('MCPWebhookConfig') && view.isSynced()
          ? true
          : undefined,
      { timeoutMs: 30_000 },
    )
    t.equal((await admission.probe('/readyz')).status, 200, 'ready throughout')
    t.pass('synced once the resources are served')
  },
)

const ns = 'view-test'
const server = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'toolhive.stacklok.dev/v1beta1',
  kind: 'MCPServer',
  metadata: { name, namespace: ns },
  spec: { image: 'ghcr.io/example/server:1', transport: 'stdio', ...extra },
})
const key = (kind: ObjectKey['kind'], name: string): ObjectKey => ({ kind, namespace: ns, name })
/** The names of the cached objects whose references name the MCPWebhookConfig `name`. */
const referring = async (name: string) =>
  (await view.referrersOf({ kind: 'MCPWebhookConfig', namespace: ns, name })).map(
    (referrer) => referrer.name,
  )

t.test('sees objects created through the API, trimmed; ConfigMaps only live', async (t) => {
  await mustKubectl(kubectl, ['create', 'namespace', ns])
  await apply(server('alpha', { webhookConfigRef: { name: 'hooks' } }))
  await mustKubectl(
    kubectl,
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'alpha-runconfig',
        namespace: ns,
        labels: { 'toolhive.stacklok.io/component': 'run-config' },
      },
      data: { 'runconfig.json': '{"name":"alpha","padding":"' + 'x'.repeat(10_000) + '"}' },
    }),
  )

  const cachedServer = await waitFor(
    'MCPServer alpha in the cache',
    () => view.cached(key('MCPServer', 'alpha')),
    { timeoutMs: 15_000 },
  )
  t.equal(cachedServer.kind, 'MCPServer')
  t.equal(cachedServer.apiVersion, 'toolhive.stacklok.dev/v1beta1')
  t.match(cachedServer.metadata, { name: 'alpha', namespace: ns, uid: String, generation: 1 })
  t.equal(cachedServer.metadata?.['managedFields'], undefined, 'no managedFields')
  t.equal(cachedServer.metadata?.['creationTimestamp'], undefined)
  t.same(
    cachedServer['spec'],
    { transport: 'stdio', webhookConfigRef: { name: 'hooks' } },
    'of the spec, what the rules read (its kind entry says which)',
  )
  t.same(await referring('hooks'), ['alpha'])

  // RunConfig ConfigMaps are never listed or watched (RBAC grants `get` only): a proxy
  // Deployment's review reads its one ConfigMap live, trimmed like a cached object.
  const runConfig = key('ConfigMap', 'alpha-runconfig')
  t.equal(await view.get(runConfig, { cacheOnly: true }), undefined, 'not in the cache')
  const liveMap = await view.get(runConfig, { live: true })
  t.equal(liveMap?.['data'], undefined, 'ConfigMap data is reduced to its checksum')
  const annotations = liveMap?.metadata?.annotations as Record<string, string>
  t.match(annotations['toolhive.stacklok.dev/content-checksum'], /^[0-9a-f]{64}$/)
  t.equal(
    annotations['kubectl.kubernetes.io/last-applied-configuration'],
    undefined,
    'no last-applied copy',
  )
  t.ok(
    JSON.stringify(liveMap).length < 1_000,
    'what is kept of the 10 KB ConfigMap is well under 1 KB',
  )
  t.equal(await view.cached(runConfig), undefined, 'a live read does not fill the cache')
})

t.test('follows updates and deletes', async (t) => {
  await apply(server('alpha', { webhookConfigRef: { name: 'other' } }))
  await waitFor(
    'the update',
    async () => ((await referring('other')).length === 1 ? true : undefined),
    { timeoutMs: 15_000 },
  )
  t.same(await referring('hooks'), [])
  t.equal((await view.cached(key('MCPServer', 'alpha')))?.metadata?.generation, 2)

  await mustKubectl(kubectl, ['delete', 'mcpserver.toolhive.stacklok.dev', 'alpha', '-n', ns])
  await waitFor(
    'the delete',
    async () => ((await view.cached(key('MCPServer', 'alpha'))) === undefined ? true : undefined),
    { timeoutMs: 15_000 },
  )
  t.pass('gone from the cache')
})

t.test('a cache miss reads live, unless the read is cache-only', async (t) => {
  // ConfigMaps are never watched; only a live read can find one.
  await mustKubectl(kubectl, [
    'create',
    'configmap',
    'unlabelled-runconfig',
    '-n',
    ns,
    '--from-literal=k=v',
  ])
  t.equal(await view.cached(key('ConfigMap', 'unlabelled-runconfig')), undefined)
  t.equal(
    await view.get(key('ConfigMap', 'unlabelled-runconfig'), { cacheOnly: true }),
    undefined,
    'cacheOnly: a miss stays a miss',
  )
  const live = await view.get(key('ConfigMap', 'unlabelled-runconfig'))
  t.equal(live?.metadata?.name, 'unlabelled-runconfig')
  t.equal(live?.['data'], undefined, 'live reads are trimmed like cached ones')
  t.equal(
    await view.get(key('MCPServer', 'does-not-exist')),
    undefined,
    '404 is "absent", not an error',
  )
})

t.test('a namespace being deleted is terminating', async (t) => {
  // No namespace controller runs in this environment, so nothing removes the `kubernetes`
  // finalizer the API server puts in every namespace's spec.finalizers: once deleted, the
  // namespace keeps its deletionTimestamp and stays Terminating, which is what the view must see.
  const doomed = 'view-terminating'
  await mustKubectl(kubectl, ['create', 'namespace', doomed])
  t.equal(view.isTerminating(doomed), false, 'not while it is active')
  await mustKubectl(kubectl, ['delete', 'namespace', doomed, '--wait=false'])
  await waitFor(
    'the namespace to be seen terminating',
    async () => (view.isTerminating(doomed) ? true : undefined),
    { timeoutMs: 15_000 },
  )
  t.pass('terminating, from the watch')
  t.equal(view.isTerminating(ns), false, 'the other namespaces are not')
})

t.test('recovers by itself after the API server is stopped and started again', async (t) => {
  await apply(server('before'))
  await waitFor('MCPServer before', () => view.cached(key('MCPServer', 'before')), {
    timeoutMs: 15_000,
  })

  await plane.stopApiServer()
  // While the API server is away the cache keeps answering.
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  t.equal(
    (await view.get(key('MCPServer', 'before')))?.metadata?.name,
    'before',
    'served from the cache while down',
  )
  t.equal(view.isSynced(), true, 'a synced view stays usable while the API server is away')
  await plane.startApiServer()

  const started = Date.now()
  await apply(server('after'))
  await waitFor(
    'MCPServer after, created once the API server is back',
    () => view.cached(key('MCPServer', 'after')),
    { timeoutMs: 30_000 },
  )
  t.comment(`resynchronised ${Date.now() - started} ms after the API server came back`)
  await mustKubectl(kubectl, ['delete', 'mcpserver.toolhive.stacklok.dev', 'before', '-n', ns])
  await waitFor(
    'the delete after the restart',
    async () => ((await view.cached(key('MCPServer', 'before'))) === undefined ? true : undefined),
    { timeoutMs: 30_000 },
  )
  t.pass('the watch resumed')
})
