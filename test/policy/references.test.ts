/**
 * The references of the kind table, read from objects: the real table's, and every shape a
 * reference may take (lists, maps, a kind read beside the name, versions) on a table built here.
 */

import t from 'tap'
import { TOOLHIVE_GROUP, TOOLHIVE_KIND_TABLE, entryOf } from '../../src/policy/kinds.ts'
import type { KindTable, ToolHiveKindEntry } from '../../src/policy/kinds.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import {
  keptPaths,
  referencesAt,
  referencesIn,
  referrersIn,
  referringKinds,
  sortReferrers,
} from '../../src/policy/references.ts'

const server = (spec: unknown, version = 'v1beta1'): KubeObject => ({
  apiVersion: `${TOOLHIVE_GROUP}/${version}`,
  kind: 'MCPServer',
  metadata: { name: 'demo', namespace: 'team' },
  spec,
})

/** `{path, kind, name}` of each reference: what a test compares (the table entry aside). */
const named = (object: KubeObject, table?: KindTable) =>
  referencesIn(object, table).map(({ path, kind, name }) => ({ path, kind, name }))

t.test('MCPServer names its MCPWebhookConfig at every version', async (t) => {
  for (const version of ['v1beta1', 'v1alpha1', 'v2', '__proto__']) {
    t.same(
      named(server({ webhookConfigRef: { name: 'hooks' } }, version)),
      [{ path: 'spec.webhookConfigRef.name', kind: 'MCPWebhookConfig', name: 'hooks' }],
      version,
    )
  }
  t.same(named({ ...server({ webhookConfigRef: { name: 'hooks' } }), apiVersion: 5 }), [
    { path: 'spec.webhookConfigRef.name', kind: 'MCPWebhookConfig', name: 'hooks' },
  ])
  for (const spec of [{ webhookConfigRef: { name: '' } }, { webhookConfigRef: 'hooks' }, null])
    t.same(referencesIn(server(spec)), [], JSON.stringify(spec))
  for (const kind of ['MCPRemoteProxy', 'VirtualMCPServer', 'MCPWebhookConfig', 'Deployment'])
    t.same(referencesIn({ ...server({ webhookConfigRef: { name: 'hooks' } }), kind }), [], kind)
  t.same(referringKinds('MCPWebhookConfig'), ['MCPServer'])
  t.same(referringKinds('MCPServer'), [])
  t.same(referringKinds('MCPExternalAuthConfig'), [
    'MCPServer',
    'MCPRemoteProxy',
    'VirtualMCPServer',
    'MCPServerEntry',
  ])
  t.same(referencesAt(entryOf('MCPToolConfig'), 'v1beta1'), [], 'a config names nothing')
})

