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

// ---------------------------------------------------------------------------------------------
// VirtualMCPCompositeToolDefinition: status.validationStatus, which ToolHive's VirtualMCPServer
// controller reads (Invalid fails every server that references the definition).

const DEFINITION_KEY = 'VirtualMCPCompositeToolDefinition/team/triage'
const DEFINITION_STATUS_PATH =
  '/apis/toolhive.stacklok.dev/v1beta1/namespaces/team/virtualmcpcompositetooldefinitions/triage/status'
const VALID_STEPS = [
  { id: 'fetch', type: 'tool', tool: 'github.get_issue' },
  { id: 'label', type: 'tool', tool: 'github.add_label' },
]
const DUPLICATE_STEPS = [
  { id: 'a', type: 'tool', tool: 'github.get_issue' },
  { id: 'a', type: 'tool', tool: 'github.add_label' },
]
const DUPLICATE_ERRORS = ['spec.steps[1].id: Duplicate value: "a"']
const INVALID = { validationStatus: 'Invalid', validationErrors: DUPLICATE_ERRORS }

function definition(steps: unknown[], status: Any = {}, managedFields: unknown[] = []): KubeObject {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'VirtualMCPCompositeToolDefinition',
    metadata: {
      name: 'triage',
      namespace: 'team',
      generation: 4,
      resourceVersion: '81',
      managedFields,
    },
    spec: { name: 'triage', description: 'Triage an issue', steps },
    status,
  }
}

/** A managedFields entry of `manager` owning these status fields. */
function statusOwner(manager: string, fields: string[], operation = 'Apply') {
  return {
    manager,
    operation,
    subresource: 'status',
    fieldsV1: { 'f:status': Object.fromEntries(fields.map((field) => [`f:${field}`, {}])) },
  }
}
const OURS = statusOwner('mcp-admission-status', ['validationStatus', 'validationErrors'])

function reconcileDefinition(cached: KubeObject, fake: Pick<ReturnType<typeof fakeApi>, 'api'>) {
  return reconcileWith(cached, fake, { key: DEFINITION_KEY })
}

t.test('a definition with violations: Invalid written once, by apply without force', async (t) => {
  const stored = definition(DUPLICATE_STEPS)
  const fake = fakeApi(stored)
  const { run, yielded } = reconcileDefinition(stored, fake)
  t.same(await run(), { result: 'written', validationStatus: 'Invalid' })
  t.equal(fake.writes.length, 1)
  const [write] = fake.writes
  t.equal(write?.path, DEFINITION_STATUS_PATH)
  t.same(write?.query, { fieldManager: 'mcp-admission-status' }, 'no force')
  t.same(
    write?.body['status'],
    INVALID,
    'only the two fields: no Valid, no observedGeneration, no conditions',
  )
  t.same(yielded, [])

  // The API server's answer, as the cache then sees it: equal, so neither read nor write.
  const written = definition(DUPLICATE_STEPS, INVALID, [OURS])
  const again = fakeApi(written)
  t.same(await reconcileDefinition(written, again).run(), { result: 'unchanged' })
  t.equal(again.reads + again.writes.length, 0, 'skipped when equal')
})

t.test('new violations replace the errors written before', async (t) => {
  const stale = definition(
    DUPLICATE_STEPS,
    { validationStatus: 'Invalid', validationErrors: ['spec.steps[0].id: Required value'] },
    [OURS],
  )
  const fake = fakeApi(stale)
  t.same(await reconcileDefinition(stale, fake).run(), {
    result: 'written',
    validationStatus: 'Invalid',
  })
  t.same(fake.writes[0]?.body['status'], INVALID)
})

t.test('fixed: its own Invalid removed, conditional on the version read', async (t) => {
  const fixed = definition(VALID_STEPS, INVALID, [OURS])
  const fake = fakeApi(fixed)
  t.same(await reconcileDefinition(fixed, fake).run(), {
    result: 'written',
    validationStatus: 'removed',
  })
  t.equal(fake.writes.length, 1)
  t.equal(fake.writes[0]?.path, DEFINITION_STATUS_PATH)
  t.same(fake.writes[0]?.query, { fieldManager: 'mcp-admission-status' })
  t.same(
    fake.writes[0]?.body,
    {
      metadata: { resourceVersion: '81' },
      status: { validationStatus: null, validationErrors: null },
    },
    'a merge patch: an apply without them would leave status null, which the CRD refuses',
  )

  const released = definition(VALID_STEPS)
  const after = fakeApi(released)
  t.same(await reconcileDefinition(released, after).run(), { result: 'unchanged' })
  t.equal(after.reads + after.writes.length, 0, 'nothing more to do')
})

