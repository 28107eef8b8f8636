import t from 'tap'
import { MESSAGE_LIMITS, formatViolations } from '../../src/policy/messages/render.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import {
  MAX_CONDITION_MESSAGE_BYTES,
  desiredStatus,
  mergeConditions,
  statusNeedsWrite,
} from '../../src/policy/status-conditions.ts'
import type { DesiredStatus } from '../../src/policy/status-conditions.ts'
import { validateWebhookConfig } from '../../src/policy/webhook-config.ts'

const GROUP = 'toolhive.stacklok.dev'
const NOW = '2025-06-01T12:00:00Z'
const EARLIER = '2025-01-01T00:00:00Z'

/** A ToolHive object at generation 4; `{ generation: undefined }` leaves the generation out. */
function object(
  kind: string,
  spec: unknown,
  options: { generation?: unknown; version?: string } = {},
): KubeObject {
  const generation = 'generation' in options ? options.generation : 4
  return {
    apiVersion: `${GROUP}/${options.version ?? 'v1alpha1'}`,
    kind,
    metadata: {
      name: 'demo',
      namespace: 'default',
      ...(generation === undefined ? {} : { generation }),
    },
    spec,
  }
}

/** type / status / reason / message of each desired condition, for compact expectations. */
function summary(status: DesiredStatus | undefined): string[][] {
  return (status?.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message])
}

const CAPPED = [
  'StdioReplicaCapped',
  'True',
  'StdioTransportCapAt1',
  'stdio transport requires exactly 1 replica; deployment will use 1 regardless of spec.replicas',
]
const NOT_CAPPED = [
  'StdioReplicaCapped',
  'False',
  'StdioReplicaCapNotActive',
  'stdio replica cap is not active',
]
const SESSIONS_MISSING = [
  'SessionStorageWarning',
  'True',
  'SessionStorageMissingForReplicas',
  'replicas > 1 but sessionStorage.provider is not redis; sessions are not shared across replicas',
]
const SESSIONS_REDIS = [
  'SessionStorageWarning',
  'False',
  'SessionStorageConfigured',
  'Redis session storage is configured',
]
const SESSIONS_NA = [
  'SessionStorageWarning',
  'False',
  'SessionStorageWarningNotApplicable',
  'session storage warning is not active',
]
const REDIS = { provider: 'redis', address: 'redis:6379' }

t.test('MCPServer StdioReplicaCapped', async (t) => {
  const cases: [name: string, spec: unknown, expected: string[]][] = [
    ['stdio by default, 3 replicas', { replicas: 3 }, CAPPED],
    ['explicit stdio, 2 replicas', { transport: 'stdio', replicas: 2 }, CAPPED],
    ['empty transport is stdio', { transport: '', replicas: 3 }, CAPPED],
    ['stdio scaled back to 1', { replicas: 1 }, NOT_CAPPED],
    ['stdio, replicas unset', {}, NOT_CAPPED],
    ['stdio, 0 replicas', { replicas: 0 }, NOT_CAPPED],
    ['sse, 3 replicas', { transport: 'sse', replicas: 3 }, NOT_CAPPED],
    ['streamable-http, 3 replicas', { transport: 'streamable-http', replicas: 3 }, NOT_CAPPED],
    ['replicas as a string is not a count', { replicas: '3' }, NOT_CAPPED],
    ['fractional replicas are not a count', { replicas: 2.5 }, NOT_CAPPED],
    ['no spec at all', undefined, NOT_CAPPED],
  ]
  for (const [name, spec, expected] of cases) {
    t.same(summary(desiredStatus(object('MCPServer', spec)))[0], expected, name)
  }
})

t.test('SessionStorageWarning for each workload kind', async (t) => {
  const cases: [name: string, spec: Record<string, unknown>, expected: string[]][] = [
    ['3 replicas, no session storage', { replicas: 3 }, SESSIONS_MISSING],
    [
      '3 replicas, memory',
      { replicas: 3, sessionStorage: { provider: 'memory' } },
      SESSIONS_MISSING,
    ],
    ['3 replicas, malformed storage', { replicas: 3, sessionStorage: 'redis' }, SESSIONS_MISSING],
    ['3 replicas, redis', { replicas: 3, sessionStorage: REDIS }, SESSIONS_REDIS],
    ['1 replica, no storage', { replicas: 1 }, SESSIONS_NA],
    ['1 replica, redis', { replicas: 1, sessionStorage: REDIS }, SESSIONS_NA],
    ['replicas unset', {}, SESSIONS_NA],
  ]
  for (const kind of ['MCPServer', 'MCPRemoteProxy', 'VirtualMCPServer']) {
    for (const [name, spec, expected] of cases) {
      // Remote and sse transports, so the stdio cap does not enter the picture.
      const conditions = summary(desiredStatus(object(kind, { transport: 'sse', ...spec })))
      t.same(conditions.at(-1), expected, `${kind}: ${name}`)
    }
  }
})

