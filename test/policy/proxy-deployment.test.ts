import t from 'tap'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import { GENERATION_ENV, generationEnvEntry } from '../../src/policy/generation-env.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { mutateProxyDeployment } from '../../src/policy/proxy-deployment.ts'
import type { ProxyDeploymentFacts } from '../../src/policy/proxy-deployment.ts'
import { isRefused } from '../../src/policy/result.ts'
import { proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

type Any = Record<string, any>

function mutate(deployment: KubeObject, facts: ProxyDeploymentFacts) {
  const result = mutateProxyDeployment(structuredClone(deployment), facts)
  if (isRefused(result)) throw new Error('refused')
  return { object: result.object as Any, warnings: [...result.warnings] }
}

const server = workload('MCPServer', 'demo', { generation: 4 })
const runConfig = runConfigFor('MCPServer', 'demo')
const checksum = effectiveContentChecksum(runConfig)
const facts: ProxyDeploymentFacts = { owner: server, runConfigMap: runConfig, stored: undefined }
const podAnnotations = (object: Any) =>
  object.spec.template.metadata.annotations as Record<string, string>
const envOf = (object: Any, container = 0) =>
  object.spec.template.spec.containers[container].env as unknown[]

t.test(
  'an MCPServer proxy gets checksum, generation, env entry and grace period, nothing else',
  async (t) => {
    const deployment = proxyDeployment('MCPServer', 'demo')
    const { object, warnings } = mutate(deployment, facts)
    t.same(podAnnotations(object), {
      [ANNOTATIONS.runConfigChecksum]: checksum,
      [ANNOTATIONS.mcpServerGeneration]: '4',
    })
    t.same(envOf(object), [generationEnvEntry()])
    t.same(envOf(object)[0], {
      name: 'THV_MCPSERVER_GENERATION',
      valueFrom: {
        fieldRef: {
          apiVersion: 'v1',
          fieldPath: "metadata.annotations['toolhive.stacklok.dev/mcpserver-generation']",
        },
      },
    })
    t.equal(object.spec.template.spec.terminationGracePeriodSeconds, 30)
    t.same(object.metadata, deployment.metadata, 'the Deployment metadata is untouched')
    t.same(warnings, [])
  },
)

t.test('every other pod-template annotation is kept', async (t) => {
  const deployment = proxyDeployment('MCPServer', 'demo', {
    podAnnotations: {
      'kubectl.kubernetes.io/restartedAt': '2026-11-22T10:00:00Z',
      [ANNOTATIONS.runConfigChecksum]: 'old',
    },
  })
  const { object } = mutate(deployment, facts)
  t.equal(podAnnotations(object)['kubectl.kubernetes.io/restartedAt'], '2026-11-22T10:00:00Z')
  t.equal(
    podAnnotations(object)[ANNOTATIONS.runConfigChecksum],
    checksum,
    'a stale checksum is replaced',
  )
})

/**
 * Keys the operator computes itself (docs/enforcement.md#never-a-fight-with-the-operator): the
 * webhook never writes them.
 */
const VOLUMES_HASH = 'toolhive.stacklok.io/podvolumes-hash'
const CA_CHECKSUM = 'toolhive.stacklok.dev/authserver-ca-checksum'
const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt'

/** An owner whose overrides name every key that matters here. */
function overridingOwner(kind: 'MCPServer' | 'MCPRemoteProxy' | 'VirtualMCPServer') {
  return workload(kind, 'demo', {
    generation: 4,
    spec: {
      resourceOverrides: {
        proxyDeployment: {
          podTemplateMetadataOverrides: {
            annotations: {
              'vault.hashicorp.com/agent-inject': 'true',
              [CA_CHECKSUM]: 'user-value',
              [RESTARTED_AT]: 'user-value',
              [ANNOTATIONS.runConfigChecksum]: 'user-value',
              [ANNOTATIONS.mcpServerGeneration]: '999',
            },
            labels: { team: 'blue', app: 'hijacked' },
          },
        },
      },
    },
  })
}

t.test("overrides are the operator's to apply: the webhook never applies them again", async (t) => {
  for (const kind of ['MCPServer', 'MCPRemoteProxy', 'VirtualMCPServer'] as const) {
    const operatorKeys = { [CA_CHECKSUM]: 'operator-ca', [RESTARTED_AT]: '2026-11-25T10:00:00Z' }
    const deployment = proxyDeployment(kind, 'demo', { podAnnotations: operatorKeys })
    const map = runConfigFor(kind, 'demo')
    const { object } = mutate(deployment, {
      owner: overridingOwner(kind),
      runConfigMap: map,
      stored: undefined,
    })
    t.same(
      podAnnotations(object),
      {
        ...operatorKeys,
        [ANNOTATIONS.runConfigChecksum]: effectiveContentChecksum(map),
        ...(kind === 'MCPServer' ? { [ANNOTATIONS.mcpServerGeneration]: '4' } : {}),
      },
      `${kind}: the operator's keys pass through, no override key is added`,
    )
    t.same(
      object.spec.template.metadata.labels,
      (deployment as Any).spec.template.metadata.labels,
      `${kind}: pod-template labels untouched`,
    )
  }
})

t.test('an override the operator applied to one of the two keys still loses', async (t) => {
  // An operator that let the override win wrote the user's values under the managed keys.
  const deployment = proxyDeployment('MCPServer', 'demo', {
    podAnnotations: {
      [ANNOTATIONS.runConfigChecksum]: 'user-value',
      [ANNOTATIONS.mcpServerGeneration]: '999',
      'vault.hashicorp.com/agent-inject': 'true',
    },
  })
  const { object } = mutate(deployment, { ...facts, owner: overridingOwner('MCPServer') })
  t.same(podAnnotations(object), {
    [ANNOTATIONS.runConfigChecksum]: checksum,
    [ANNOTATIONS.mcpServerGeneration]: '4',
    'vault.hashicorp.com/agent-inject': 'true',
  })
})

t.test("the operator's podvolumes-hash is never written, changed or removed", async (t) => {
  const volumes = [{ name: 'vmcp-config', configMap: { name: 'demo-vmcp-config' } }]
  for (const kind of ['MCPServer', 'MCPRemoteProxy', 'VirtualMCPServer'] as const) {
    const owner = workload(kind, 'demo', { generation: 4 })
    const map = runConfigFor(kind, 'demo')
    const cases: [string, Record<string, string> | undefined][] = [
      ['absent stays absent', undefined],
      ['an operator value is kept', { [VOLUMES_HASH]: 'e0badf61' }],
      ['any value is kept', { [VOLUMES_HASH]: '' }],
    ]
    for (const [name, annotations] of cases) {
      const deployment = proxyDeployment(kind, 'demo', { volumes }) as Any
      if (annotations) deployment.metadata.annotations = annotations
      const { object } = mutate(deployment, { owner, runConfigMap: map, stored: undefined })
      t.same(object.metadata, deployment.metadata, `${kind}: ${name}`)
    }
  }
})

t.test(
  'the env entry: replaced in place, appended, never duplicated, others untouched',
  async (t) => {
    const other = { name: 'A', value: '1' }
    const last = { name: 'Z', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }
    const cases: [string, unknown[], unknown[]][] = [
      ['missing: appended', [other, last], [other, last, generationEnvEntry()]],
      [
        'literal value: replaced in place',
        [other, { name: GENERATION_ENV, value: '3' }, last],
        [other, generationEnvEntry(), last],
      ],
      [
        'apiVersion missing: replaced',
        [
          {
            name: GENERATION_ENV,
            valueFrom: {
              fieldRef: {
                fieldPath: "metadata.annotations['toolhive.stacklok.dev/mcpserver-generation']",
              },
            },
          },
          other,
        ],
        [generationEnvEntry(), other],
      ],
      [
        'duplicates: first fixed, the rest dropped',
        [{ name: GENERATION_ENV, value: '1' }, other, { name: GENERATION_ENV, value: '2' }],
        [generationEnvEntry(), other],
      ],
      ['already right: untouched', [other, generationEnvEntry()], [other, generationEnvEntry()]],
    ]
    for (const [name, env, expected] of cases) {
      const { object } = mutate(proxyDeployment('MCPServer', 'demo', { env }), facts)
      t.same(envOf(object), expected, name)
    }
  },
)

t.test('only container toolhive gets the entry', async (t) => {
  const deployment = proxyDeployment('MCPServer', 'demo') as Any
  ;(deployment.spec.template.spec.containers as unknown[]).unshift({ name: 'sidecar', image: 'x' })
  const { object } = mutate(deployment, facts)
  t.equal(envOf(object, 0), undefined)
  t.same(envOf(object, 1), [generationEnvEntry()])
})

t.test('a generation is never lowered for the same owner uid', async (t) => {
  const stored = proxyDeployment('MCPServer', 'demo', {
    podAnnotations: { [ANNOTATIONS.mcpServerGeneration]: '7' },
  })
  const stale = workload('MCPServer', 'demo', { generation: 5 })
  t.equal(
    podAnnotations(
      mutate(proxyDeployment('MCPServer', 'demo'), { ...facts, owner: stale, stored }).object,
    )[ANNOTATIONS.mcpServerGeneration],
    '7',
  )
  // A recreated owner (new uid) starts again at 1: lowering is right then.
  const recreated = workload('MCPServer', 'demo', { generation: 1, uid: 'new-uid' })
  const deployment = proxyDeployment('MCPServer', 'demo', { uid: 'new-uid' })
  t.equal(
    podAnnotations(mutate(deployment, { ...facts, owner: recreated, stored }).object)[
      ANNOTATIONS.mcpServerGeneration
    ],
    '1',
  )
  const newer = workload('MCPServer', 'demo', { generation: 9 })
  t.equal(
    podAnnotations(
      mutate(proxyDeployment('MCPServer', 'demo'), { ...facts, owner: newer, stored }).object,
    )[ANNOTATIONS.mcpServerGeneration],
    '9',
  )
})

t.test(
  'a missing owner or RunConfig ConfigMap is warned about, the rest still applies',
  async (t) => {
    const noOwner = mutate(proxyDeployment('MCPServer', 'demo'), {
      owner: undefined,
      runConfigMap: runConfig,
      stored: undefined,
    })
    t.equal(noOwner.object.spec.template.metadata.annotations, undefined)
    t.same(envOf(noOwner.object), [generationEnvEntry()])
    t.equal(noOwner.object.spec.template.spec.terminationGracePeriodSeconds, 30)
    t.match(noOwner.warnings, [/MCPServer demo not found/])

    const otherIncarnation = workload('MCPServer', 'demo', { uid: 'someone-else', generation: 4 })
    t.match(
      mutate(proxyDeployment('MCPServer', 'demo'), { ...facts, owner: otherIncarnation }).warnings,
      [/not found/],
    )

    const noMap = mutate(proxyDeployment('MCPServer', 'demo'), {
      ...facts,
      runConfigMap: undefined,
    })
    t.same(podAnnotations(noMap.object), { [ANNOTATIONS.mcpServerGeneration]: '4' })
    t.match(noMap.warnings, [/ConfigMap demo-runconfig not found/])
  },
)

t.test('the stdio cap, and nothing else about replicas', async (t) => {
  const cases: [string, Record<string, unknown>, number, number, boolean][] = [
    ['stdio, 3 → 1', { transport: 'stdio' }, 3, 1, true],
    ['transport absent means stdio', {}, 3, 1, true],
    ['stdio, 1 stays', { transport: 'stdio' }, 1, 1, false],
    ['stdio, 0 stays (scaled down)', {}, 0, 0, false],
    ['streamable-http keeps 3', { transport: 'streamable-http' }, 3, 3, false],
    ['sse keeps 3', { transport: 'sse' }, 3, 3, false],
  ]
  for (const [name, spec, replicas, expected, warned] of cases) {
    const owner = workload('MCPServer', 'demo', { generation: 4, spec })
    const { object, warnings } = mutate(proxyDeployment('MCPServer', 'demo', { replicas }), {
      ...facts,
      owner,
    })
    t.equal(object.spec.replicas, expected, name)
    t.equal(
      warnings.some((w) => w.includes('supports 1 replica')),
      warned,
      `${name}: warning`,
    )
  }
})

t.test('terminationGracePeriodSeconds is set only when absent', async (t) => {
  for (const value of [0, 10, 60]) {
    const deployment = proxyDeployment('MCPServer', 'demo') as Any
    deployment.spec.template.spec.terminationGracePeriodSeconds = value
    t.equal(
      mutate(deployment, facts).object.spec.template.spec.terminationGracePeriodSeconds,
      value,
    )
  }
})

t.test('Deployments that are not ToolHive proxies are left alone', async (t) => {
  const plain = proxyDeployment('MCPServer', 'demo') as Any
  const cases: [string, unknown][] = [
    ['no ownerReferences', undefined],
    [
      'owner is not the controller',
      [{ apiVersion: 'toolhive.stacklok.dev/v1beta1', kind: 'MCPServer', name: 'demo', uid: 'u' }],
    ],
    [
      'owner in another group',
      [
        {
          apiVersion: 'example.com/v1',
          kind: 'MCPServer',
          name: 'demo',
          uid: 'u',
          controller: true,
        },
      ],
    ],
    [
      'owner of another kind',
      [
        {
          apiVersion: 'toolhive.stacklok.dev/v1beta1',
          kind: 'MCPWebhookConfig',
          name: 'x',
          uid: 'u',
          controller: true,
        },
      ],
    ],
  ]
  for (const [name, ownerReferences] of cases) {
    const deployment = structuredClone(plain)
    deployment.metadata.ownerReferences = ownerReferences
    t.same(mutate(deployment, facts).object, deployment, name)
  }
})

t.test('admitting the output again changes nothing', async (t) => {
  const first = mutate(
    proxyDeployment('MCPServer', 'demo', {
      replicas: 3,
      env: [{ name: GENERATION_ENV, value: 'x' }],
    }),
    facts,
  )
  const second = mutate(first.object, facts)
  t.same(second.object, first.object)
})

t.test('malformed Deployments do not throw', async (t) => {
  const owned = proxyDeployment('MCPServer', 'demo') as Any
  for (const spec of [
    null,
    'x',
    1,
    [],
    { template: null },
    { template: { spec: 'x' } },
    { template: { spec: { containers: 'x' } } },
  ]) {
    const deployment = { ...structuredClone(owned), spec }
    t.doesNotThrow(() => mutateProxyDeployment(deployment, facts), JSON.stringify(spec))
  }
})