t.test("fixed, but the Invalid is someone else's: left alone", async (t) => {
  const theirs = definition(VALID_STEPS, INVALID, [
    statusOwner('ci-validator', ['validationStatus', 'validationErrors'], 'Update'),
  ])
  const fake = fakeApi(theirs)
  const { run, yielded } = reconcileDefinition(theirs, fake)
  t.same(await run(), { result: 'unchanged' })
  t.equal(fake.writes.length, 0)
  t.same(yielded, ['validationStatus', 'validationErrors'], 'counted as left to its owner')

  // Stored with no owner at all (its managedFields reset): not ours to remove either.
  const unowned = definition(VALID_STEPS, INVALID)
  const none = fakeApi(unowned)
  const orphan = reconcileDefinition(unowned, none)
  t.same(await orphan.run(), { result: 'unchanged' })
  t.equal(none.writes.length, 0)
  t.same(orphan.yielded, [])
})

t.test('a field another manager owns is never written', async (t) => {
  // Someone else judged it Valid; the reconciler's rules disagree, but the field is theirs.
  const judged = definition(DUPLICATE_STEPS, { validationStatus: 'Valid' }, [
    statusOwner('ci-validator', ['validationStatus'], 'Update'),
  ])
  const fake = fakeApi(judged)
  const { run, yielded } = reconcileDefinition(judged, fake)
  t.same(await run(), { result: 'unchanged' })
  t.equal(fake.writes.length, 0)
  t.same(yielded, ['validationStatus'])

  // We wrote the status, and another manager then set the errors: both are left as they are.
  const shared = definition(
    DUPLICATE_STEPS,
    { validationStatus: 'Invalid', validationErrors: ['theirs'] },
    [
      statusOwner('mcp-admission-status', ['validationStatus']),
      statusOwner('ci-validator', ['validationErrors'], 'Update'),
    ],
  )
  const second = fakeApi(shared)
  const sharing = reconcileDefinition(shared, second)
  t.same(await sharing.run(), { result: 'unchanged' })
  t.equal(second.writes.length, 0)
  t.same(sharing.yielded, ['validationErrors'])
})

t.test('never Valid: a definition without violations is written nothing', async (t) => {
  for (const status of [{}, { validationStatus: 'Unknown' }, { validationStatus: 'Valid' }]) {
    const object = definition(VALID_STEPS, status)
    const fake = fakeApi(object)
    t.same(await reconcileDefinition(object, fake).run(), { result: 'unchanged' })
    t.equal(fake.reads + fake.writes.length, 0, JSON.stringify(status))
  }
})

t.test('the live object decides: the cache may be behind', async (t) => {
  // The cache still holds the broken spec; the live object is fixed and was never marked.
  const fake = fakeApi(definition(VALID_STEPS))
  t.same(await reconcileDefinition(definition(DUPLICATE_STEPS), fake).run(), {
    result: 'unchanged',
  })
  t.equal(fake.reads, 1)
  t.equal(fake.writes.length, 0)

  const gone = fakeApi(undefined)
  t.same(await reconcileDefinition(definition(DUPLICATE_STEPS), gone).run(), {
    result: 'unchanged',
  })
  t.equal(gone.writes.length, 0, 'deleted since: nothing to write')
})

t.test('what the API server answers a validation-status write', async (t) => {
  const stored = definition(DUPLICATE_STEPS)
  const conflictOn = (field: string) => ({
    status: 409,
    body: { kind: 'Status', details: { causes: [{ type: 'FieldManagerConflict', field }] } },
  })

  const taken = reconcileDefinition(
    stored,
    fakeApi(stored, [conflictOn('.status.validationStatus')]),
  )
  t.same(await taken.run(), { result: 'unchanged' }, 'a manager appeared: theirs now')
  t.same(taken.yielded, ['validationStatus'])

  const elsewhere = reconcileDefinition(stored, fakeApi(stored, [conflictOn('.status.other')]))
  t.match(await elsewhere.run(), {
    result: 'retry',
    error: { message: 'apply conflict on .status.other' },
  })

  const gone = reconcileDefinition(stored, fakeApi(stored, [{ status: 404 }]))
  t.same(await gone.run(), { result: 'unchanged' })

  const busy = reconcileDefinition(stored, fakeApi(stored, [{ status: 503, body: {} }]))
  t.match(await busy.run(), { result: 'retry', error: { message: '503' } })

  const invalid = { status: 422, body: { kind: 'Status', message: 'status.validationStatus' } }
  const refused = reconcileDefinition(stored, fakeApi(stored, [invalid]))
  t.same(await refused.run(), { result: 'refused', reason: '422 status.validationStatus' })
})

t.test('a validation-status write under way when leadership ends is abandoned', async (t) => {
  const stored = definition(DUPLICATE_STEPS)
  const leadership = new AbortController()
  const fake = fakeApi(stored)
  const reconcile = createReconcile({
    api: {
      get: fake.api.get,
      write: async () => {
        leadership.abort()
        return { status: 503, body: {} }
      },
    },
    view: { cached: async () => stored, resourceOf: (kind) => TABLE_SERVED.get(kind) },
    logger: pino({ level: 'silent' }),
    leadership: leadership.signal,
  })
  t.same(await reconcile(DEFINITION_KEY), { result: 'abandoned' })
})
