/**
 * The status reconciler against the real API server with no operator running
 * (docs/enforcement.md#status): its conditions stamped on create and on change, each with its own
 * observedGeneration and never a top-level one, Valid=False with the validator's words and no
 * configHash, another manager's condition untouched, no write when nothing changed, and leader
 * election between two replicas. Beside the real operator: operator-v*.test.ts.
 */

import t from 'tap'
import { startEnvironment, storeWithoutValidation } from './harness/environment.ts'
import type { RunningAdmission } from './harness/environment.ts'
import { mustKubectl } from './harness/kubectl.ts'
import { waitFor } from './harness/processes.ts'

type Any = Record<string, any>
const env = await startEnvironment(t)
const { kubectl, admission } = env

const server = (namespace: string, name: string, spec: Any) => ({
  apiVersion: 'toolhive.stacklok.dev/v1beta1',
  kind: 'MCPServer',
  metadata: { name, namespace },
  spec,
})
const apply = (object: unknown) =>
  mustKubectl(kubectl, ['apply', '-f', '-'], JSON.stringify(object))
const get = async (kind: string, name: string, namespace: string): Promise<Any> =>
  JSON.parse(await mustKubectl(kubectl, ['get', kind, name, '-n', namespace, '-o', 'json'])) as Any
const condition = (object: Any, type: string): Any | undefined =>
  ((object['status']?.conditions ?? []) as Any[]).find((c) => c['type'] === type)

/** Waits until the object's status satisfies `check`, returning the object. */
async function statusOf(
  kind: string,
  name: string,
  namespace: string,
  check: (object: Any) => boolean,
): Promise<Any> {
  return waitFor(
    `${kind} ${name} status`,
    async () => {
      const object = await get(kind, name, namespace)
      return check(object) ? object : undefined
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  )
}

t.test('conditions follow the spec; each carries the generation it observed', async (t) => {
  const ns = await env.namespace()
  await apply(server(ns, 'stdio', { transport: 'stdio', replicas: 3 }))
  const capped = await statusOf(
    'mcpserver',
    'stdio',
    ns,
    (o) => condition(o, 'StdioReplicaCapped')?.['status'] === 'True',
  )
  t.match(condition(capped, 'StdioReplicaCapped'), {
    status: 'True',
    reason: 'StdioTransportCapAt1',
    message:
      'stdio transport requires exactly 1 replica; deployment will use 1 regardless of spec.replicas',
  })
  t.match(condition(capped, 'SessionStorageWarning'), {
    status: 'True',
    reason: 'SessionStorageMissingForReplicas',
  })
  t.equal(condition(capped, 'StdioReplicaCapped')?.['observedGeneration'], 1)
  t.notOk('observedGeneration' in capped['status'], 'no top-level observedGeneration: not ours')

  await apply(server(ns, 'stdio', { transport: 'stdio', replicas: 1 }))
  const released = await statusOf(
    'mcpserver',
    'stdio',
    ns,
    (o) => condition(o, 'StdioReplicaCapped')?.['status'] === 'False',
  )
  t.match(condition(released, 'StdioReplicaCapped'), {
    status: 'False',
    reason: 'StdioReplicaCapNotActive',
    message: 'stdio replica cap is not active',
  })
  t.match(condition(released, 'SessionStorageWarning'), {
    status: 'False',
    reason: 'SessionStorageWarningNotApplicable',
  })
  t.equal(released['metadata'].generation, 2)
  t.equal(condition(released, 'StdioReplicaCapped')?.['observedGeneration'], 2)
  t.notOk('observedGeneration' in released['status'])
})

t.test('an invalid webhook config shows Valid=False with the validator messages', async (t) => {
  const ns = await env.namespace()
  await storeWithoutValidation(kubectl, {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'bad', namespace: ns },
    spec: { validating: [{ name: 'v', url: 'not-a-valid-url', failurePolicy: 'Fail' }] },
  })

  const stored = await statusOf(
    'mcpwebhookconfig',
    'bad',
    ns,
    (o) => condition(o, 'Valid') !== undefined,
  )
  const valid = condition(stored, 'Valid')!
  t.equal(valid['status'], 'False')
  t.equal(valid['reason'], 'ValidationFailed')
  t.match(valid['message'], 'spec.validating[0].url: Invalid value: "not-a-valid-url"')
  t.match(valid['message'], 'spec.validating[0].failurePolicy: Unsupported value: "Fail"')
  t.notOk('configHash' in stored['status'], 'configHash is the operator’s')
})

