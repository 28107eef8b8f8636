/**
 * The harness's kube-controller-manager (the `controllers` option), with mcp-admission and its
 * webhooks in front as usual: a deleted namespace goes away with everything in it, a ToolHive
 * resource included, and a dependent follows its deleted owner. Without the namespace controller
 * a deleted namespace stays Terminating and without the garbage collector a dependent stays, so
 * each wait below times out (and the file fails) when the controllers do not run.
 */

import t from 'tap'
import { mustKubectl, startEnvironment, waitFor } from './harness/environment.ts'

const env = await startEnvironment(t, {
  controllers: ['namespace-controller', 'garbage-collector-controller'],
})
const { kubectl } = env

/** Bounds every wait for a controller; both act within seconds when they run. */
const CONTROLLER_WAIT = { timeoutMs: 60_000, intervalMs: 500, process: env.controllerManager }

const configMap = (namespace: string, name: string, owner?: { name: string; uid: string }) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    namespace,
    ...(owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', ...owner }] } : {}),
  },
  data: { key: name },
})

/** Creates `object` and returns its uid. */
async function create(object: unknown): Promise<string> {
  const out = await mustKubectl(
    kubectl,
    ['create', '-o', 'json', '-f', '-'],
    JSON.stringify(object),
  )
  return (JSON.parse(out) as { metadata: { uid: string } }).metadata.uid
}

/** The names (`kind/name`) `kubectl get -o name` lists; empty when none is found. */
async function names(args: readonly string[]): Promise<string[]> {
  const out = await mustKubectl(kubectl, ['get', '--ignore-not-found', '-o', 'name', ...args])
  return out.split('\n').filter((line) => line !== '')
}

t.test('a dependent is garbage-collected once its owner is deleted', async (t) => {
  const ns = await env.namespace('gc')
  const uid = await create(configMap(ns, 'owner'))
  await create(configMap(ns, 'dependent', { name: 'owner', uid }))
  await create(configMap(ns, 'bystander'))
  // A foreground deletion is held by its finalizer until the collector has removed the dependents.
  const foregroundUid = await create(configMap(ns, 'foreground-owner'))
  await create(
    configMap(ns, 'foreground-dependent', { name: 'foreground-owner', uid: foregroundUid }),
  )

  await mustKubectl(kubectl, ['delete', '-n', ns, 'configmap/owner', '--wait=false'])
  await mustKubectl(kubectl, [
    'delete',
    '-n',
    ns,
    'configmap/foreground-owner',
    '--cascade=foreground',
    '--wait=false',
  ])
  const left = await waitFor(
    'the garbage collector to delete both owners and their dependents',
    async () => {
      const now = await names(['configmaps', '-n', ns])
      return now.length === 1 ? now : undefined
    },
    CONTROLLER_WAIT,
  )
  t.same(left, ['configmap/bystander'], 'only the ConfigMap nothing owned is left')
})

t.test('a deleted namespace goes away with everything in it', async (t) => {
  const ns = await env.namespace('doomed')
  const uid = await create(configMap(ns, 'owner'))
  await create(configMap(ns, 'dependent', { name: 'owner', uid }))
  await create(configMap(ns, 'plain'))
  // A ToolHive resource: the namespace controller finds it through discovery and deletes it
  // through mcp-admission's validating webhook.
  await create({
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'unreferenced', namespace: ns },
    spec: { mutating: [{ name: 'm', url: 'https://m.example.com' }] },
  })
  t.same(
    (await names(['configmaps,mcpwebhookconfigs', '-n', ns])).sort(),
    [
      'configmap/dependent',
      'configmap/owner',
      'configmap/plain',
      'mcpwebhookconfig.toolhive.stacklok.dev/unreferenced',
    ],
    'the namespace holds what was created',
  )

  await mustKubectl(kubectl, ['delete', 'namespace', ns, '--wait=false'])
  await waitFor(
    `namespace ${ns} to be gone`,
    async () => ((await names(['namespace', ns])).length === 0 ? true : undefined),
    CONTROLLER_WAIT,
  )
  // Listing in a namespace that no longer exists reads storage directly: nothing was left behind.
  t.same(
    await names(['configmaps,mcpwebhookconfigs', '-n', ns]),
    [],
    'nothing of it is left in storage',
  )
})
