import t from 'tap'
import { trimForView, trimNamespace } from '../../src/cluster/trim.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { VECTOR_CHECKSUM, runConfigMap } from '../helpers/objects.ts'

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration'

const metadataNoise = {
  creationTimestamp: '2026-11-22T00:00:00Z',
  managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
  finalizers: ['x'],
}

t.test(
  'ToolHive objects keep identity, labels, annotations, owners, and what the rules read',
  async (t) => {
    const server: KubeObject = {
      apiVersion: 'toolhive.stacklok.dev/v1beta1',
      kind: 'MCPServer',
      metadata: {
        name: 'demo',
        namespace: 'team',
        uid: 'u1',
        resourceVersion: '7',
        generation: 3,
        labels: { a: 'b' },
        annotations: { keep: 'me', [LAST_APPLIED]: '{"huge": "copy"}' },
        ...metadataNoise,
      },
      spec: {
        transport: 'stdio',
        replicas: 2,
        image: 'ghcr.io/example/fetch:1',
        sessionStorage: { provider: 'redis', address: 'redis:6379' },
        webhookConfigRef: { name: 'hooks', note: 'unread' },
        resourceOverrides: { proxyDeployment: { env: [{ name: 'A', value: 'x'.repeat(1000) }] } },
      },
      status: { conditions: [{ type: 'Valid', status: 'True' }], phase: 'Running', url: 'u' },
    }
    const before = structuredClone(server)
    const trimmed = trimForView('MCPServer', server)
    t.same(trimmed, {
      apiVersion: 'toolhive.stacklok.dev/v1beta1',
      kind: 'MCPServer',
      metadata: {
        name: 'demo',
        namespace: 'team',
        uid: 'u1',
        resourceVersion: '7',
        generation: 3,
        labels: { a: 'b' },
        annotations: { keep: 'me' },
      },
      spec: {
        transport: 'stdio',
        replicas: 2,
        sessionStorage: { provider: 'redis' },
        webhookConfigRef: { name: 'hooks' },
      },
      status: { conditions: [{ type: 'Valid', status: 'True' }] },
    })
    t.same(server, before, 'the input is not modified')
  },
)

t.test('each kind keeps its keep-list: the whole spec of an MCPWebhookConfig', async (t) => {
  const spec = { validating: [{ name: 'a', url: 'https://x' }], mutating: [] }
  const config: KubeObject = {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks' },
    spec,
    status: { configHash: 'abcd1234', conditions: [] },
  }
  const trimmed = trimForView('MCPWebhookConfig', config)
  t.equal(trimmed.spec, spec, 'shared, not copied')
  t.same(trimmed.status, { conditions: [] })
  const proxy = trimForView('MCPRemoteProxy', {
    ...config,
    kind: 'MCPRemoteProxy',
    spec: { remoteUrl: 'https://x', replicas: 3, webhookConfigRef: { name: 'hooks' } },
  })
  t.same(proxy.spec, { replicas: 3 }, 'a field its CRD prunes is no reference of its kind')
  const deployment = trimForView('Deployment', { kind: 'Deployment', spec: { replicas: 2 } })
  t.same(deployment.spec, { replicas: 2 }, 'a Deployment keeps its spec')
})

t.test('ConfigMaps are reduced to metadata and their content checksum', async (t) => {
  const configMap = runConfigMap()
  const trimmed = trimForView('ConfigMap', configMap)
  t.equal(trimmed['data'], undefined)
  t.equal(trimmed['binaryData'], undefined)
  t.equal(
    (trimmed.metadata?.annotations as Record<string, string>)[ANNOTATIONS.contentChecksum],
    VECTOR_CHECKSUM,
  )
  t.same(trimmed.metadata?.labels, configMap.metadata?.labels)
  t.equal(configMap.metadata?.annotations, undefined, 'the input is not modified')
})

// Its own annotation comes first (docs/enforcement.md#proxy-deployments-field-by-field).
t.test('a ConfigMap keeps the checksum it carries (annotation first)', async (t) => {
  const configMap = runConfigMap()
  configMap.metadata = {
    ...configMap.metadata,
    annotations: { [ANNOTATIONS.contentChecksum]: 'stamped' },
  }
  const trimmed = trimForView('ConfigMap', configMap)
  t.equal(
    (trimmed.metadata?.annotations as Record<string, string>)[ANNOTATIONS.contentChecksum],
    'stamped',
  )
})

t.test('the checksum is taken before the last-applied annotation is dropped', async (t) => {
  const withLastApplied = runConfigMap()
  withLastApplied.metadata = { ...withLastApplied.metadata, annotations: { [LAST_APPLIED]: '{}' } }
  const trimmed = trimForView('ConfigMap', withLastApplied)
  const annotations = trimmed.metadata?.annotations as Record<string, string>
  t.equal(annotations[LAST_APPLIED], undefined)
  t.not(
    annotations[ANNOTATIONS.contentChecksum],
    VECTOR_CHECKSUM,
    'annotations are part of the hashed content',
  )
})

t.test('a data key named __proto__ survives as data and in the checksum', async (t) => {
  const configMap = JSON.parse(
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"},"data":{"__proto__":"x"}}',
  ) as KubeObject
  const other = JSON.parse(
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"},"data":{}}',
  ) as KubeObject
  const checksum = (object: KubeObject) =>
    (trimForView('ConfigMap', object).metadata?.annotations as Record<string, string>)[
      ANNOTATIONS.contentChecksum
    ]
  t.not(checksum(configMap), checksum(other))
})

t.test('a Namespace is reduced to its name and deletionTimestamp', async (t) => {
  const terminating: KubeObject = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: 'team',
      uid: 'u1',
      resourceVersion: '7',
      labels: { 'kubernetes.io/metadata.name': 'team' },
      annotations: { [LAST_APPLIED]: '{"huge": "copy"}' },
      deletionTimestamp: '2026-11-22T00:00:00Z',
      ...metadataNoise,
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Terminating', conditions: [{ type: 'NamespaceDeletionContentFailure' }] },
  }
  const before = structuredClone(terminating)
  t.same(trimNamespace(terminating), {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'team', deletionTimestamp: '2026-11-22T00:00:00Z' },
  })
  t.same(terminating, before, 'the input is not modified')
  t.same(
    trimNamespace({ ...terminating, metadata: { name: 'live', deletionTimestamp: null } }),
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'live' } },
    'no deletionTimestamp (null is none): the name alone',
  )
  t.same(
    trimNamespace({ kind: 'Namespace', metadata: { name: 7 } }),
    { apiVersion: undefined, kind: 'Namespace', metadata: { name: 7 } },
    'malformed: kept as it came (the cache ignores a name that is not a string)',
  )
  t.same(trimNamespace({ kind: 'Namespace' }), {
    apiVersion: undefined,
    kind: 'Namespace',
    metadata: {},
  })
})

t.test('malformed input does not throw', async (t) => {
  t.same(trimForView('MCPServer', { kind: 'MCPServer' }), {
    apiVersion: undefined,
    kind: 'MCPServer',
    metadata: {},
  })
  t.same(trimForView('MCPServer', { kind: 'MCPServer', spec: 'x', status: [] }), {
    apiVersion: undefined,
    kind: 'MCPServer',
    metadata: {},
  })
  const odd = trimForView('ConfigMap', {
    metadata: { annotations: 'not a map' },
    data: { k: 1 },
  })
  // Maps that are not string maps cannot be reduced to a checksum: kept, so trimming is idempotent.
  t.same(odd['data'], { k: 1 })
  t.same(trimForView('ConfigMap', odd), odd)
})
