/**
 * What depends on mcp-admission, through the real API server (docs/operations.md, "What depends
 * on the service"). The `deployments/scale` webhook's match condition keeps every other Deployment's
 * scale away from the service, on every path that writes a Scale: `kubectl scale`, a patch of the
 * subresource, an autoscaler's read-modify-write and a PUT of a Scale without status. A stdio
 * proxy is still capped on each of them. With the service stopped, everything that is not
 * ToolHive's still writes, and only ToolHive's fail-closed writes are refused.
 */

import t from 'tap'
import { startEnvironment } from './harness/environment.ts'
import { mustKubectl } from './harness/kubectl.ts'
import { createServerWithProxy } from './harness/proxies.ts'

type Any = Record<string, any>
const env = await startEnvironment(t)
const { kubectl, admission } = env
const ns = await env.namespace()

const create = (object: unknown) =>
  mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(object))
const replicasOf = async (name: string): Promise<number> =>
  (
    JSON.parse(
      await mustKubectl(kubectl, ['get', 'deployment', name, '-n', ns, '-o', 'json']),
    ) as Any
  )['spec'].replicas as number
/** Every admission request the service has answered, whatever the path or the outcome. */
const requestsServed = () => admission.metric('controller_runtime_webhook_requests_total')

const server = (name: string, transport: string) =>
  createServerWithProxy(kubectl, ns, name, { transport })

const scalePath = (name: string) => `/apis/apps/v1/namespaces/${ns}/deployments/${name}/scale`

/** Each way a client writes a Scale; each resolves to kubectl's result. */
const SCALE_WRITES = {
  'kubectl scale': (name: string, replicas: number) =>
    kubectl(['scale', 'deployment', name, '-n', ns, `--replicas=${replicas}`]),
  'a merge patch of the subresource': (name: string, replicas: number) =>
    kubectl([
      'patch',
      'deployment',
      name,
      '-n',
      ns,
      '--subresource=scale',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { replicas } }),
    ]),
  // What the HPA controller does: GET the Scale, change spec.replicas, PUT it back.
  'an autoscaler-style read-modify-write': async (name: string, replicas: number) => {
    const scale = JSON.parse(await mustKubectl(kubectl, ['get', '--raw', scalePath(name)])) as Any
    scale['spec'].replicas = replicas
    return kubectl(['replace', '--raw', scalePath(name), '-f', '-'], JSON.stringify(scale))
  },
  'a PUT of a Scale without status': (name: string, replicas: number) =>
    kubectl(
      ['replace', '--raw', scalePath(name), '-f', '-'],
      JSON.stringify({
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name, namespace: ns },
        spec: { replicas },
      }),
    ),
} as const

await server('stdio', 'stdio')
await server('web', 'streamable-http')
// A Deployment that has nothing to do with ToolHive.
await create({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'shop', namespace: ns, labels: { app: 'shop' } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'shop' } },
    template: {
      metadata: { labels: { app: 'shop' } },
      spec: { containers: [{ name: 'shop', image: 'registry.example/shop:1' }] },
    },
  },
})

t.test('an unrelated Deployment is scaled without a call to the service', async (t) => {
  const before = await requestsServed()
  let replicas = 1
  for (const [path, write] of Object.entries(SCALE_WRITES)) {
    replicas += 1
    const result = await write('shop', replicas)
    t.equal(result.code, 0, `${path}: ${result.stderr}`)
    t.equal(await replicasOf('shop'), replicas, `${path}: scaled to ${replicas}`)
  }
  t.equal(await requestsServed(), before, 'the service answered no request')
})

t.test('a stdio proxy is capped at one replica on every path', async (t) => {
  const before = await requestsServed()
  for (const [path, write] of Object.entries(SCALE_WRITES)) {
    const result = await write('stdio', 3)
    t.equal(result.code, 0, `${path}: ${result.stderr}`)
    t.equal(await replicasOf('stdio'), 1, `${path}: still 1 replica`)
  }
  const served = (await requestsServed()) - before
  t.equal(served, Object.keys(SCALE_WRITES).length, 'one review per write')
  const warned = await SCALE_WRITES['kubectl scale']('stdio', 4)
  t.match(
    warned.stderr,
    /spec\.replicas: stdio MCPServer stdio supports 1 replica; set to 1 \(was 4\)/,
  )

  // Another ToolHive proxy is sent (its selector says toolhive=true) and left alone.
  const web = await SCALE_WRITES['kubectl scale']('web', 3)
  t.equal(web.code, 0, web.stderr)
  t.equal(await replicasOf('web'), 3)
})

t.test('with the service stopped, only ToolHive writes that fail closed are refused', async (t) => {
  await admission.stop()
  let replicas = 10
  for (const [path, write] of Object.entries(SCALE_WRITES)) {
    replicas += 1
    const result = await write('shop', replicas)
    t.equal(result.code, 0, `unrelated, ${path}: ${result.stderr}`)
    t.equal(await replicasOf('shop'), replicas, `unrelated, ${path}: scaled`)
  }
  const label = await kubectl(['label', 'deployment', 'shop', '-n', ns, 'edited=yes'])
  t.equal(label.code, 0, `an unrelated Deployment update: ${label.stderr}`)
  const config = await kubectl(['create', 'configmap', 'settings', '-n', ns, '--from-literal=a=b'])
  t.equal(config.code, 0, `an unrelated ConfigMap: ${config.stderr}`)

  const capped = await SCALE_WRITES['kubectl scale']('stdio', 3)
  t.not(capped.code, 0, 'a stdio proxy scale fails closed')
  t.match(capped.stderr, /failed calling webhook "deployments-scale\.mcp-admission/)
  t.equal(await replicasOf('stdio'), 1, 'and is not applied')
  // Workload validation fails open: an MCPServer is still written.
  const edit = await kubectl([
    'label',
    'mcpserver.toolhive.stacklok.dev',
    'web',
    '-n',
    ns,
    'edited=yes',
  ])
  t.equal(edit.code, 0, `MCPServer writes fail open: ${edit.stderr}`)
})