t.test('the real table: every reference of a VirtualMCPServer, with its finalizer', async (t) => {
  const virtual: KubeObject = {
    apiVersion: `${TOOLHIVE_GROUP}/v1beta1`,
    kind: 'VirtualMCPServer',
    metadata: { name: 'v', namespace: 'team' },
    spec: {
      groupRef: { name: 'g' },
      config: {
        groupRef: 'ignored',
        compositeToolRefs: [{ name: 'c1' }, { name: 'c2' }],
        aggregation: { tools: [{ toolConfigRef: { name: 't' } }, { workload: 'x' }] },
      },
      embeddingServerRef: { name: 'e' },
      incomingAuth: { oidcConfigRef: { name: 'o' }, authzConfigRef: { name: 'z' } },
      outgoingAuth: {
        default: { externalAuthConfigRef: { name: 'd' } },
        backends: { github: { externalAuthConfigRef: { name: 'b' } } },
      },
      telemetryConfigRef: { name: 'm' },
    },
  }
  const found = referencesIn(virtual)
  t.same(
    found.map(({ path, kind, name, reference }) => [
      path,
      kind,
      name,
      reference.protectedBy?.finalizer ?? '-',
    ]),
    [
      ['spec.groupRef.name', 'MCPGroup', 'g', '-'],
      ['spec.config.compositeToolRefs[0].name', 'VirtualMCPCompositeToolDefinition', 'c1', '-'],
      ['spec.config.compositeToolRefs[1].name', 'VirtualMCPCompositeToolDefinition', 'c2', '-'],
      ['spec.config.aggregation.tools[0].toolConfigRef.name', 'MCPToolConfig', 't', '-'],
      ['spec.embeddingServerRef.name', 'EmbeddingServer', 'e', '-'],
      [
        'spec.incomingAuth.authzConfigRef.name',
        'MCPAuthzConfig',
        'z',
        'mcpauthzconfig.toolhive.stacklok.dev/finalizer',
      ],
      [
        'spec.incomingAuth.oidcConfigRef.name',
        'MCPOIDCConfig',
        'o',
        'mcpoidcconfig.toolhive.stacklok.dev/finalizer',
      ],
      ['spec.outgoingAuth.default.externalAuthConfigRef.name', 'MCPExternalAuthConfig', 'd', '-'],
      [
        'spec.outgoingAuth.backends[github].externalAuthConfigRef.name',
        'MCPExternalAuthConfig',
        'b',
        '-',
      ],
      [
        'spec.telemetryConfigRef.name',
        'MCPTelemetryConfig',
        'm',
        'mcptelemetryconfig.toolhive.stacklok.dev/finalizer',
      ],
    ],
    'spec.config.groupRef is no reference: the operator overwrites it',
  )
  const proxy = { ...server({ toolConfigRef: { name: 't' } }), kind: 'MCPRemoteProxy' }
  t.same(
    referencesIn(proxy)[0]?.reference.protectedBy,
    undefined,
    "MCPToolConfig's finalizer counts MCPServers only",
  )
  t.equal(
    referencesIn(server({ toolConfigRef: { name: 't' } }))[0]?.reference.protectedBy?.finalizer,
    'toolhive.stacklok.dev/toolconfig-finalizer',
  )
})

/** Two kinds with the reference shapes the next kinds need. */
const base = entryOf('MCPWebhookConfig')
const TABLE: KindTable = [
  ...TOOLHIVE_KIND_TABLE,
  {
    ...base,
    kind: 'TestGateway',
    versions: ['v2', 'v1'],
    references: {
      v2: [
        { path: 'spec.toolRefs[].name', target: { kind: 'MCPWebhookConfig' }, whenMissing: 'x' },
        { path: 'spec.backends{}.authRef.name', target: { kind: 'MCPServer' }, whenMissing: 'x' },
        {
          path: 'spec.authServerRef.name',
          target: { kindFrom: 'kind', allowed: ['MCPServer', 'MCPRemoteProxy'] },
          requires: { path: 'spec.mode', equals: 'embedded' },
          whenMissing: 'x',
        },
      ],
      v1: [{ path: 'spec.legacyRef.name', target: { kind: 'MCPWebhookConfig' }, whenMissing: 'x' }],
    },
    view: { keep: ['status.conditions'], readinessWaits: true },
  } satisfies ToolHiveKindEntry,
  {
    ...base,
    kind: 'TestTop',
    references: { v1alpha1: [{ path: 'name', target: { kind: 'MCPServer' }, whenMissing: 'x' }] },
  },
]

const gateway = (spec: unknown, version = 'v2'): KubeObject => ({
  apiVersion: `${TOOLHIVE_GROUP}/${version}`,
  kind: 'TestGateway',
  metadata: { name: 'gw' },
  spec,
})