t.test('each kind gets exactly its conditions, in any version', async (t) => {
  const cases: [kind: string, version: string, types: string[]][] = [
    ['MCPServer', 'v1alpha1', ['StdioReplicaCapped', 'SessionStorageWarning']],
    ['MCPServer', 'v1beta1', ['StdioReplicaCapped', 'SessionStorageWarning']],
    ['MCPRemoteProxy', 'v1beta1', ['SessionStorageWarning']],
    ['VirtualMCPServer', 'v1alpha1', ['SessionStorageWarning']],
    ['MCPWebhookConfig', 'v1alpha1', ['Valid']],
  ]
  for (const [kind, version, types] of cases) {
    const status = desiredStatus(object(kind, {}, { version }))
    t.same(
      status?.conditions.map((c) => c.type),
      types,
      `${kind} ${version}`,
    )
  }
  t.equal(desiredStatus(object('MCPToolConfig', {})), undefined, 'another ToolHive kind')
  // A kind of the table with no conditions of ours: nothing to write, not even an empty list.
  const quiet = { ...TOOLHIVE_KIND_TABLE[0], kind: 'MCPToolConfig', conditions: [] }
  t.equal(
    desiredStatus(object('MCPToolConfig', {}), [...TOOLHIVE_KIND_TABLE, quiet]),
    undefined,
    'a kind without conditions',
  )
  t.equal(
    desiredStatus({ ...object('MCPServer', {}), apiVersion: 'example.com/v1' }),
    undefined,
    'an MCPServer of another group',
  )
  t.equal(desiredStatus({ apiVersion: 'apps/v1', kind: 'Deployment' }), undefined)
})

t.test('stdio with 3 replicas warns about both, as the table says', async (t) => {
  t.same(summary(desiredStatus(object('MCPServer', { replicas: 3 }))), [CAPPED, SESSIONS_MISSING])
})

t.test('MCPWebhookConfig Valid uses the webhook’s own messages', async (t) => {
  const valid = desiredStatus(
    object('MCPWebhookConfig', { validating: [{ name: 'audit', url: 'https://h.example/v' }] }),
  )
  t.same(summary(valid), [['Valid', 'True', 'ValidationSucceeded', 'Spec validation passed']])

  const specs: [name: string, spec: unknown, expected: string][] = [
    [
      'no webhooks',
      {},
      'spec: Required value: at least one validating or mutating webhook must be defined',
    ],
    [
      'plain http',
      { mutating: [{ name: 'm', url: 'http://x' }] },
      'spec.mutating[0].url: Invalid value: "http://x": must use https unless tlsConfig.insecureSkipVerify is true',
    ],
    [
      'two problems',
      { validating: [{ url: 'https://h.example/v', failurePolicy: 'Fail' }] },
      '[spec.validating[0].name: Required value, spec.validating[0].failurePolicy: Unsupported value: "Fail": supported values: "fail", "ignore"]',
    ],
  ]
  for (const [name, spec, expected] of specs) {
    const config = object('MCPWebhookConfig', spec)
    const status = desiredStatus(config)
    t.same(summary(status), [['Valid', 'False', 'ValidationFailed', expected]], name)
    const webhook = validateWebhookConfig({
      operation: 'CREATE',
      object: config,
      oldObject: undefined,
    })
    t.equal(status?.conditions[0]?.message, formatViolations(webhook.violations), `${name}: same`)
  }
})

