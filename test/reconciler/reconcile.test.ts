/**
 * The reconciler's read-compute-write step against a fake status API: it writes only its own
 * conditions, never with force, leaves every condition another field manager owns to it (read
 * from managedFields, or named by a 409), and writes nothing when nothing needs writing.
 */

import t from 'tap'
import pino from 'pino'
import { VIEW_RESOURCES } from '../../src/cluster/resources.ts'
import { servedKindsOf } from '../../src/cluster/served-kinds.ts'
import type { ServedKinds } from '../../src/cluster/served-kinds.ts'
import { createReconcile } from '../../src/reconciler/reconcile.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'

type Any = Record<string, any>
const NOW = '2026-11-23T10:00:00Z'
const KEY = 'VirtualMCPServer/team/vmcp'

function vmcp(status: Any = {}, managedFields: unknown[] = []): KubeObject {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'VirtualMCPServer',
    metadata: { name: 'vmcp', namespace: 'team', generation: 2, managedFields },
    spec: { replicas: 3 },
    status,
  }
}

/** The condition the operator writes itself: same words, but without observedGeneration. */
const OPERATOR_CONDITION = {
  type: 'SessionStorageWarning',
  status: 'True',
  reason: 'SessionStorageMissingForReplicas',
  message:
    'replicas > 1 but sessionStorage.provider is not redis; sessions are not shared across replicas',
  lastTransitionTime: '2026-11-23T09:00:00Z',
}
const OPERATOR_OWNS = {
  manager: 'thv-operator',
  operation: 'Update',
  subresource: 'status',
  fieldsV1: {
    'f:status': {
      'f:conditions': { 'k:{"type":"SessionStorageWarning"}': { '.': {}, 'f:status': {} } },
    },
  },
}

const CONDITION_FIELDS = [
  '.',
  'f:type',
  'f:status',
  'f:reason',
  'f:message',
  'f:lastTransitionTime',
]

/** Our Apply entry in managedFields, claiming `claims` (condition type → its fields). */
function ourEntry(claims: Record<string, string[]>) {
  const conditions = Object.fromEntries(
    Object.entries(claims).map(([type, fields]) => [
      `k:{"type":"${type}"}`,
      Object.fromEntries(fields.map((field) => [field, {}])),
    ]),
  )
  return {
    manager: 'mcp-admission-status',
    operation: 'Apply',
    subresource: 'status',
    fieldsV1: { 'f:status': { 'f:conditions': conditions } },
  }
}

function fakeApi(live: KubeObject | undefined, answers: { status: number; body?: Any }[] = []) {
  const writes: { path: string; body: Any; query: Any }[] = []
  let reads = 0
  return {
    writes,
    get reads() {
      return reads
    },
    api: {
      get: async () => {
        reads++
        return live as Record<string, unknown> | undefined
      },
      write: async (_method: string, path: string, body: unknown, options: Any = {}) => {
        writes.push({ path, body: body as Any, query: options['query'] })
        return answers.shift() ?? { status: 200, body: {} }
      },
    },
  }
}

/** Where each kind is served: by default the table's first versions, as the newest release. */
const TABLE_SERVED = servedKindsOf(VIEW_RESOURCES)

function reconcileWith(
  cached: KubeObject | undefined,
  fake: Pick<ReturnType<typeof fakeApi>, 'api'>,
  options: { key?: string; leadership?: AbortSignal; served?: ServedKinds } = {},
) {
  const yielded: string[] = []
  const served = options.served ?? TABLE_SERVED
  const reconcile = createReconcile({
    api: fake.api as never,
    view: { cached: async () => cached, resourceOf: (kind) => served.get(kind) },
    logger: pino({ level: 'silent' }),
    leadership: options.leadership ?? new AbortController().signal,
    now: () => NOW,
    onYield: (_kind, type) => yielded.push(type),
  })
  return { run: () => reconcile(options.key ?? KEY), yielded }
}

