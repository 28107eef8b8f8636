import t from 'tap'
import type { Enforcement } from '../../src/admission/enforcement.ts'
import type { ValidationAction } from '../../src/policy/rules.ts'
import type { AdmissionResponse } from '../../src/admission/review.ts'
import { createAdmission } from '../../src/admission/webhook.ts'
import { ClusterReadError } from '../../src/cluster/view.ts'
import type { ClusterView } from '../../src/cluster/view.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { patchOf, review, runConfigMap } from '../helpers/objects.ts'
import { NAMESPACE, proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

const INVALID_URL = 'spec.validating[0].url: Invalid value: "http://hooks.example.com": '

/** An MCPWebhookConfig with `count` webhooks, each with a plain-http URL (one violation each). */
function webhookConfig(count = 1): KubeObject {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace: NAMESPACE },
    spec: {
      validating: Array.from({ length: count }, (_, i) => ({
        name: `hook-${i}`,
        url: 'http://hooks.example.com',
      })),
    },
  }
}

async function answer(
  enforcement: Enforcement,
  object: KubeObject,
  webhook: 'mutate' | 'validate' = 'validate',
  view: ClusterView = new MemoryView(),
): Promise<AdmissionResponse> {
  const outcome = await createAdmission({ view, enforcement }).review(review(object), webhook)
  if (!outcome.ok) throw new Error(outcome.message)
  return outcome.review.response
}

const acting = (...validationActions: ValidationAction[]): Enforcement => ({
  validationActions,
  mutationMode: 'apply',
})

function auditRecords(response: AdmissionResponse, key: string): unknown {
  const text = response.auditAnnotations?.[key]
  return text === undefined ? undefined : JSON.parse(text)
}

t.test('Deny refuses as before; with Audit the refusal is also recorded', async (t) => {
  const denied = await answer(acting('Deny'), webhookConfig())
  t.equal(denied.allowed, false)
  t.equal(denied.status?.code, 422)
  t.equal(denied.auditAnnotations, undefined, 'nothing recorded without Audit')

  const audited = await answer(acting('Deny', 'Audit'), webhookConfig())
  t.equal(audited.allowed, false)
  t.equal(audited.status?.message, denied.status?.message, 'the same denial')
  t.match(auditRecords(audited, 'validation_failure'), [
    {
      message: new RegExp(`^${INVALID_URL.replace(/[[\].]/g, '\\$&')}`),
      policy: 'mcp-admission',
      rule: 'webhook-config',
      validationActions: ['Deny', 'Audit'],
    },
  ])
})

