// The rule `composite-tool-definition` as the server answers a VirtualMCPCompositeToolDefinition:
// sent to /validate at every served version, a workflow the vmcp could not load is refused with
// every violation at its field, an UPDATE that leaves the spec alone always passes, and a rule
// set to Warn only warns.
import t from 'tap'
import type { Enforcement } from '../../src/admission/enforcement.ts'
import { requestFor } from '../../src/admission/request.ts'
import type { AdmissionResponse, Operation } from '../../src/admission/review.ts'
import { createAdmission } from '../../src/admission/webhook.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { reviewOf } from '../helpers/objects.ts'

const ENFORCING: Enforcement = { validationActions: ['Deny'], mutationMode: 'apply' }

const definition = (spec: unknown, version = 'v1beta1', labels = {}): KubeObject => ({
  apiVersion: `toolhive.stacklok.dev/${version}`,
  kind: 'VirtualMCPCompositeToolDefinition',
  metadata: { name: 'deploy', namespace: 'team', labels },
  spec,
})
const step = (id: string, dependsOn: string[] = []) => ({
  id,
  type: 'tool',
  tool: 'make',
  dependsOn,
})
const spec = (...steps: unknown[]) => ({ name: 'deploy', description: 'Deploys', steps })

async function answer(
  object: KubeObject,
  operation: Operation = 'CREATE',
  oldObject?: KubeObject,
  enforcement = ENFORCING,
): Promise<AdmissionResponse> {
  const request = requestFor(object, { operation, uid: 'u', ...(oldObject ? { oldObject } : {}) })
  const body: unknown = JSON.parse(JSON.stringify(reviewOf(request)))
  const outcome = await createAdmission({ view: new MemoryView(), enforcement }).review(
    body,
    'validate',
  )
  if (!outcome.ok) throw new Error(outcome.message)
  return outcome.review.response
}

const CYCLE = spec(step('build', ['test']), step('test', ['build']), step('test'))

t.test('a workflow the vmcp could not load is refused, at every version', async (t) => {
  for (const version of ['v1beta1', 'v1alpha1']) {
    const response = await answer(definition(CYCLE, version))
    t.equal(response.allowed, false, version)
    t.equal(response.status?.code, 422)
    t.equal(
      response.status?.message,
      '[spec.steps[2].id: Duplicate value: "test", spec.steps[0].dependsOn: Forbidden: dependency cycle detected: build -> test -> build]',
    )
    t.match(response.status?.details?.causes, [
      { reason: 'FieldValueDuplicate', field: 'spec.steps[2].id' },
      { reason: 'FieldValueForbidden', field: 'spec.steps[0].dependsOn' },
    ])
  }
  const valid = await answer(definition(spec(step('build'), step('test', ['build']))))
  t.same([valid.allowed, valid.warnings], [true, undefined])
})

t.test(
  'an UPDATE that leaves the spec alone passes with warnings; one that adds a violation does not',
  async (t) => {
    const stored = definition(CYCLE)
    const relabelled = await answer(definition(CYCLE, 'v1beta1', { team: 'a' }), 'UPDATE', stored)
    t.equal(relabelled.allowed, true)
    t.same(relabelled.warnings, [
      'spec.steps[2].id: pre-existing violation kept: Duplicate value: "test"',
      'spec.steps[0].dependsOn: pre-existing violation kept: Forbidden: dependency cycle detected: build -> test -> build',
    ])
    const worse = await answer(definition({ ...CYCLE, name: '' }), 'UPDATE', stored)
    t.equal(worse.allowed, false)
    t.equal(worse.status?.message, 'spec.name: Required value')
  },
)

t.test('set to Warn, the rule only warns', async (t) => {
  const warning: Enforcement = {
    ...ENFORCING,
    ruleActions: new Map([['composite-tool-definition', ['Warn']]]),
  }
  const response = await answer(definition(CYCLE), 'CREATE', undefined, warning)
  t.equal(response.allowed, true)
  t.equal(response.warnings?.length, 2)
})