t.test('status goes where the cluster serves the kind, and nowhere when it does not', async (t) => {
  const object = vmcp()
  const atAlpha = fakeApi(object)
  const alpha = servedKindsOf([
    {
      kind: 'VirtualMCPServer',
      group: 'toolhive.stacklok.dev',
      version: 'v1alpha1',
      plural: 'virtualmcpservers',
      namespaced: true,
    },
  ])
  t.same(await reconcileWith(object, atAlpha, { served: alpha }).run(), {
    result: 'written',
    conditions: ['SessionStorageWarning'],
  })
  t.equal(
    atAlpha.writes[0]?.path,
    '/apis/toolhive.stacklok.dev/v1alpha1/namespaces/team/virtualmcpservers/vmcp/status',
  )
  t.equal(atAlpha.writes[0]?.body['apiVersion'], 'toolhive.stacklok.dev/v1alpha1')

  const notServed = fakeApi(object)
  t.same(await reconcileWith(object, notServed, { served: new Map() }).run(), {
    result: 'unchanged',
  })
  t.equal(notServed.reads + notServed.writes.length, 0, 'not a single request')
})

t.test('beside an operator that owns the condition: no write at all', async (t) => {
  const object = vmcp({ conditions: [OPERATOR_CONDITION] }, [OPERATOR_OWNS])
  const fake = fakeApi(object)
  const { run, yielded } = reconcileWith(object, fake)
  t.same(await run(), { result: 'unchanged' })
  t.equal(fake.writes.length, 0, 'no write')
  t.same(yielded, ['SessionStorageWarning'], 'counted as left to its owner')
})

t.test('where no one else writes it: stamped by apply without force', async (t) => {
  const object = vmcp()
  const fake = fakeApi(object)
  const { run } = reconcileWith(object, fake)
  t.same(await run(), { result: 'written', conditions: ['SessionStorageWarning'] })
  t.equal(fake.writes.length, 1)
  const [write] = fake.writes
  t.equal(
    write?.path,
    '/apis/toolhive.stacklok.dev/v1beta1/namespaces/team/virtualmcpservers/vmcp/status',
  )
  t.same(write?.query, { fieldManager: 'mcp-admission-status' }, 'no force')
  t.same(Object.keys(write?.body['status']), ['conditions'], 'no observedGeneration, no configHash')
  t.match(write?.body['status'].conditions, [
    {
      type: 'SessionStorageWarning',
      status: 'True',
      observedGeneration: 2,
      lastTransitionTime: NOW,
    },
  ])
})

t.test('an operator update that dropped our observedGeneration is not undone', async (t) => {
  // We stamped the condition first; the operator's status Update rewrote it without
  // observedGeneration, which pruned that field from our managedFields entry.
  const ours = ourEntry({ SessionStorageWarning: CONDITION_FIELDS })
  const object = vmcp({ conditions: [OPERATOR_CONDITION] }, [ours])
  const fake = fakeApi(object)
  const { run, yielded } = reconcileWith(object, fake)
  await run()
  t.equal(fake.writes.length, 0, 'no write')
  t.same(yielded, ['SessionStorageWarning'])
})

t.test(
  'a condition left to the operator but still partly claimed is applied as it is',
  async (t) => {
    // SessionStorageWarning: stamped by us, rewritten by the operator without observedGeneration.
    // StdioReplicaCapped: ours, and stale. Dropping the first from the apply would make the API
    // server delete the parts only we owned, undoing the operator's condition.
    const ours = ourEntry({
      SessionStorageWarning: CONDITION_FIELDS,
      StdioReplicaCapped: [...CONDITION_FIELDS, 'f:observedGeneration'],
    })
    const stale = {
      type: 'StdioReplicaCapped',
      status: 'False',
      reason: 'StdioReplicaCapNotActive',
      message: 'stdio replica cap is not active',
      lastTransitionTime: '2026-11-23T08:00:00Z',
      observedGeneration: 1,
    }
    const server: KubeObject = {
      apiVersion: 'toolhive.stacklok.dev/v1beta1',
      kind: 'MCPServer',
      metadata: { name: 'vmcp', namespace: 'team', generation: 2, managedFields: [ours] },
      spec: { transport: 'stdio', replicas: 3 },
      status: { conditions: [OPERATOR_CONDITION, stale] },
    }
    const fake = fakeApi(server)
    await reconcileWith(server, fake, { key: 'MCPServer/team/vmcp' }).run()
    t.equal(fake.writes.length, 1)
    t.match(fake.writes[0]?.body['status'].conditions, [
      { type: 'StdioReplicaCapped', status: 'True', observedGeneration: 2 },
      OPERATOR_CONDITION,
    ])
    t.same(fake.writes[0]?.body['status'].conditions[1], OPERATOR_CONDITION, 'verbatim')
  },
)