t.test('a huge Valid message is bounded like a denial', async (t) => {
  const hooks = Array.from({ length: 400 }, (_, i) => ({
    name: `h${i}`,
    url: `http://${'é'.repeat(60)}`,
  }))
  const message = desiredStatus(object('MCPWebhookConfig', { validating: hooks }))?.conditions[0]
    ?.message
  t.ok(message !== undefined && Buffer.byteLength(message, 'utf8') <= MAX_CONDITION_MESSAGE_BYTES)
  t.ok(message !== undefined && Buffer.byteLength(message, 'utf8') <= MESSAGE_LIMITS.messageBytes)
  t.match(message, /, and \d+ more errors\]$/, 'says how many were left out')
  t.ok(message?.startsWith('[spec.validating[0].url: Invalid value: '))
  t.notOk(message?.includes('\uFFFD'), 'no character split')
})

t.test('observedGeneration follows metadata.generation', async (t) => {
  const cases: [name: string, generation: unknown, expected: number | undefined][] = [
    ['an integer', 7, 7],
    ['zero', 0, 0],
    ['absent', undefined, undefined],
    ['a string', '7', undefined],
    ['fractional', 1.5, undefined],
    ['negative', -1, undefined],
  ]
  for (const kind of ['MCPServer', 'MCPWebhookConfig']) {
    for (const [name, generation, expected] of cases) {
      const status = desiredStatus(object(kind, { replicas: 2 }, { generation }))
      t.notOk('observedGeneration' in (status ?? {}), `${kind}: never a top-level one`)
      for (const condition of status?.conditions ?? []) {
        t.equal(condition.observedGeneration, expected, `${kind} ${condition.type}: ${name}`)
        t.equal('observedGeneration' in condition, expected !== undefined, 'absent, not undefined')
      }
    }
  }
})

t.test('neither observedGeneration nor configHash: the operator owns them', async (t) => {
  for (const kind of ['MCPServer', 'MCPRemoteProxy', 'VirtualMCPServer', 'MCPWebhookConfig']) {
    const status = desiredStatus(object(kind, { replicas: 2 }, { generation: 3 }))
    t.same(Object.keys(status ?? {}), ['conditions'], kind)
  }
})

t.test('mergeConditions keeps lastTransitionTime only while status is unchanged', async (t) => {
  const desired = desiredStatus(object('MCPServer', { replicas: 3 }))!.conditions
  const current = [
    {
      type: 'StdioReplicaCapped',
      status: 'True',
      reason: 'Old',
      message: 'old',
      lastTransitionTime: EARLIER,
    },
    {
      type: 'SessionStorageWarning',
      status: 'False',
      reason: 'SessionStorageWarningNotApplicable',
      message: '',
      lastTransitionTime: EARLIER,
    },
    { type: 'Ready', status: 'True', reason: 'Running', message: '', lastTransitionTime: EARLIER },
  ]
  const merged = mergeConditions(current, desired, NOW)
  t.same(
    merged,
    [
      {
        type: 'StdioReplicaCapped',
        status: 'True',
        reason: 'StdioTransportCapAt1',
        message: CAPPED[3],
        lastTransitionTime: EARLIER,
        observedGeneration: 4,
      },
      {
        type: 'SessionStorageWarning',
        status: 'True',
        reason: 'SessionStorageMissingForReplicas',
        message: SESSIONS_MISSING[3],
        lastTransitionTime: NOW,
        observedGeneration: 4,
      },
    ],
    'same status keeps its time (reason changes do not count); a flip resets it; Ready is not ours',
  )

  const fresh: [name: string, current: unknown][] = [
    ['no conditions', undefined],
    ['not an array', { type: 'StdioReplicaCapped' }],
    ['junk items', [null, 'x', 42, []]],
    ['missing time', [{ type: 'StdioReplicaCapped', status: 'True' }]],
    ['empty time', [{ type: 'StdioReplicaCapped', status: 'True', lastTransitionTime: '' }]],
  ]
  for (const [name, value] of fresh) {
    const times = mergeConditions(value, desired, NOW).map((c) => c.lastTransitionTime)
    t.same(times, [NOW, NOW], name)
  }
})

