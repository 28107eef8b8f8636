/**
 * Freshness (docs/enforcement.md#read-live-not-from-the-cache and the delete guard's live reads,
 * docs/enforcement.md#references-and-deletes) through the real API server, with the service's
 * watches held back by a proxy so its cache lags deterministically (no polling around it):
 *  - an operator-style get-modify-update of a proxy Deployment that keeps the old checksum and
 *    generation, after the RunConfig ConfigMap and the MCPServer changed, gets the new values;
 *  - a DELETE of an MCPWebhookConfig issued right after a referencing MCPServer was created is
 *    refused (no operator finalizer protects it here);
 *  - with every read stalled, a proxy Deployment write is refused in-band, naming what could not
 *    be read, before the API server's webhook timeout.
 */

import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import { proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'
import { mustKubectl, startEnvironment } from './harness/environment.ts'
import { startHoldingProxy } from './harness/watch-hold-proxy.ts'

type Any = Record<string, any>
const CHECKSUM = 'toolhive.stacklok.dev/runconfig-checksum'
const GENERATION = 'toolhive.stacklok.dev/mcpserver-generation'

// The service reads the API server through the proxy, with its own service account's token.
const holding: { proxy?: Awaited<ReturnType<typeof startHoldingProxy>> } = {}
const env = await startEnvironment(t, {
  service: {
    credentials: async (env) => {
      const started = await startHoldingProxy(env.plane)
      holding.proxy = started
      env.onStop(() => started.close())
      const direct = JSON.parse(await readFile(await env.serviceAccountKubeconfig(), 'utf8')) as Any
      // client-node allows plain HTTP (loopback only, here) only with TLS verification marked off.
      direct['clusters'][0].cluster = { server: started.url, 'insecure-skip-tls-verify': true }
      const viaProxy = join(env.plane.dir, 'service-via-proxy.kubeconfig')
      await writeFile(viaProxy, JSON.stringify(direct), { mode: 0o600 })
      return viaProxy
    },
  },
})
const { kubectl } = env
const proxy = holding.proxy
if (proxy === undefined) throw new Error('the service runs without its proxy')

const get = async (kind: string, name: string, ns: string): Promise<Any> =>
  JSON.parse(await mustKubectl(kubectl, ['get', kind, name, '-n', ns, '-o', 'json'])) as Any
const create = (object: unknown) =>
  mustKubectl(kubectl, ['create', '-f', '-', '-o', 'json'], JSON.stringify(object)).then(
    (out) => JSON.parse(out) as Any,
  )
const inNamespace = <T extends Any>(object: T, namespace: string): T => ({
  ...object,
  metadata: { ...object['metadata'], namespace },
})

// The environment waited until the API server calls the webhooks.
await mustKubectl(kubectl, ['create', 'namespace', 'fresh'])

t.test(
  'a get-modify-update that keeps stale values while the watch lags gets fresh ones',
  async (t) => {
    const ns = 'fresh'
    const server = await create(
      inNamespace(workload('MCPServer', 'demo', { spec: { transport: 'sse' } }) as Any, ns),
    )
    await create(inNamespace(runConfigFor('MCPServer', 'demo', '{"version":1}') as Any, ns))
    const deployment = proxyDeployment('MCPServer', 'demo', { uid: server['metadata'].uid }) as Any
    const first = await create(inNamespace(deployment, ns))
    const stale = first['spec'].template.metadata.annotations as Record<string, string>
    t.equal(stale[GENERATION], '1')
    // The service's cache holds the owner as it is now, so it agrees with what the Deployment
    // carries. RunConfig ConfigMaps are never cached: only a live read can give the new checksum.
    await proxy.forwarded(`"resourceVersion":"${server['metadata'].resourceVersion}"`)

    proxy.hold()
    try {
      // The config and the spec change; the service's watch does not deliver it.
      await mustKubectl(kubectl, [
        'patch',
        'configmap',
        'demo-runconfig',
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ data: { 'runconfig.json': '{"version":2}' } }),
      ])
      await mustKubectl(kubectl, [
        'patch',
        'mcpserver',
        'demo',
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { port: 8081 } }),
      ])
      const configMap = await get('configmap', 'demo-runconfig', ns)
      const owner = await get('mcpserver', 'demo', ns)
      t.equal(owner['metadata'].generation, 2)

      // The operator's get-modify-update: the stored Deployment, an unrelated change, old annotations.
      const current = await get('deployment', 'demo', ns)
      current['spec'].template.spec.containers[0].image = 'ghcr.io/example/proxy:2'
      const updated = JSON.parse(
        await mustKubectl(kubectl, ['replace', '-f', '-', '-o', 'json'], JSON.stringify(current)),
      ) as Any
      const annotations = updated['spec'].template.metadata.annotations as Record<string, string>
      t.equal(
        annotations[CHECKSUM],
        effectiveContentChecksum(configMap),
        'the ConfigMap as it is now',
      )
      t.not(
        annotations[CHECKSUM],
        stale[CHECKSUM],
        'not the checksum the request and cache carried',
      )
      t.equal(annotations[GENERATION], '2', 'the owner generation as it is now')
    } finally {
      proxy.release()
    }
  },
)

t.test('a DELETE right after a reference is created is refused', async (t) => {
  const ns = 'fresh'
  await create({
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace: ns },
    spec: { validating: [{ name: 'policy', url: 'https://policy.example.com/validate' }] },
  })
  proxy.hold()
  try {
    await create(
      inNamespace(
        workload('MCPServer', 'refers', {
          spec: { transport: 'sse', webhookConfigRef: { name: 'hooks' } },
        }) as Any,
        ns,
      ),
    )
    const deleted = await kubectl(['delete', 'mcpwebhookconfig', 'hooks', '-n', ns])
    t.not(deleted.code, 0, 'refused')
    t.match(deleted.stderr, 'MCPWebhookConfig "hooks" is still referenced by MCPServer refers')
  } finally {
    proxy.release()
  }
})

t.test('a stalled API server gets an in-band answer well inside the webhook timeout', async (t) => {
  const ns = 'fresh'
  const server = await get('mcpserver', 'demo', ns)
  const deployment = inNamespace(
    proxyDeployment('MCPServer', 'stalled', { uid: server['metadata'].uid }) as Any,
    ns,
  )
  deployment['metadata'].ownerReferences[0].name = 'demo'
  proxy.stall()
  try {
    const started = Date.now()
    const result = await kubectl(
      ['create', '--dry-run=server', '-f', '-'],
      JSON.stringify(deployment),
    )
    const elapsed = Date.now() - started
    t.not(result.code, 0, 'refused')
    t.match(
      result.stderr,
      /cannot read (MCPServer|ConfigMap) fresh\/demo.* from the API server: .*no answer before the deadline/,
    )
    t.notMatch(
      result.stderr,
      /context deadline exceeded|timeout/i,
      'not the API server giving up on the webhook',
    )
    // The API server's own timeout would have said so above; the time is reported, not asserted.
    t.comment(`answered in ${elapsed} ms (webhook timeout 5 s, live-read deadline 2 s)`)
  } finally {
    proxy.release()
  }
})