t.test('an up-to-date cache needs no read and no write', async (t) => {
  const written = vmcp({ conditions: [{ ...OPERATOR_CONDITION, observedGeneration: 2 }] })
  const fake = fakeApi(written)
  const { run } = reconcileWith(written, fake)
  await run()
  t.equal(fake.reads, 0)
  t.equal(fake.writes.length, 0)
})

t.test('a conflict drops the named condition and leaves it to its owner', async (t) => {
  const server: KubeObject = {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPServer',
    metadata: { name: 'vmcp', namespace: 'team', generation: 1 },
    spec: { transport: 'stdio', replicas: 2 },
  }
  const conflict = {
    status: 409,
    body: {
      kind: 'Status',
      reason: 'Conflict',
      details: {
        causes: [
          {
            type: 'FieldManagerConflict',
            field: '.status.conditions[type="StdioReplicaCapped"].message',
          },
        ],
      },
    },
  }
  const fake = fakeApi(server, [conflict])
  const { run, yielded } = reconcileWith(server, fake, { key: 'MCPServer/team/vmcp' })
  t.same(await run(), { result: 'written', conditions: ['SessionStorageWarning'] })
  t.equal(fake.writes.length, 2, 'the first apply, then one without the conflicting condition')
  t.same(
    fake.writes.map((w) => w.body['status'].conditions.map((c: Any) => c.type)),
    [['StdioReplicaCapped', 'SessionStorageWarning'], ['SessionStorageWarning']],
  )
  t.same(yielded, ['StdioReplicaCapped'])
})

t.test('no write once leadership is lost, and a failed read is retried', async (t) => {
  const object = vmcp()
  const lost = new AbortController()
  lost.abort()
  const fake = fakeApi(object)
  t.same(await reconcileWith(object, fake, { leadership: lost.signal }).run(), {
    result: 'abandoned',
  })
  t.equal(fake.writes.length + fake.reads, 0)

  const failing = reconcileWith(object, {
    api: {
      get: async () => {
        throw new Error('connection refused')
      },
      write: async () => ({ status: 200, body: {} }),
    },
  })
  t.match(await failing.run(), { result: 'retry', error: { message: 'connection refused' } })
})

t.test('a write the API server refuses is reported as refused, not retried', async (t) => {
  const object = vmcp()
  const invalid = { status: 422, body: { kind: 'Status', message: 'status.conditions: Invalid' } }
  const { run } = reconcileWith(object, fakeApi(object, [invalid]))
  t.same(await run(), { result: 'refused', reason: '422 status.conditions: Invalid' })
})

t.test('a write under way when leadership ends is abandoned, not counted', async (t) => {
  const object = vmcp()
  const leadership = new AbortController()
  const signals: AbortSignal[] = []
  let written = 0
  const reconcile = createReconcile({
    api: {
      get: async (_path: string, _query: unknown, signal?: AbortSignal) => {
        if (signal) signals.push(signal)
        return object as Record<string, unknown>
      },
      // Like KubeApi.write: never answers, rejects once its signal aborts.
      write: (_method: string, _path: string, _body: unknown, options: Any = {}) =>
        new Promise((_resolve, reject) => {
          const signal = options['signal'] as AbortSignal
          signals.push(signal)
          signal.addEventListener('abort', () => {
            reject(new Error('PUT: leadership lost'))
          })
          leadership.abort()
        }),
    } as never,
    view: { cached: async () => object, resourceOf: (kind) => TABLE_SERVED.get(kind) },
    logger: pino({ level: 'silent' }),
    leadership: leadership.signal,
    now: () => NOW,
    onWrite: () => {
      written++
    },
  })
  t.same(await reconcile(KEY), { result: 'abandoned' }, 'no retry is queued by a former leader')
  t.equal(signals.length, 2, 'the read and the write both carried a signal')
  t.ok(signals[1]?.aborted, "the write's signal aborted with leadership")
  t.equal(written, 0)
})
