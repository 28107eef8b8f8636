/**
 * Proxy Deployment mutation through the real API server
 * (docs/enforcement.md#proxy-deployments-field-by-field): the checksum and generation in the stored
 * pod template over whatever a writer put there, every other key as written (overrides are the
 * operator's to apply), no churn on re-submission, fresh values right after the owner changes, the
 * stdio cap on create and on `kubectl scale`, and the operator's pod volumes hash passed through
 * untouched.
 */

import t from 'tap'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import { proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'
import { startEnvironment } from './harness/environment.ts'
import { mustKubectl } from './harness/kubectl.ts'

type Any = Record<string, any>
const CHECKSUM = 'toolhive.stacklok.dev/runconfig-checksum'
const GENERATION = 'toolhive.stacklok.dev/mcpserver-generation'
const VOLUMES_HASH = 'toolhive.stacklok.io/podvolumes-hash'
const CA_CHECKSUM = 'toolhive.stacklok.dev/authserver-ca-checksum'

const env = await startEnvironment(t)
const { kubectl } = env

const inNamespace = <T extends Any>(object: T, namespace: string): T => ({
  ...object,
  metadata: { ...object['metadata'], namespace },
})
const apply = (object: unknown, ...flags: string[]) =>
  kubectl(
    ['apply', '--server-side', '--force-conflicts', ...flags, '-f', '-'],
    JSON.stringify(object),
  )
async function get(kind: string, name: string, namespace: string): Promise<Any> {
  return JSON.parse(
    await mustKubectl(kubectl, ['get', kind, name, '-n', namespace, '-o', 'json']),
  ) as Any
}

/** Creates an MCPServer and its RunConfig ConfigMap; returns the stored server. */
async function createServer(namespace: string, name: string, spec: Any): Promise<Any> {
  const server = inNamespace(workload('MCPServer', name, { spec }) as Any, namespace)
  delete server['metadata'].uid
  delete server['metadata'].generation
  await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(server))
  await mustKubectl(
    kubectl,
    ['create', '-f', '-'],
    JSON.stringify(inNamespace(runConfigFor('MCPServer', name) as Any, namespace)),
  )
  return get('mcpserver.toolhive.stacklok.dev', name, namespace)
}

function deploymentFor(stored: Any, options: Parameters<typeof proxyDeployment>[2] = {}): Any {
  const deployment = proxyDeployment('MCPServer', stored['metadata'].name, {
    ...options,
    uid: stored['metadata'].uid,
  }) as Any
  deployment['metadata'].namespace = stored['metadata'].namespace
  return deployment
}

t.test(
  'the stored pod template holds the checksum and generation; every other key as written',
  async (t) => {
    const ns = await env.namespace()
    const overrides = {
      'vault.hashicorp.com/agent-inject': 'true',
      [CA_CHECKSUM]: 'user-set',
      // A user override may not replace the managed keys.
      [CHECKSUM]: 'user-set',
    }
    const server = await createServer(ns, 'demo', {
      transport: 'streamable-http',
      resourceOverrides: {
        proxyDeployment: {
          podTemplateMetadataOverrides: { annotations: overrides, labels: { team: 'blue' } },
        },
      },
    })
    // As an operator that let the override win would write it, beside its own CA checksum.
    const written = {
      'vault.hashicorp.com/agent-inject': 'true',
      [CA_CHECKSUM]: 'operator-ca',
      [CHECKSUM]: 'user-set',
    }
    await mustKubectl(
      kubectl,
      ['create', '-f', '-'],
      JSON.stringify(deploymentFor(server, { podAnnotations: written })),
    )
    const stored = await get('deployment', 'demo', ns)
    const annotations = stored['spec'].template.metadata.annotations as Record<string, string>
    const map = await get('configmap', 'demo-runconfig', ns)
    t.same(annotations, {
      'vault.hashicorp.com/agent-inject': 'true',
      [CA_CHECKSUM]: 'operator-ca',
      [CHECKSUM]: effectiveContentChecksum(map),
      [GENERATION]: '1',
    })
    t.notOk('team' in stored['spec'].template.metadata.labels, 'no override label added')
    t.equal(stored['spec'].template.spec.terminationGracePeriodSeconds, 30)
  },
)

t.test(
  'a new generation is stamped, the env entry is stored exactly, re-submission causes no churn',
  async (t) => {
    const ns = await env.namespace()
    const server = await createServer(ns, 'gen', { transport: 'sse' })
    await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(deploymentFor(server)))
    t.equal(
      (await get('deployment', 'gen', ns))['spec'].template.metadata.annotations[GENERATION],
      '1',
    )

    await mustKubectl(kubectl, [
      'patch',
      'mcpserver.toolhive.stacklok.dev',
      'gen',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"image":"ghcr.io/example/server:2"}}',
    ])
    t.equal((await get('mcpserver.toolhive.stacklok.dev', 'gen', ns))['metadata'].generation, 2)
    // The operator rewrites its Deployment without the annotations; the webhook supplies them.
    const rewritten = (await apply(deploymentFor(server))).code
    t.equal(rewritten, 0)
    const stored = await get('deployment', 'gen', ns)
    t.equal(stored['spec'].template.metadata.annotations[GENERATION], '2')
    const proxy = (stored['spec'].template.spec.containers as Any[]).find(
      (c) => c['name'] === 'toolhive',
    )!
    t.same(proxy['env'], [
      {
        name: 'THV_MCPSERVER_GENERATION',
        valueFrom: {
          fieldRef: {
            apiVersion: 'v1',
            fieldPath: "metadata.annotations['toolhive.stacklok.dev/mcpserver-generation']",
          },
        },
      },
    ])

    // Re-submitting the stored object unchanged stores nothing new.
    const before = stored['metadata'].resourceVersion as string
    await mustKubectl(kubectl, ['replace', '-f', '-'], JSON.stringify(stored))
    t.equal(
      (await get('deployment', 'gen', ns))['metadata'].resourceVersion,
      before,
      'resourceVersion unchanged',
    )
  },
)