t.test('Warn admits, and every violation comes back as a warning', async (t) => {
  const response = await answer(acting('Warn'), webhookConfig(2))
  t.equal(response.allowed, true)
  t.equal(response.status, undefined)
  t.equal(response.patch, undefined, 'a validating webhook never patches')
  t.equal(response.warnings?.length, 2)
  t.match(response.warnings?.[0], /^spec\.validating\[0\]\.url: Invalid value: "http:\/\/hooks/)
  t.match(response.warnings?.[1], /^spec\.validating\[1\]\.url: /)
  t.equal(response.auditAnnotations, undefined, 'nothing recorded without Audit')
})

t.test('warnings are bounded as a denial is: 20 violations, then how many more', async (t) => {
  const response = await answer(acting('Warn'), webhookConfig(30))
  t.equal(response.allowed, true)
  t.equal(response.warnings?.length, 21)
  t.equal(response.warnings?.at(-1), 'and 10 more errors')
  const total = response.warnings?.join('').length ?? 0
  t.ok(total <= 4096, `${total} characters, within what the API server passes on`)
})

t.test('Audit admits silently and records each violation', async (t) => {
  const response = await answer(acting('Audit'), webhookConfig(2))
  t.equal(response.allowed, true)
  t.equal(response.warnings, undefined, 'the client is told nothing')
  const records = auditRecords(response, 'validation_failure') as { message: string }[]
  t.equal(records.length, 2)
  t.match(records, [
    { rule: 'webhook-config', validationActions: ['Audit'] },
    { rule: 'webhook-config', validationActions: ['Audit'] },
  ])
  const both = await answer(acting('Warn', 'Audit'), webhookConfig(2))
  t.equal(both.warnings?.length, 2)
  t.match(auditRecords(both, 'validation_failure'), [{ validationActions: ['Warn', 'Audit'] }])
})

t.test('a valid object is answered the same whatever the actions', async (t) => {
  const valid = webhookConfig(0)
  ;(valid['spec'] as Record<string, unknown>)['validating'] = [
    { name: 'ok', url: 'https://hooks.example.com' },
  ]
  for (const actions of [['Deny'], ['Warn'], ['Audit'], ['Warn', 'Audit']] as const) {
    const response = await answer(acting(...actions), valid)
    t.same(response, { uid: 'test-uid-1', allowed: true }, actions.join(','))
  }
})

t.test('the refused DELETE of a referenced config follows the actions too', async (t) => {
  const server = workload('MCPServer', 'uses-hooks', {
    spec: { webhookConfigRef: { name: 'hooks' } },
  })
  const deletion = (enforcement: Enforcement) =>
    createAdmission({ view: new MemoryView([server]), enforcement })
      .review(review(webhookConfig(), { operation: 'DELETE' }), 'validate')
      .then((outcome) => (outcome.ok ? outcome.review.response : undefined))
  const denied = await deletion(acting('Deny'))
  t.equal(denied?.allowed, false)
  const warned = await deletion(acting('Warn'))
  t.equal(warned?.allowed, true)
  t.match(warned?.warnings, [/still referenced by MCPServer uses-hooks/])
})

t.test('observe: the patch is recorded, not returned', async (t) => {
  const observe: Enforcement = { validationActions: ['Deny'], mutationMode: 'observe' }
  const outcome = await createAdmission({ view: new MemoryView(), enforcement: observe }).review(
    review(runConfigMap()),
    'mutate',
  )
  if (!outcome.ok) throw new Error(outcome.message)
  const response = outcome.review.response
  t.same(patchOf(response), [])
  t.equal(response.patchType, undefined)
  t.same(auditRecords(response, 'mutation_observed'), [
    { op: 'add', path: '/metadata/annotations' },
  ])
  t.match(
    outcome.decision?.verdict,
    { kind: 'admitted', patch: [{ op: 'add' }] },
    'the verdict has it',
  )

  // A proxy Deployment: every change listed by path, none applied, no warning about a change
  // that is not made (the stdio cap).
  const view = new MemoryView([workload('MCPServer', 'demo'), runConfigFor('MCPServer', 'demo')])
  const deployment = await answer(
    observe,
    proxyDeployment('MCPServer', 'demo', { replicas: 3 }),
    'mutate',
    view,
  )
  t.equal(deployment.patch, undefined)
  t.equal(deployment.warnings, undefined)
  const paths = (auditRecords(deployment, 'mutation_observed') as { path: string }[]).map(
    (op) => op.path,
  )
  t.ok(paths.includes('/spec/replicas'), 'the stdio cap is among them')
  t.ok(
    paths.some((path) => path.startsWith('/spec/template/metadata/annotations')),
    'so are the checksum and generation',
  )
  const applied = await answer(
    acting('Deny'),
    proxyDeployment('MCPServer', 'demo', { replicas: 3 }),
    'mutate',
    view,
  )
  t.same(
    patchOf(applied).map((op) => op.path),
    paths,
    'observe records exactly what apply returns',
  )
})

t.test('an error denies only where the answer enforces', async (t) => {
  const unreadable: ClusterView = {
    get: () => Promise.reject(new ClusterReadError('MCPServer team/demo', new Error('timeout'))),
    referrersOf: () => Promise.reject(new ClusterReadError('MCPServers', new Error('timeout'))),
    serves: () => true,
    isTerminating: () => false,
    isSynced: () => true,
    isReady: () => true,
  }
  const deployment = proxyDeployment('MCPServer', 'demo')
  const applying = await answer(acting('Deny'), deployment, 'mutate', unreadable)
  t.equal(applying.allowed, false)
  t.equal(applying.status?.code, 503)

  const observe: Enforcement = { validationActions: ['Deny'], mutationMode: 'observe' }
  const observing = await answer(observe, deployment, 'mutate', unreadable)
  t.equal(observing.allowed, true, 'observing never blocks a write')
  t.match(observing.auditAnnotations, { admission_error: /cannot read MCPServer team\/demo/ })

  // The workload rule only warns: a reference it could not look up is said, never refused, even
  // while the rules that deny by default deny (it was answered with an in-band 503).
  const server = workload('MCPServer', 'demo', { spec: { webhookConfigRef: { name: 'hooks' } } })
  for (const actions of [['Deny'], ['Deny', 'Audit'], ['Warn']] as const) {
    const warned = await answer(acting(...actions), server, 'validate', unreadable)
    t.match(
      warned,
      {
        allowed: true,
        status: undefined,
        warnings: [/^not checked: cannot read MCPServer team\/demo/],
        auditAnnotations: { admission_error: /cannot read MCPServer team\/demo/ },
      },
      actions.join(','),
    )
  }

  // The delete guard never holds a delete up: an unreadable cluster admits it, even at Deny.
  const deleting = review(webhookConfig(), { operation: 'DELETE' })
  const guarded = await createAdmission({ view: unreadable, enforcement: acting('Deny') }).review(
    deleting,
    'validate',
  )
  t.match(guarded.ok && guarded.review.response, {
    allowed: true,
    warnings: [/^not checked: cannot read MCPServers/],
  })
})
