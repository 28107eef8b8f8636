// The API server's order of steps for one write, as `check`, `review` and `audit` simulate it
// (src/cli/admit.ts): decode against the CRD, the mutating webhook, decode again, the CRD's
// schema and rules, the validating webhook; each step sees what the one before made.

import t from 'tap'
import type { Decide } from '../../src/admission/decide.ts'
import { requestFor } from '../../src/admission/request.ts'
import { admitted, refused } from '../../src/admission/verdict.ts'
import { admitRequest } from '../../src/cli/admit.ts'
import type { CrdCatalog, CrdInput } from '../../src/policy/crd/crd-catalog.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { violation } from '../../src/policy/messages/field-errors.ts'

const server: KubeObject = {
  apiVersion: 'toolhive.stacklok.dev/v1beta1',
  kind: 'MCPServer',
  metadata: { name: 'demo', namespace: 'team' },
  spec: { image: 'x' },
}

/** A catalog and a decide that record each step and the object it saw. */
function recording(options: { mutateTo?: KubeObject; refuseAt?: 'validate' } = {}) {
  const steps: string[] = []
  const label = (object: unknown) => JSON.stringify((object as KubeObject).spec)
  const catalog: CrdCatalog = {
    defines: () => true,
    evaluate: () => undefined,
    decode: (input: CrdInput) => {
      steps.push(`decode${input.strict === true ? ' strict' : ''} ${label(input.object)}`)
      return {
        allowed: true,
        object: { ...input.object, spec: { ...(input.object.spec as object), decoded: true } },
        warnings: ['unknown field "x"'],
      }
    },
    validate: (input: CrdInput) => {
      steps.push(`crd ${label(input.object)}`)
      return options.refuseAt === 'validate'
        ? { allowed: false, violations: [violation.required('spec.image')], warnings: ['cel'] }
        : { allowed: true, object: input.object, warnings: ['cel'] }
    },
  }
  const decide: Decide = (webhook, request) => {
    steps.push(`${webhook} ${label(request.object)}`)
    const object = webhook === 'mutate' ? options.mutateTo : undefined
    return Promise.resolve({
      verdict: admitted([], [`${webhook} says`], object),
      writer: 'other',
      ...(webhook === 'validate' ? { rule: 'workload' as const } : {}),
    })
  }
  return { steps, catalog, decide }
}

t.test('the API server order: decode, mutate, decode again, CRD rules, validate', async (t) => {
  const mutated = { ...server, spec: { image: 'y' } }
  const { steps, catalog, decide } = recording({ mutateTo: mutated })
  const result = await admitRequest(requestFor(server, { operation: 'CREATE' }), {
    decide,
    crds: { catalog, strict: true },
  })
  t.same(steps, [
    'decode strict {"image":"x"}',
    'mutate {"image":"x","decoded":true}',
    // Field validation is of the client's body: the mutated object is pruned, never refused.
    'decode {"image":"y"}',
    'crd {"image":"y","decoded":true}',
    'validate {"image":"y","decoded":true}',
  ])
  t.ok(result.admitted)
  t.same(result.warnings, ['unknown field "x"', 'mutate says', 'cel', 'validate says'])
  t.same(result.serverWarnings, ['unknown field "x"', 'cel'], 'the API server warns once')
  t.equal(result.decisions.validate?.rule, 'workload', 'each webhook decision, as a value')
})

t.test('a step that refuses ends the write: later steps never run', async (t) => {
  const { steps, catalog, decide } = recording({ refuseAt: 'validate' })
  const result = await admitRequest(requestFor(server, { operation: 'CREATE' }), {
    decide,
    crds: { catalog, strict: false },
  })
  t.same(steps.at(-1), 'crd {"image":"x","decoded":true}', 'no validating webhook after the CRD')
  t.notOk(result.admitted)
  if (!result.admitted) t.equal(result.refusal.step, 'crd')

  const refusing: Decide = () =>
    Promise.resolve({
      rule: 'proxy-deployment',
      verdict: refused([violation.required('spec')], [], { group: '', kind: 'X' }),
      writer: 'other',
    })
  const denied = await admitRequest(requestFor(server, { operation: 'CREATE' }), {
    decide: refusing,
  })
  t.notOk(denied.admitted)
  if (!denied.admitted) {
    t.equal(denied.refusal.step, 'mutate')
    t.same(denied.decisions.validate, undefined, 'the validating webhook is never asked')
  }
})

t.test('review simulates one webhook: only its step of the two runs', async (t) => {
  const { steps, catalog, decide } = recording()
  await admitRequest(requestFor(server, { operation: 'CREATE' }), {
    decide,
    crds: { catalog, strict: false },
    webhooks: ['validate'],
  })
  t.same(
    steps.map((step) => step.split(' ')[0]),
    ['decode', 'decode', 'crd', 'validate'],
  )
})

t.test(
  'a ToolHive kind no CRD serves is the API server refusing it, before any webhook',
  async (t) => {
    const { steps, catalog, decide } = recording()
    const result = await admitRequest(requestFor(server, { operation: 'CREATE' }), {
      decide,
      crds: { catalog: { ...catalog, defines: () => false }, strict: false },
    })
    t.same(steps, [])
    t.notOk(result.admitted)
    if (!result.admitted) t.equal(result.refusal.step, 'server')
  },
)
