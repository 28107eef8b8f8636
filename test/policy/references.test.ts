/**
 * The references of the kind table, read from objects: the real table's one reference
 * (`spec.webhookConfigRef.name`), and the shapes the next kinds need, on a table built here.
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

t.test('MCPServer names its MCPWebhookConfig at every version', async (t) => {
  for (const version of ['v1beta1', 'v1alpha1', 'v2', '__proto__']) {
    t.same(
      referencesIn(server({ webhookConfigRef: { name: 'hooks' } }, version)),
      [{ path: 'spec.webhookConfigRef.name', kind: 'MCPWebhookConfig', name: 'hooks' }],
      version,
    )
  }
  t.same(referencesIn({ ...server({ webhookConfigRef: { name: 'hooks' } }), apiVersion: 5 }), [
    { path: 'spec.webhookConfigRef.name', kind: 'MCPWebhookConfig', name: 'hooks' },
  ])
  for (const spec of [{ webhookConfigRef: { name: '' } }, { webhookConfigRef: 'hooks' }, null])
    t.same(referencesIn(server(spec)), [], JSON.stringify(spec))
  for (const kind of ['MCPRemoteProxy', 'VirtualMCPServer', 'MCPWebhookConfig', 'Deployment'])
    t.same(referencesIn({ ...server({ webhookConfigRef: { name: 'hooks' } }), kind }), [], kind)
  t.same(referringKinds('MCPWebhookConfig'), ['MCPServer'])
  t.same(referringKinds('MCPServer'), [])
  t.same(referencesAt(entryOf('MCPRemoteProxy'), 'v1beta1'), [])
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
        { path: 'spec.toolRefs[].name', target: { kind: 'MCPWebhookConfig' } },
        { path: 'spec.backends{}.authRef.name', target: { kind: 'MCPServer' } },
        {
          path: 'spec.authServerRef.name',
          target: { kindFrom: 'kind', allowed: ['MCPServer', 'MCPRemoteProxy'] },
        },
      ],
      v1: [{ path: 'spec.legacyRef.name', target: { kind: 'MCPWebhookConfig' } }],
    },
    view: { keep: ['status.conditions'], readinessWaits: true },
  } satisfies ToolHiveKindEntry,
  {
    ...base,
    kind: 'TestTop',
    references: { v1alpha1: [{ path: 'name', target: { kind: 'MCPServer' } }] },
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
  t.same(referencesIn(object, TABLE), [
    { path: 'spec.toolRefs[0].name', kind: 'MCPWebhookConfig', name: 'a' },
    { path: 'spec.toolRefs[1].name', kind: 'MCPWebhookConfig', name: 'b' },
    { path: 'spec.toolRefs[2].name', kind: 'MCPWebhookConfig', name: 'a' },
    { path: 'spec.backends[x].authRef.name', kind: 'MCPServer', name: 's1' },
    { path: 'spec.authServerRef.name', kind: 'MCPRemoteProxy', name: 'auth' },
  ])
  t.same(referencesIn({ ...object, apiVersion: `${TOOLHIVE_GROUP}/v1` }, TABLE), [
    { path: 'spec.legacyRef.name', kind: 'MCPWebhookConfig', name: 'old' },
  ])
  for (const kind of ['MCPWebhookConfig', 'TestGateway', undefined])
    t.same(referencesIn(gateway({ authServerRef: { kind, name: 'auth' } }), TABLE), [], `${kind}`)
  t.same(referrersIn(object, { kind: 'MCPWebhookConfig', name: 'a' }, TABLE), [
    { kind: 'TestGateway', name: 'gw', path: 'spec.toolRefs[0].name' },
    { kind: 'TestGateway', name: 'gw', path: 'spec.toolRefs[2].name' },
  ])
  t.same(referrersIn({ ...object, metadata: {} }, { kind: 'MCPServer', name: 's1' }, TABLE), [])
  t.same(referencesIn({ kind: 'TestTop', apiVersion: 'x/v1alpha1', name: 'n' }, TABLE), [
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
      references: { v1: [{ path: 'name', target: { kindFrom: 'kind', allowed: [] } }] },
    }),
    ['spec', 'status.conditions', 'name', 'kind'],
  )
  t.same(keptPaths(entryOf('MCPServer')), [
    'spec.transport',
    'spec.replicas',
    'spec.sessionStorage.provider',
    'status.conditions',
    'spec.webhookConfigRef.name',
  ])
})

t.test('sortReferrers: by kind, then name, then path', async (t) => {
  const referrer = (kind: 'MCPServer' | 'VirtualMCPServer', name: string, path: string) => ({
    kind,
    name,
    path,
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