t.test('lists, maps, a kind read from the object, and versions', async (t) => {
  const object = gateway({
    toolRefs: [{ name: 'a' }, { name: 'b' }, { name: 'a' }],
    backends: { x: { authRef: { name: 's1' } }, y: {} },
    authServerRef: { kind: 'MCPRemoteProxy', name: 'auth' },
    legacyRef: { name: 'old' },
  })
  t.same(named(object, TABLE), [
    { path: 'spec.toolRefs[0].name', kind: 'MCPWebhookConfig', name: 'a' },
    { path: 'spec.toolRefs[1].name', kind: 'MCPWebhookConfig', name: 'b' },
    { path: 'spec.toolRefs[2].name', kind: 'MCPWebhookConfig', name: 'a' },
    { path: 'spec.backends[x].authRef.name', kind: 'MCPServer', name: 's1' },
    { path: 'spec.authServerRef.name', kind: 'MCPRemoteProxy', name: 'auth' },
  ])
  t.same(named({ ...object, apiVersion: `${TOOLHIVE_GROUP}/v1` }, TABLE), [
    { path: 'spec.legacyRef.name', kind: 'MCPWebhookConfig', name: 'old' },
  ])
  for (const kind of ['MCPWebhookConfig', 'TestGateway', undefined])
    t.same(referencesIn(gateway({ authServerRef: { kind, name: 'auth' } }), TABLE), [], `${kind}`)
  const referring = referrersIn(object, { kind: 'MCPWebhookConfig', name: 'a' }, TABLE)
  t.same(
    referring.map(({ kind, name, path }) => ({ kind, name, path })),
    [
      { kind: 'TestGateway', name: 'gw', path: 'spec.toolRefs[0].name' },
      { kind: 'TestGateway', name: 'gw', path: 'spec.toolRefs[2].name' },
    ],
  )
  t.same(referrersIn({ ...object, metadata: {} }, { kind: 'MCPServer', name: 's1' }, TABLE), [])
  t.same(named({ kind: 'TestTop', apiVersion: 'x/v1alpha1', name: 'n' }, TABLE), [
    { path: 'name', kind: 'MCPServer', name: 'n' },
  ])
  t.same(referringKinds('MCPWebhookConfig', TABLE), ['MCPServer', 'TestGateway'])
  t.same(referringKinds('MCPRemoteProxy', TABLE), ['TestGateway'], 'by an allowed kind')
  t.same(referringKinds('MCPServer', TABLE), ['TestGateway', 'TestTop'])
})

t.test('keptPaths: the keep-list, every reference field, and the kind beside a name', async (t) => {
  t.same(keptPaths(TABLE.find((entry) => entry.kind === 'TestGateway')!), [
    'status.conditions',
    'spec.toolRefs[].name',
    'spec.backends{}.authRef.name',
    'spec.authServerRef.name',
    'spec.authServerRef.kind',
    'spec.legacyRef.name',
  ])
  t.same(
    keptPaths({
      ...base,
      references: {
        v1: [{ path: 'name', target: { kindFrom: 'kind', allowed: [] }, whenMissing: 'x' }],
      },
    }),
    ['spec', 'status.conditions', 'name', 'kind'],
  )
  t.same(keptPaths(entryOf('MCPServer')), [
    'spec.transport',
    'spec.replicas',
    'spec.sessionStorage.provider',
    'status.conditions',
    'spec.groupRef.name',
    'spec.toolConfigRef.name',
    'spec.externalAuthConfigRef.name',
    'spec.authServerRef.name',
    'spec.authServerRef.kind',
    'spec.oidcConfigRef.name',
    'spec.authzConfigRef.name',
    'spec.telemetryConfigRef.name',
    'spec.webhookConfigRef.name',
  ])
  t.same(
    keptPaths(entryOf('MCPExternalAuthConfig')),
    ['spec.type'],
    'what a reference to it requires',
  )
  t.same(
    keptPaths(
      TABLE.find((entry) => entry.kind === 'MCPRemoteProxy')!,
      TABLE,
    ),
    [...keptPaths(entryOf('MCPRemoteProxy')), 'spec.mode'],
    'of the table given',
  )
})

t.test('sortReferrers: by kind, then name, then path', async (t) => {
  const reference = { path: 'x', target: { kind: 'MCPGroup' }, whenMissing: 'x' }
  const referrer = (kind: 'MCPServer' | 'VirtualMCPServer', name: string, path: string) => ({
    kind,
    name,
    path,
    reference,
  })
  t.same(
    sortReferrers([
      referrer('VirtualMCPServer', 'a', 'x'),
      referrer('MCPServer', 'b', 'y'),
      referrer('MCPServer', 'b', 'x'),
      referrer('MCPServer', 'a', 'z'),
      referrer('MCPServer', 'a', 'z'),
    ]),
    [
      referrer('MCPServer', 'a', 'z'),
      referrer('MCPServer', 'a', 'z'),
      referrer('MCPServer', 'b', 'x'),
      referrer('MCPServer', 'b', 'y'),
      referrer('VirtualMCPServer', 'a', 'x'),
    ],
  )
})
