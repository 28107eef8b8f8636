import t from 'tap'
import { MemoryView, objectKey } from '../../src/cluster/memory-view.ts'
import { loadObjects, parseObjects } from '../../src/cluster/load-objects.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'

const server = (name: string, ref?: string, namespace = 'default'): KubeObject => ({
  apiVersion: 'toolhive.stacklok.dev/v1beta1',
  kind: 'MCPServer',
  metadata: { name, namespace },
  spec: ref === undefined ? {} : { webhookConfigRef: { name: ref } },
})

t.test('holds ToolHive kinds and ConfigMaps by kind/namespace/name', async (t) => {
  const view = new MemoryView([
    server('a'),
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a-runconfig', namespace: 'default' },
    },
  ])
  t.ok(await view.get({ kind: 'MCPServer', namespace: 'default', name: 'a' }))
  t.ok(await view.get({ kind: 'ConfigMap', namespace: 'default', name: 'a-runconfig' }))
  t.equal(await view.get({ kind: 'MCPServer', namespace: 'other', name: 'a' }), undefined)
  t.equal(view.isSynced(), true)
})

t.test('keysOf and size follow put, replace and delete, one kind at a time', async (t) => {
  const configMap = (name: string, namespace: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
  })
  const view = new MemoryView([
    server('a'),
    server('b', undefined, 'team'),
    configMap('a-runconfig', 'default'),
  ])
  const keys = (kind: 'MCPServer' | 'ConfigMap') =>
    view
      .keysOf(kind)
      .map((key) => `${key.kind} ${key.namespace} ${key.name}`)
      .sort()
  t.same(keys('MCPServer'), ['MCPServer default a', 'MCPServer team b'])
  t.same(keys('ConfigMap'), ['ConfigMap default a-runconfig'])
  t.equal(view.size, 3)

  view.put(server('a', 'hooks'))
  t.equal(view.size, 3, 'a put of a held object replaces it')
  t.same((await view.get({ kind: 'MCPServer', namespace: 'default', name: 'a' }))?.spec, {
    webhookConfigRef: { name: 'hooks' },
  })

  view.delete({ kind: 'MCPServer', namespace: 'team', name: 'b' })
  view.delete({ kind: 'MCPServer', namespace: 'team', name: 'b' })
  view.delete({ kind: 'ConfigMap', namespace: 'default', name: 'a' })
  t.equal(view.size, 2, 'only what was held is deleted, once')
  t.same(keys('MCPServer'), ['MCPServer default a'])
  view.put(server('b', undefined, 'team'))
  t.same(
    keys('MCPServer'),
    ['MCPServer default a', 'MCPServer team b'],
    'an emptied namespace fills again',
  )
  t.same(keys('ConfigMap'), ['ConfigMap default a-runconfig'])
})

t.test('ignores what a view does not hold', async (t) => {
  t.equal(objectKey({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }), undefined)
  t.equal(
    objectKey({ apiVersion: 'example.com/v1', kind: 'MCPServer', metadata: { name: 's' } }),
    undefined,
    'same kind, other group',
  )
  t.equal(
    objectKey({ apiVersion: 'toolhive.stacklok.dev/v1beta1', kind: 'MCPServer', metadata: {} }),
    undefined,
    'no name',
  )
  t.same(objectKey(server('x', undefined, '')), {
    kind: 'MCPServer',
    namespace: 'default',
    name: 'x',
  })
})

t.test(
  'indexes MCPServers by the webhook config they reference, kept current on put and delete',
  async (t) => {
    const view = new MemoryView([
      server('b', 'hooks'),
      server('a', 'hooks'),
      server('c', 'other'),
      server('d', 'hooks', 'elsewhere'),
    ])
    t.same(await view.serversReferencingWebhookConfig('default', 'hooks'), ['a', 'b'])
    view.put(server('b', 'other'))
    t.same(await view.serversReferencingWebhookConfig('default', 'hooks'), ['a'])
    view.delete({ kind: 'MCPServer', namespace: 'default', name: 'a' })
    t.same(await view.serversReferencingWebhookConfig('default', 'hooks'), [])
    t.same(await view.serversReferencingWebhookConfig('default', 'other'), ['b', 'c'])
  },
)

t.test('parses multi-document YAML, JSON and List kinds', async (t) => {
  const objects = parseObjects(
    'kind: A\nmetadata: {name: a}\n---\n---\n{"kind": "BList", "items": [{"kind": "B", "metadata": {"name": "b"}}, {"kind": "C", "metadata": {"name": "c"}}]}\n',
    'inline',
  )
  t.same(
    objects.map((o) => o.kind),
    ['A', 'B', 'C'],
  )
  const proto = parseObjects(
    'kind: ConfigMap\nmetadata: {name: a}\ndata:\n  __proto__: x\n',
    'inline',
  )[0] as {
    data: object
  }
  t.same(Object.keys(proto.data), ['__proto__'], 'a __proto__ key stays an own key')
  t.equal(Object.getPrototypeOf(proto.data), Object.prototype)
})

t.test('loads directories (sorted, object files only) and the shipped samples', async (t) => {
  const dir = t.testdir({
    'b.yaml': 'kind: B\nmetadata: {name: b}\n',
    'a.json': '{"kind":"A","metadata":{"name":"a"}}',
    'notes.txt': 'kind: X',
  })
  t.same(
    (await loadObjects([dir])).map((o) => o.kind),
    ['A', 'B'],
  )
  const samples = new MemoryView(await loadObjects(['samples/objects']))
  t.ok(samples.size >= 3)
  t.same(await samples.serversReferencingWebhookConfig('default', 'audit-hooks'), ['audited'])
})
