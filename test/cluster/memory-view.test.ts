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

/** The names of the objects whose references name the MCPWebhookConfig `name`. */
async function referring(view: MemoryView, name: string, namespace = 'default') {
  const referrers = await view.referrersOf({ kind: 'MCPWebhookConfig', namespace, name })
  return referrers.map((referrer) => `${referrer.kind} ${referrer.name} ${referrer.path}`)
}

t.test(
  'indexes the objects by the ones their references name, kept current on put and delete',
  async (t) => {
    const view = new MemoryView([
      server('b', 'hooks'),
      server('a', 'hooks'),
      server('c', 'other'),
      server('d', 'hooks', 'elsewhere'),
    ])
    const field = 'spec.webhookConfigRef.name'
    t.same(await referring(view, 'hooks'), [`MCPServer a ${field}`, `MCPServer b ${field}`])
    view.put(server('b', 'other'))
    t.same(await referring(view, 'hooks'), [`MCPServer a ${field}`])
    view.delete({ kind: 'MCPServer', namespace: 'default', name: 'a' })
    t.same(await referring(view, 'hooks'), [])
    t.same(await referring(view, 'other'), [`MCPServer b ${field}`, `MCPServer c ${field}`])
    t.same(await referring(view, 'hooks', 'elsewhere'), [`MCPServer d ${field}`])
    t.same(
      await view.referrersOf({ kind: 'MCPServer', namespace: 'default', name: 'hooks' }),
      [],
      'the same name, another kind',
    )
  },
)

t.test('only the kinds whose references say so are indexed (the kind table)', async (t) => {
  // In the CRDs of v0.63.0 only MCPServer has spec.webhookConfigRef; the others prune it.
  const named = (kind: string): KubeObject => ({
    ...server(`a-${kind.toLowerCase()}`, 'hooks'),
    kind,
  })
  const view = new MemoryView(['MCPRemoteProxy', 'VirtualMCPServer', 'MCPServer'].map(named))
  t.same(await referring(view, 'hooks'), ['MCPServer a-mcpserver spec.webhookConfigRef.name'])
})

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
  t.same(await referring(samples, 'audit-hooks'), ['MCPServer audited spec.webhookConfigRef.name'])
})