t.test('statusNeedsWrite ignores lastTransitionTime and catches every drift', async (t) => {
  const server = object('MCPServer', { replicas: 3 })
  const desired = desiredStatus(server)!
  const upToDate = {
    observedGeneration: 4,
    conditions: [
      { type: 'Ready', status: 'False', reason: 'Pending', message: 'operator-owned' },
      ...mergeConditions(undefined, desired.conditions, EARLIER),
    ],
  }
  t.notOk(statusNeedsWrite(upToDate, desired), 'up to date, other managers’ conditions aside')
  const retimed = { ...upToDate, conditions: mergeConditions(undefined, desired.conditions, NOW) }
  t.notOk(statusNeedsWrite(retimed, desired), 'only lastTransitionTime differs')

  const drifted = (change: (c: Record<string, unknown>) => void) => {
    const copy = structuredClone(upToDate)
    change(copy.conditions[1] as Record<string, unknown>)
    return copy
  }
  const drifts: [name: string, status: unknown][] = [
    ['status', drifted((c) => (c['status'] = 'False'))],
    ['reason', drifted((c) => (c['reason'] = 'Other'))],
    ['message', drifted((c) => (c['message'] = 'other'))],
    ['condition observedGeneration', drifted((c) => (c['observedGeneration'] = 3))],
    ['condition observedGeneration missing', drifted((c) => delete c['observedGeneration'])],
    ['a condition missing', { ...upToDate, conditions: upToDate.conditions.slice(0, 2) }],
    ['no status', undefined],
    ['status not an object', 'ok'],
    ['status an array', [upToDate]],
    ['conditions not an array', { ...upToDate, conditions: {} }],
    ['condition items not objects', { ...upToDate, conditions: ['x', null, 1] }],
  ]
  for (const [name, status] of drifts) t.ok(statusNeedsWrite(status, desired), name)

  const config = object('MCPWebhookConfig', {})
  const wanted = desiredStatus(config)!
  const written = { conditions: mergeConditions(undefined, wanted.conditions, NOW) }
  t.notOk(statusNeedsWrite(written, wanted), 'webhook config up to date')
  t.notOk(
    statusNeedsWrite({ ...written, configHash: 'abcd0123', observedGeneration: 1 }, wanted),
    'the operator’s configHash and observedGeneration are not compared',
  )
})

t.test('fields the desired status leaves out are not compared', async (t) => {
  // No generation to observe: a write could never make the stored fields go away.
  const desired = desiredStatus(object('MCPRemoteProxy', {}, { generation: undefined }))!
  const stored = {
    observedGeneration: 9,
    conditions: mergeConditions(undefined, desired.conditions, NOW).map((c) => ({
      ...c,
      observedGeneration: 9,
    })),
  }
  t.notOk(statusNeedsWrite(stored, desired))
})

t.test('untrusted input never throws', async (t) => {
  const desired = desiredStatus(object('MCPServer', {}))!
  const inputs: unknown[] = [
    null,
    undefined,
    42,
    'status',
    [],
    JSON.parse('{"__proto__": {"conditions": [1]}, "conditions": [{"__proto__": {}}]}'),
    { conditions: [{ type: 42 }, { type: 'StdioReplicaCapped', status: {} }] },
    { conditions: new Array(3) },
    Object.create(null),
  ]
  for (const input of inputs) {
    t.doesNotThrow(() => statusNeedsWrite(input, desired))
    t.doesNotThrow(() => mergeConditions(input, desired.conditions, NOW))
    t.doesNotThrow(() =>
      mergeConditions(isRecord(input) ? input.conditions : input, desired.conditions, NOW),
    )
    t.doesNotThrow(() => desiredStatus(input as KubeObject))
    t.doesNotThrow(() =>
      desiredStatus({
        apiVersion: `${GROUP}/v1alpha1`,
        kind: 'MCPServer',
        metadata: input,
        spec: input,
      } as KubeObject),
    )
    t.doesNotThrow(() =>
      desiredStatus({
        apiVersion: `${GROUP}/v1alpha1`,
        kind: 'MCPWebhookConfig',
        metadata: input,
        spec: input,
      } as KubeObject),
    )
  }
  const tricky = JSON.parse(
    '{"apiVersion":"toolhive.stacklok.dev/v1alpha1","kind":"MCPServer","metadata":{"__proto__":{"generation":5}},"spec":{"__proto__":{"replicas":3},"replicas":2}}',
  ) as KubeObject
  const status = desiredStatus(tricky)
  t.equal(
    status?.conditions[0]?.observedGeneration,
    undefined,
    '__proto__ is an ordinary key, not a parent',
  )
  t.same(summary(status)[0], CAPPED)
})

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