t.test(
  'a Deployment written right after its owner changes gets the fresh generation and checksum',
  async (t) => {
    const ns = await env.namespace()
    const server = await createServer(ns, 'fast', { transport: 'sse' })
    await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(deploymentFor(server)))
    for (let round = 2; round <= 4; round++) {
      // No wait for the cache between the owner's change and the Deployment's write.
      await mustKubectl(kubectl, [
        'patch',
        'mcpserver.toolhive.stacklok.dev',
        'fast',
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { image: `img:${round}` } }),
      ])
      await mustKubectl(kubectl, [
        'patch',
        'configmap',
        'fast-runconfig',
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ data: { 'runconfig.json': `{"round":${round}}` } }),
      ])
      // The operator writes its Deployment without the managed annotations (as a new one would).
      const current = await get('deployment', 'fast', ns)
      const annotations = current['spec'].template.metadata.annotations as Record<string, string>
      current['spec'].template.metadata.annotations = Object.fromEntries(
        Object.entries(annotations).filter(([key]) => key !== GENERATION && key !== CHECKSUM),
      )
      await mustKubectl(kubectl, ['replace', '-f', '-'], JSON.stringify(current))
      const stored = await get('deployment', 'fast', ns)
      const map = await get('configmap', 'fast-runconfig', ns)
      t.equal(
        stored['spec'].template.metadata.annotations[GENERATION],
        String(round),
        `round ${round}: generation`,
      )
      t.equal(
        stored['spec'].template.metadata.annotations[CHECKSUM],
        effectiveContentChecksum(map),
        `round ${round}: checksum`,
      )
    }
  },
)

t.test('stdio proxies are capped at one replica, on create and on kubectl scale', async (t) => {
  const ns = await env.namespace()
  const stdio = await createServer(ns, 'stdio', {})
  const created = await kubectl(
    ['create', '-f', '-'],
    JSON.stringify(deploymentFor(stdio, { replicas: 3 })),
  )
  t.equal(created.code, 0, created.stderr)
  t.match(
    created.stderr,
    /Warning: spec\.replicas: stdio MCPServer stdio supports 1 replica; set to 1 \(was 3\)/,
  )
  t.equal((await get('deployment', 'stdio', ns))['spec'].replicas, 1)

  const scaled = await kubectl(['scale', 'deployment', 'stdio', '-n', ns, '--replicas=3'])
  t.equal(scaled.code, 0, scaled.stderr)
  t.match(scaled.stderr, /supports 1 replica/)
  t.equal((await get('deployment', 'stdio', ns))['spec'].replicas, 1, 'kubectl scale leaves 1')

  const http = await createServer(ns, 'http', { transport: 'streamable-http' })
  await mustKubectl(
    kubectl,
    ['create', '-f', '-'],
    JSON.stringify(deploymentFor(http, { replicas: 3 })),
  )
  t.equal((await get('deployment', 'http', ns))['spec'].replicas, 3)
  await mustKubectl(kubectl, ['scale', 'deployment', 'http', '-n', ns, '--replicas=5'])
  t.equal((await get('deployment', 'http', ns))['spec'].replicas, 5)
})

t.test("the operator's pod volumes hash passes through CREATE and UPDATE", async (t) => {
  const ns = await env.namespace()
  const server = await createServer(ns, 'vols', { transport: 'sse' })
  const volumes = [{ name: 'config', configMap: { name: 'vols-runconfig' } }]
  const deployment = deploymentFor(server, { volumes })
  deployment['metadata'].annotations = { [VOLUMES_HASH]: 'e0badf61' }
  await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(deployment))
  const created = await get('deployment', 'vols', ns)
  t.same(created['metadata'].annotations, { [VOLUMES_HASH]: 'e0badf61' }, 'CREATE: as written')

  created['metadata'].annotations = { [VOLUMES_HASH]: '9792a0fe' }
  await mustKubectl(kubectl, ['replace', '-f', '-'], JSON.stringify(created))
  const updated = await get('deployment', 'vols', ns)
  t.same(updated['metadata'].annotations, { [VOLUMES_HASH]: '9792a0fe' }, 'UPDATE: as written')

  delete updated['metadata'].annotations
  await mustKubectl(kubectl, ['replace', '-f', '-'], JSON.stringify(updated))
  const removed = await get('deployment', 'vols', ns)
  t.equal(removed['metadata'].annotations, undefined, 'UPDATE without it: not added back')
  t.same(
    Object.keys(removed['metadata'].labels).sort(),
    Object.keys(deployment['metadata'].labels).sort(),
    'no Deployment label added',
  )
})
