/** Which ToolHive kinds discovery says are served, and at which version (pure helpers). */

import t from 'tap'
import {
  describeServedChange,
  discoveryVersions,
  servedChanges,
  servedFromDiscovery,
  servedKindsOf,
} from '../../src/cluster/served-kinds.ts'
import { VIEW_RESOURCES } from '../../src/cluster/resources.ts'

const group = (versions: string[], preferred?: string) => ({
  kind: 'APIGroup',
  name: 'toolhive.stacklok.dev',
  versions: versions.map((version) => ({
    groupVersion: `toolhive.stacklok.dev/${version}`,
    version,
  })),
  ...(preferred ? { preferredVersion: { version: preferred } } : {}),
})
const resourceList = (...kinds: [kind: string, plural: string][]) => ({
  kind: 'APIResourceList',
  resources: kinds.flatMap(([kind, plural]) => [
    { name: plural, kind, namespaced: true },
    { name: `${plural}/status`, kind, namespaced: true },
  ]),
})

t.test('discoveryVersions: the preferred version first, then the group order', async (t) => {
  t.same(discoveryVersions(group(['v1beta1', 'v1alpha1'], 'v1beta1')), ['v1beta1', 'v1alpha1'])
  t.same(discoveryVersions(group(['v1beta1', 'v1alpha1'], 'v1alpha1')), ['v1alpha1', 'v1beta1'])
  t.same(discoveryVersions(group(['v1beta1', 'v1alpha1'])), ['v1beta1', 'v1alpha1'])
  t.same(
    discoveryVersions(group(['v1'], 'v9')),
    ['v1'],
    'a preferred version not listed is ignored',
  )
  for (const garbage of [undefined, null, 'x', {}, { versions: 'v1' }, { versions: [1, {}] }])
    t.same(discoveryVersions(garbage), [], `nothing from ${JSON.stringify(garbage)}`)
})

t.test('servedFromDiscovery: each kind at the first version that serves it', async (t) => {
  const served = servedFromDiscovery(
    ['v1beta1', 'v1alpha1'],
    new Map<string, unknown>([
      ['v1beta1', resourceList(['MCPServer', 'mcpservers'], ['Unrelated', 'unrelateds'])],
      [
        'v1alpha1',
        resourceList(['MCPServer', 'mcpservers'], ['MCPWebhookConfig', 'mcpwebhookconfigs']),
      ],
    ]),
  )
  t.same(
    [...served].map(([kind, r]) => `${kind} ${r.group}/${r.version} ${r.plural} ${r.namespaced}`),
    [
      'MCPServer toolhive.stacklok.dev/v1beta1 mcpservers true',
      'MCPWebhookConfig toolhive.stacklok.dev/v1alpha1 mcpwebhookconfigs true',
    ],
    'the better version wins; a kind served only at another is found there; other kinds ignored',
  )
  t.same(
    [...servedFromDiscovery(['v1beta1'], new Map())],
    [],
    'a version whose list is gone serves nothing',
  )
  t.same(
    [
      ...servedFromDiscovery(
        ['v1'],
        new Map([['v1', { resources: [{ name: 'mcpservers/status', kind: 'MCPServer' }] }]]),
      ),
    ],
    [],
    'a subresource alone is not the kind',
  )
})

t.test('servedChanges and what each says', async (t) => {
  const all = servedKindsOf(VIEW_RESOURCES)
  const moved = servedKindsOf(
    VIEW_RESOURCES.flatMap((r) =>
      r.kind === 'MCPWebhookConfig'
        ? []
        : r.kind === 'MCPServer'
          ? [{ ...r, version: 'v1alpha1' }]
          : [r],
    ),
  )
  t.same(servedChanges(all, all), [], 'nothing changed')
  const changes = servedChanges(all, moved)
  t.same(
    changes.map((change) => describeServedChange(change)),
    [
      'MCPServer moved from toolhive.stacklok.dev/v1beta1 to toolhive.stacklok.dev/v1alpha1: read and watched at v1alpha1',
      'MCPWebhookConfig is not served by the cluster (was toolhive.stacklok.dev/v1alpha1): not listed or watched; no webhookConfigRef warnings, and no Valid condition is stamped',
    ],
  )
  t.same(
    servedChanges(moved, all).map((change) => describeServedChange(change))[1],
    'MCPWebhookConfig is served at toolhive.stacklok.dev/v1alpha1: listed and watched; its rules are on',
  )
  t.match(describeServedChange({ kind: 'MCPServer' }), /^MCPServer is not served by the cluster: /)
})
