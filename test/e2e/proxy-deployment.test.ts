/**
 * Proxy Deployment mutation through the real API server (DESIGN §4.2–§4.3): the checksum,
 * generation and overrides in the stored pod template, no churn on re-submission, fresh values
 * right after the owner changes, the stdio cap on create and on `kubectl scale`, and the volumes
 * fingerprint computed from what was submitted.
 */

import t from 'tap'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import { podVolumesHash } from '../../src/policy/pod-volumes.ts'
import { proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'
import { startEnvironment } from './harness/environment.ts'
import { mustKubectl } from './harness/kubectl.ts'

type Any = Record<string, any>
const CHECKSUM = 'toolhive.stacklok.dev/runconfig-checksum'
const GENERATION = 'toolhive.stacklok.dev/mcpserver-generation'
const VOLUMES_HASH = 'toolhive.stacklok.io/podvolumes-hash'

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
  'the stored pod template holds the checksum, the generation and the overrides',
  async (t) => {
    const ns = await env.namespace()
    const vault = {
      'vault.hashicorp.com/agent-inject': 'true',
      'vault.hashicorp.com/role': 'mcp',
      // A user override may not replace the managed keys.
      [CHECKSUM]: 'user-set',
    }
    const server = await createServer(ns, 'demo', {
      transport: 'streamable-http',
      resourceOverrides: {
        proxyDeployment: {
          podTemplateMetadataOverrides: { annotations: vault, labels: { team: 'blue' } },
        },
      },
    })
    await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(deploymentFor(server)))
    const stored = await get('deployment', 'demo', ns)
    const annotations = stored['spec'].template.metadata.annotations as Record<string, string>
    const map = await get('configmap', 'demo-runconfig', ns)
    t.equal(
      annotations[CHECKSUM],
      effectiveContentChecksum(map),
      'the ConfigMap checksum, not the override',
    )
    t.equal(annotations[GENERATION], '1')
    t.equal(annotations['vault.hashicorp.com/agent-inject'], 'true')
    t.equal(annotations['vault.hashicorp.com/role'], 'mcp')
    t.equal(stored['spec'].template.metadata.labels.team, 'blue')
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

t.test(
  'the stored volumes hash equals the one computed offline from the submitted object',
  async (t) => {
    const ns = await env.namespace()
    const server = await createServer(ns, 'vols', { transport: 'sse' })
    const volumes = [
      {
        name: 'config',
        configMap: {
          name: 'vols-runconfig',
          items: [{ key: 'runconfig.json', path: 'runconfig.json' }],
        },
      },
      { name: 'scratch', emptyDir: { sizeLimit: '1024Mi' } },
      {
        name: 'token',
        projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'mcp' } }] },
      },
      { name: 'creds', secret: { secretName: 'creds' } },
      {
        name: 'pod',
        downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] },
      },
    ]
    const deployment = deploymentFor(server, { volumes })
    deployment['spec'].template.spec.containers[0].volumeMounts = [
      { name: 'config', mountPath: '/etc/runconfig', readOnly: true },
      { name: 'scratch', mountPath: '/tmp' },
      { name: 'token', mountPath: '/var/run/token' },
    ]
    const offline = podVolumesHash(structuredClone(deployment['spec'].template.spec))
    await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(deployment))
    const stored = await get('deployment', 'vols', ns)
    t.equal(stored['metadata'].annotations[VOLUMES_HASH], offline)
    // The API server defaulted what was submitted (modes, medium…), and the hash did not move.
    t.equal(stored['spec'].template.spec.volumes[0].configMap.defaultMode, 420)
    t.equal(podVolumesHash(stored['spec'].template.spec), offline)
    t.same(
      Object.keys(stored['metadata'].labels).sort(),
      Object.keys(deployment['metadata'].labels).sort(),
      'no Deployment label added',
    )
  },
)