t.test(
  'a condition written by another field manager survives; unchanged objects are not rewritten',
  async (t) => {
    const ns = await env.namespace()
    await apply(server(ns, 'shared', { transport: 'sse' }))
    await statusOf(
      'mcpserver',
      'shared',
      ns,
      (o) => condition(o, 'StdioReplicaCapped') !== undefined,
    )
    // The operator owns Ready; it applies it with its own field manager.
    const operatorStatus = {
      apiVersion: 'toolhive.stacklok.dev/v1beta1',
      kind: 'MCPServer',
      metadata: { name: 'shared', namespace: ns },
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Running',
            message: 'proxy is running',
            lastTransitionTime: '2026-11-22T00:00:00Z',
          },
        ],
      },
    }
    await mustKubectl(
      kubectl,
      [
        'apply',
        '--server-side',
        '--field-manager=toolhive-operator',
        '--subresource=status',
        '-f',
        '-',
      ],
      JSON.stringify(operatorStatus),
    )
    // Our conditions change with the spec; the operator's stays.
    await apply(server(ns, 'shared', { transport: 'sse', replicas: 2 }))
    const after = await statusOf(
      'mcpserver',
      'shared',
      ns,
      (o) => condition(o, 'SessionStorageWarning')?.['status'] === 'True',
    )
    t.match(condition(after, 'Ready'), {
      status: 'True',
      reason: 'Running',
      message: 'proxy is running',
    })

    // Nothing changes from here: the reconciler sees a label change that changes no status, and
    // writes nothing (the object keeps the resourceVersion the label change gave it).
    const writes = await admission.metric('mcp_admission_status_writes_total')
    const reconciled = await admission.metric('mcp_admission_reconciles_total')
    await mustKubectl(kubectl, ['label', 'mcpserver', 'shared', '-n', ns, 'touched=yes'])
    const afterLabel = await get('mcpserver', 'shared', ns)
    // The reconcile of the label change has finished once the counter moves.
    await waitFor(
      'the reconciler to see the label change',
      async () =>
        (await admission.metric('mcp_admission_reconciles_total')) > reconciled ? true : undefined,
      { timeoutMs: 10_000, intervalMs: 100 },
    )
    t.equal(await admission.metric('mcp_admission_status_writes_total'), writes, 'no status write')
    const final = await get('mcpserver', 'shared', ns)
    t.equal(
      final['metadata'].resourceVersion,
      afterLabel['metadata'].resourceVersion,
      'resourceVersion unchanged',
    )
    t.equal(final['metadata'].labels.touched, 'yes')
  },
)

t.test('two replicas: one writes; a graceful stop and a SIGKILL both hand over', async (t) => {
  const ns = await env.namespace()
  const second = await env.startAdmission()
  t.teardown(() => second.stop())
  const replicas: [string, RunningAdmission][] = [
    ['first', admission],
    ['second', second],
  ]
  const leaders = async () => {
    const flags = await Promise.all(
      replicas.map(
        async ([name, r]) =>
          [
            name,
            r.process.child.exitCode === null
              ? await r.metric('mcp_admission_reconciler_leader').catch(() => 0)
              : 0,
          ] as const,
      ),
    )
    return flags.filter(([, leader]) => leader === 1).map(([name]) => name)
  }
  const [leaderName, ...others] = await waitFor(
    'a leader',
    async () => {
      const current = await leaders()
      return current.length > 0 ? current : undefined
    },
    { timeoutMs: 10_000 },
  )
  t.same(others, [], 'exactly one leader')
  const leader = leaderName === 'first' ? admission : second
  const follower = leader === admission ? second : admission

  await apply(server(ns, 'handover', { transport: 'stdio', replicas: 2 }))
  await statusOf(
    'mcpserver',
    'handover',
    ns,
    (o) => condition(o, 'StdioReplicaCapped')?.['status'] === 'True',
  )
  t.ok((await leader.metric('mcp_admission_status_writes_total')) > 0, 'the leader writes')
  t.equal(
    await follower.metric('mcp_admission_status_writes_total'),
    0,
    'the follower never writes',
  )

  // Graceful stop: the Lease is released and the follower takes over within a few seconds.
  const stopped = Date.now()
  await leader.stop()
  await waitFor(
    'the follower to lead',
    async () =>
      (await follower.metric('mcp_admission_reconciler_leader')) === 1 ? true : undefined,
    { timeoutMs: 8_000 },
  )
  t.comment(`graceful handover in ${Date.now() - stopped} ms`)
  await apply(server(ns, 'handover', { transport: 'stdio', replicas: 1 }))
  await statusOf(
    'mcpserver',
    'handover',
    ns,
    (o) => condition(o, 'StdioReplicaCapped')?.['status'] === 'False',
  )
  t.pass('the new leader writes')

  // SIGKILL: no release; a fresh replica takes over once the 15 s lease has expired.
  const third = await env.startAdmission()
  t.teardown(() => third.stop())
  follower.process.child.kill('SIGKILL')
  const killed = Date.now()
  await waitFor(
    'the third replica to lead',
    async () => ((await third.metric('mcp_admission_reconciler_leader')) === 1 ? true : undefined),
    { timeoutMs: 25_000 },
  )
  const handover = Date.now() - killed
  t.comment(`handover after SIGKILL in ${handover} ms`)
  t.ok(handover <= 20_000, 'within the lease duration plus a retry period')
})
