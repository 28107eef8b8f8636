/**
 * A malformed AdmissionReview envelope with a readable uid, at a webhook whose answer does not
 * enforce (Warn, Audit, `observe`, or a rule that only warns), is admitted `not checked` as
 * docs/rollout.md promises for every request the rules cannot judge: a warning where the rule
 * warns and an `admission_error` audit record. Where the answer enforces it is refused in-band
 * with code 400, as before; with no uid there is no response to form (the transport's 400).
 */

import t from 'tap'
import type { Enforcement } from '../../src/admission/enforcement.ts'
import type { AdmissionReviewResponse, WebhookName } from '../../src/admission/review.ts'
import { createAdmission } from '../../src/admission/webhook.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import type { ValidationAction } from '../../src/policy/rules.ts'
import { review, runConfigMap } from '../helpers/objects.ts'
import { NAMESPACE } from '../helpers/proxy.ts'

const WEBHOOK_CONFIG: KubeObject = {
  apiVersion: 'toolhive.stacklok.dev/v1alpha1',
  kind: 'MCPWebhookConfig',
  metadata: { name: 'hooks', namespace: NAMESPACE },
  spec: {},
}
const GROUP: KubeObject = {
  apiVersion: 'toolhive.stacklok.dev/v1alpha1',
  kind: 'MCPGroup',
  metadata: { name: 'team', namespace: NAMESPACE },
  spec: {},
}

const settings = (
  validationActions: ValidationAction[],
  mutationMode: Enforcement['mutationMode'] = 'apply',
): Enforcement => ({ validationActions, mutationMode })

/** `object`'s review with `request` fields replaced (`undefined` removes one). */
function broken(
  object: KubeObject,
  fields: Record<string, unknown>,
  operation: 'CREATE' | 'UPDATE' | 'DELETE' = 'UPDATE',
) {
  const body = review(object, { operation })
  return JSON.parse(JSON.stringify({ ...body, request: { ...body.request, ...fields } })) as unknown
}

async function answer(
  enforcement: Enforcement,
  body: unknown,
  webhook: WebhookName,
): Promise<AdmissionReviewResponse['response']> {
  const outcome = await createAdmission({ view: new MemoryView(), enforcement }).review(
    body,
    webhook,
  )
  if (!outcome.ok) throw new Error(`no response formed: ${outcome.message}`)
  return outcome.review.response
}

const NOT_CHECKED = 'not checked: invalid AdmissionReview: request.object: must be object'
const withoutObject = broken(WEBHOOK_CONFIG, { object: null })

t.test('validating, Warn: admitted with `not checked` and an audit record', async (t) => {
  const response = await answer(settings(['Warn']), withoutObject, 'validate')
  t.equal(response.allowed, true)
  t.equal(response.uid, 'test-uid-1')
  t.same(response.warnings, [NOT_CHECKED])
  t.equal(response.status, undefined, 'no refusal')
  t.equal(
    response.auditAnnotations?.['admission_error'],
    'invalid AdmissionReview: request.object: must be object',
  )
})

t.test('validating, Audit alone: admitted, recorded, no warning', async (t) => {
  const response = await answer(settings(['Audit']), withoutObject, 'validate')
  t.equal(response.allowed, true)
  t.equal(response.warnings, undefined)
  t.match(response.auditAnnotations?.['admission_error'], /^invalid AdmissionReview: /)
})

t.test('validating, Deny: refused in-band with 400, as before', async (t) => {
  for (const actions of [['Deny'], ['Deny', 'Audit']] as ValidationAction[][]) {
    const response = await answer(settings(actions), withoutObject, 'validate')
    t.equal(response.allowed, false, actions.join(','))
    t.equal(response.status?.code, 400)
    t.match(response.status?.message, /^invalid AdmissionReview: request\.object: must be object/)
  }
})

t.test('a rule that only warns, while the others deny: judged by its own actions', async (t) => {
  // delete-guard warns and audits by default; the envelope's kind and operation still route it.
  const deletion = broken(GROUP, { dryRun: 'yes' }, 'DELETE')
  const response = await answer(settings(['Deny']), deletion, 'validate')
  t.equal(response.allowed, true)
  t.same(response.warnings, [
    'not checked: invalid AdmissionReview: request.dryRun: must be boolean',
  ])
  // An envelope whose kind cannot be read: refused while any rule of the webhook denies.
  const unroutable = broken(GROUP, { dryRun: 'yes', kind: 'MCPGroup' }, 'DELETE')
  const refused = await answer(settings(['Deny']), unroutable, 'validate')
  t.equal(refused.allowed, false)
  t.equal(refused.status?.code, 400)
  const watched = await answer(settings(['Warn']), unroutable, 'validate')
  t.equal(watched.allowed, true, 'admitted where no rule of the webhook denies')
  // A kind no rule reads: as unknown as one that cannot be read.
  const pod = broken(
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: NAMESPACE } },
    { dryRun: 'yes' },
  )
  t.equal((await answer(settings(['Deny']), pod, 'validate')).allowed, false)
  t.equal((await answer(settings(['Warn']), pod, 'validate')).allowed, true)
  t.match(watched.warnings, [
    /^not checked: invalid AdmissionReview: request\.kind: must be object/,
  ])
})

t.test('mutating: observed, admitted unpatched and recorded; applied, refused', async (t) => {
  const body = broken(runConfigMap(), { object: 'not an object' }, 'CREATE')
  const observed = await answer(settings(['Deny'], 'observe'), body, 'mutate')
  t.equal(observed.allowed, true)
  t.equal(observed.patch, undefined)
  t.equal(observed.warnings, undefined, 'a mutating webhook does not warn')
  t.match(observed.auditAnnotations?.['admission_error'], /request\.object: must be object/)
  const applied = await answer(settings(['Warn']), body, 'mutate')
  t.equal(applied.allowed, false)
  t.equal(applied.status?.code, 400)
})

t.test('no readable uid: no response can be formed, whatever the settings', async (t) => {
  const outcome = await createAdmission({
    view: new MemoryView(),
    enforcement: settings(['Warn'], 'observe'),
  }).review(broken(WEBHOOK_CONFIG, { uid: 7, object: null }), 'validate')
  t.equal(outcome.ok, false)
  t.match(
    !outcome.ok && outcome.message,
    /^invalid AdmissionReview: .*request\.uid: must be string/,
  )
})
