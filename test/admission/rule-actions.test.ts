// The actions chosen per rule (--rule-actions) as the server answers with them: a rule's own
// setting wins over --validation-actions, a rule that does not deny by default keeps its default,
// and what a rule could not check is refused only where that rule denies.
import t from 'tap'
import type { Enforcement } from '../../src/admission/enforcement.ts'
import { createAdmission } from '../../src/admission/webhook.ts'
import type { AdmissionResponse } from '../../src/admission/review.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import type { ReadOptions, ToolHiveKey } from '../../src/cluster/view.ts'
import { MAX_NESTING } from '../../src/policy/kube/nesting.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import type { ValidationAction } from '../../src/policy/rules.ts'
import { review } from '../helpers/objects.ts'
import { NAMESPACE, workload } from '../helpers/proxy.ts'

const STILL_REFERENCED =
  'Forbidden: MCPToolConfig "tools" is still referenced by MCPRemoteProxy remote; remove spec.toolConfigRef from it first'

/** An MCPToolConfig an MCPRemoteProxy names, which no finalizer holds for it. */
const tools: KubeObject = {
  apiVersion: 'toolhive.stacklok.dev/v1beta1',
  kind: 'MCPToolConfig',
  metadata: { name: 'tools', namespace: NAMESPACE },
  spec: {},
}
const remote = workload('MCPRemoteProxy', 'remote', { spec: { toolConfigRef: { name: 'tools' } } })

/** A view of the two that records whether each referrer list was asked for live. */
class RecordingView extends MemoryView {
  readonly live: (boolean | undefined)[] = []
  constructor() {
    super([tools, remote])
  }
  override referrersOf(target: ToolHiveKey, options?: ReadOptions) {
    this.live.push(options?.live)
    return super.referrersOf(target)
  }
}

const settings = (
  validationActions: readonly ValidationAction[],
  ruleActions: Record<string, readonly ValidationAction[]> = {},
): Enforcement => ({
  validationActions,
  ruleActions: new Map(Object.entries(ruleActions)),
  mutationMode: 'apply',
})

async function answer(
  enforcement: Enforcement,
  object: KubeObject,
  operation: 'CREATE' | 'DELETE',
  view = new RecordingView(),
): Promise<AdmissionResponse> {
  const outcome = await createAdmission({ view, enforcement }).review(
    review(object, { operation }),
    'validate',
  )
  if (!outcome.ok) throw new Error(outcome.message)
  return outcome.review.response
}

function auditRecords(response: AdmissionResponse): unknown {
  const text = response.auditAnnotations?.['validation_failure']
  return text === undefined ? undefined : JSON.parse(text)
}

t.test('the delete guard warns and audits by default, even while the rest denies', async (t) => {
  const view = new RecordingView()
  const response = await answer(settings(['Deny']), tools, 'DELETE', view)
  t.equal(response.allowed, true)
  t.same(response.warnings, [STILL_REFERENCED])
  t.same(auditRecords(response), [
    {
      message: STILL_REFERENCED,
      policy: 'mcp-admission',
      rule: 'delete-guard',
      validationActions: ['Warn', 'Audit'],
    },
  ])
  t.same(view.live, [false], 'a guard that does not deny reads the cache')
})

t.test('set to Deny, the delete guard refuses, and reads the referrers live', async (t) => {
  const view = new RecordingView()
  const response = await answer(
    settings(['Deny'], { 'delete-guard': ['Deny', 'Audit'] }),
    tools,
    'DELETE',
    view,
  )
  t.equal(response.allowed, false)
  t.equal(response.status?.code, 403)
  t.equal(response.status?.message, STILL_REFERENCED)
  t.match(auditRecords(response), [{ rule: 'delete-guard', validationActions: ['Deny', 'Audit'] }])
  t.same(view.live, [true], 'a reference made a moment ago counts')
})

t.test('a setting for a rule wins over --validation-actions, either way', async (t) => {
  // Watching everything, but the delete guard denies.
  const watching = settings(['Warn', 'Audit'], { 'delete-guard': ['Deny'] })
  t.equal((await answer(watching, tools, 'DELETE')).allowed, false)
  const invalidConfig: KubeObject = {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace: NAMESPACE },
    spec: { validating: [{ name: 'hook', url: 'http://hooks.example.com' }] },
  }
  t.match(
    await answer(watching, invalidConfig, 'CREATE'),
    { allowed: true, warnings: [/^spec\.validating\[0\]\.url: /] },
    'the other rules follow --validation-actions',
  )
  // Denying everything, but the config rule only warns.
  const configWarns = settings(['Deny'], { 'webhook-config': ['Warn'] })
  t.match(await answer(configWarns, invalidConfig, 'CREATE'), {
    allowed: true,
    warnings: [/^spec\.validating\[0\]\.url: /],
    auditAnnotations: undefined,
  })
  t.equal((await answer(settings(['Deny']), invalidConfig, 'CREATE')).allowed, false)
})

t.test('watching only: without Deny, no rule denies unless a setting names it', async (t) => {
  for (const global of [['Warn'], ['Audit'], ['Warn', 'Audit']] as const) {
    const response = await answer(settings(global), tools, 'DELETE')
    t.equal(response.allowed, true, global.join(','))
  }
})

t.test('a request not judged is refused only where its rule denies', async (t) => {
  // Nested past what any rule reads: the config rule cannot judge it (400).
  let deep: Record<string, unknown> = {}
  for (let level = 0; level < MAX_NESTING; level++) deep = { deeper: deep }
  const nested: KubeObject = {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace: NAMESPACE },
    spec: { deep },
  }
  t.match(await answer(settings(['Deny']), nested, 'CREATE'), {
    allowed: false,
    status: { code: 400, message: /nested deeper than/ },
  })
  t.match(
    await answer(settings(['Deny'], { 'webhook-config': ['Warn', 'Audit'] }), nested, 'CREATE'),
    {
      allowed: true,
      warnings: [/^not checked: the request is nested deeper than/],
      auditAnnotations: { admission_error: /nested deeper than/ },
    },
  )
  const audited = await answer(
    settings(['Deny'], { 'webhook-config': ['Audit'] }),
    nested,
    'CREATE',
  )
  t.equal(audited.allowed, true)
  t.equal(audited.warnings, undefined, 'no warning where the rule does not warn')
  t.match(audited.auditAnnotations, { admission_error: /nested deeper than/ })
})
