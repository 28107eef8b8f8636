/**
 * docs/enforcement.md#a-slow-api-server: when a proxy Deployment's live reads miss their deadline,
 * the operator's own write (its exact service account) is admitted with the stamps it carries, and
 * every invariant that needs no live read still holds; anyone else's write, a write lacking a stamp
 * and a write lowering the generation are refused in-band as before.
 */

import t from 'tap'
import { LIVE_READ_DEADLINE_MS } from '../../src/admission/deadline.ts'
import { AUDIT_KEYS } from '../../src/admission/enforcement.ts'
import { requestFor } from '../../src/admission/request.ts'
import type { AdmissionResponse } from '../../src/admission/review.ts'
import { createAdmission } from '../../src/admission/webhook.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { isDeadline } from '../../src/cluster/kube-api.ts'
import { ClusterReadError } from '../../src/cluster/view.ts'
import type { ObjectKey, ReadOptions } from '../../src/cluster/view.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import type { WorkloadKind } from '../../src/policy/kinds.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { patchOf, reviewOf } from '../helpers/objects.ts'
import { NAMESPACE, proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

const OPERATOR = 'system:serviceaccount:toolhive-system:toolhive-operator'
const CHECKSUM = 'c0ffee'

/**
 * The cache holds the owners; the API server behind it is too slow for every live read. With
 * `hang`, a read waits until admission's own deadline ends it, as a real one does; otherwise it
 * fails at once as if it had.
 */
class SlowView extends MemoryView {
  liveReads = 0
  readonly #hang: boolean
  constructor(objects: KubeObject[], hang = false) {
    super(objects)
    this.#hang = hang
  }
  override async get(key: ObjectKey, options: ReadOptions = {}) {
    if (!options.live) return super.get(key)
    this.liveReads++
    const what = `${key.kind} ${key.namespace}/${key.name}`
    if (!this.#hang)
      throw new ClusterReadError(
        what,
        new Error(`GET ${key.name}: no answer before the deadline`),
        {
          deadlineMissed: true,
        },
      )
    const signal = options.signal
    await new Promise((resolve) => signal?.addEventListener('abort', resolve))
    throw new ClusterReadError(what, new Error('aborted'), { deadlineMissed: isDeadline(signal) })
  }
}

function stamped(
  kind: WorkloadKind,
  annotations: Record<string, string>,
  options: { replicas?: number; uid?: string } = {},
): KubeObject {
  return proxyDeployment(kind, 'demo', { podAnnotations: annotations, ...options })
}

const complete = {
  [ANNOTATIONS.runConfigChecksum]: CHECKSUM,
  [ANNOTATIONS.mcpServerGeneration]: '7',
}

async function admit(
  deployment: KubeObject,
  options: {
    username?: string
    account?: string
    oldObject?: KubeObject
    view?: MemoryView
  } = {},
): Promise<AdmissionResponse> {
  const view = options.view ?? new SlowView([workload('MCPServer', 'demo', { generation: 9 })])
  const request = {
    ...requestFor(deployment, {
      operation: options.oldObject ? 'UPDATE' : 'CREATE',
      namespace: NAMESPACE,
      ...(options.oldObject ? { oldObject: options.oldObject } : {}),
    }),
    userInfo: { username: options.username ?? OPERATOR },
  }
  const admission = createAdmission({
    view,
    ...(options.account ? { operatorServiceAccount: options.account } : {}),
  })
  const outcome = await admission.review(JSON.parse(JSON.stringify(reviewOf(request))), 'mutate')
  if (!outcome.ok) throw new Error(outcome.message)
  return outcome.review.response
}

const UNREAD = /^cannot read (MCPServer|ConfigMap) team\/demo(-runconfig)? from the API server: /

t.test("the operator's complete write is admitted with its own stamps", async (t) => {
  const response = await admit(stamped('MCPServer', complete))
  t.equal(response.allowed, true)
  const paths = patchOf(response).map(({ path }) => path)
  // The stamps are not touched (the owner in the cache says generation 9: not proof enough).
  t.notOk(
    paths.some((path) => path.includes('annotations')),
    'no annotation written',
  )
  // Every invariant that needs no live read still holds.
  t.ok(
    paths.some((path) => path.startsWith('/spec/template/spec/containers/0/env')),
    'the generation env entry',
  )
  t.ok(paths.includes('/spec/template/spec/terminationGracePeriodSeconds'), 'the grace period')
  t.match(response.auditAnnotations?.[AUDIT_KEYS.liveReadFallback], UNREAD)
})

t.test('the stdio cap applies from the cached owner', async (t) => {
  const view = new SlowView([workload('MCPServer', 'demo', { spec: { transport: 'stdio' } })])
  const response = await admit(stamped('MCPServer', complete, { replicas: 3 }), { view })
  t.equal(response.allowed, true)
  t.same(
    patchOf(response).find(({ path }) => path === '/spec/replicas'),
    { op: 'replace', path: '/spec/replicas', value: 1 },
  )
  t.match(response.warnings, [/1 replica/])
})

t.test('a proxy of a kind without a generation needs the checksum only', async (t) => {
  const view = new SlowView([workload('MCPRemoteProxy', 'demo')])
  const response = await admit(
    stamped('MCPRemoteProxy', { [ANNOTATIONS.runConfigChecksum]: CHECKSUM }),
    { view },
  )
  t.equal(response.allowed, true)
})

t.test('only the exact account set with its namespace is trusted', async (t) => {
  const deployment = stamped('MCPServer', complete)
  const named = await admit(deployment, { account: 'toolhive-operator' })
  t.equal(named.allowed, false, 'a name alone is not enough')
  t.equal(named.status?.code, 503)
  t.match(named.status?.message, UNREAD)
  const elsewhere = await admit(deployment, {
    username: 'system:serviceaccount:other:toolhive-operator',
  })
  t.equal(elsewhere.allowed, false, 'the same name in another namespace')
  const admin = await admit(deployment, { username: 'kubernetes-admin' })
  t.equal(admin.allowed, false, 'another writer')
  t.notMatch(admin.status?.message, /\(/, 'refused exactly as before, with no reason added')
  t.equal(
    (
      await admit(deployment, {
        account: 'platform/thv',
        username: 'system:serviceaccount:platform:thv',
      })
    ).allowed,
    true,
    'any namespace and name set together',
  )
})

t.test('a write lacking a stamp is refused, naming it', async (t) => {
  const noChecksum = await admit(stamped('MCPServer', { [ANNOTATIONS.mcpServerGeneration]: '7' }))
  t.equal(noChecksum.allowed, false)
  t.equal(noChecksum.status?.code, 503)
  t.match(
    noChecksum.status?.message,
    `(the write carries no ${ANNOTATIONS.runConfigChecksum} to keep)`,
  )
  const noGeneration = await admit(
    stamped('MCPServer', { [ANNOTATIONS.runConfigChecksum]: CHECKSUM }),
  )
  t.match(
    noGeneration.status?.message,
    `(the write carries no ${ANNOTATIONS.mcpServerGeneration} to keep)`,
  )
  const unreadable = await admit(
    stamped('MCPServer', { ...complete, [ANNOTATIONS.mcpServerGeneration]: 'seven' }),
  )
  t.equal(unreadable.allowed, false, 'a generation that is not a positive integer')
  const empty = await admit(
    stamped('MCPServer', { ...complete, [ANNOTATIONS.runConfigChecksum]: '' }),
  )
  t.equal(empty.allowed, false, 'an empty checksum')
})

t.test('a write lowering the generation of the same owner is refused', async (t) => {
  const stored = stamped('MCPServer', { ...complete, [ANNOTATIONS.mcpServerGeneration]: '8' })
  const lowered = await admit(stamped('MCPServer', complete), { oldObject: stored })
  t.equal(lowered.allowed, false)
  t.match(
    lowered.status?.message,
    `(the write lowers ${ANNOTATIONS.mcpServerGeneration} from 8 to 7)`,
  )
  t.equal(
    (await admit(stamped('MCPServer', complete), { oldObject: stamped('MCPServer', complete) }))
      .allowed,
    true,
    'the same generation',
  )
  // A new incarnation of the owner starts again at generation 1.
  const reborn = stamped('MCPServer', complete, { uid: 'reborn-uid' })
  t.equal((await admit(reborn, { oldObject: stored })).allowed, true, 'another owner uid')
})

t.test('a read that failed without missing the deadline is refused as before', async (t) => {
  const broken = new MemoryView([workload('MCPServer', 'demo')])
  broken.get = () =>
    Promise.reject(new ClusterReadError('MCPServer team/demo', new Error('connection refused')))
  const response = await admit(stamped('MCPServer', complete), { view: broken })
  t.equal(response.allowed, false)
  t.equal(
    response.status?.message,
    'cannot read MCPServer team/demo from the API server: connection refused',
  )
})

t.test('the fallback follows the real deadline, inside the webhook timeout', async (t) => {
  const view = new SlowView([workload('MCPServer', 'demo')], true)
  const started = performance.now()
  const response = await admit(stamped('MCPServer', complete), { view })
  t.equal(response.allowed, true)
  t.equal(view.liveReads, 2, 'both reads were tried')
  t.ok(performance.now() - started >= LIVE_READ_DEADLINE_MS - 50, 'after the deadline, not before')
})

t.test('a fresh answer is used as before: nothing is kept unproven', async (t) => {
  const view = new MemoryView([
    workload('MCPServer', 'demo', { generation: 9 }),
    runConfigFor('MCPServer', 'demo'),
  ])
  const response = await admit(stamped('MCPServer', complete), { view })
  t.equal(response.allowed, true)
  t.equal(response.auditAnnotations, undefined)
  t.ok(
    patchOf(response).some(
      (operation) =>
        operation.path.endsWith('mcpserver-generation') &&
        'value' in operation &&
        operation.value === '9',
    ),
    'the live generation is stamped',
  )
})
