import t from 'tap'
import { createAdmission } from '../../src/admission/webhook.ts'
import type { ReviewOutcome } from '../../src/admission/webhook.ts'
import { mutatingHandler, pureMutator } from '../../src/admission/mutating.ts'
import { validatingHandler } from '../../src/admission/validating.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { ClusterReadError } from '../../src/cluster/view.ts'
import { proxyDeployment } from '../helpers/proxy.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { violation } from '../../src/policy/messages/field-errors.ts'
import { applyPatch } from '../helpers/apply-patch.ts'
import { MAX_NESTING } from '../../src/policy/kube/nesting.ts'
import { VECTOR_CHECKSUM, patchOf, review, runConfigMap } from '../helpers/objects.ts'

const admission = createAdmission({ view: new MemoryView() })

function reviewed(outcome: ReviewOutcome) {
  if (!outcome.ok) throw new Error(`expected a review, got 400: ${outcome.message}`)
  return outcome.review
}

t.test('a RunConfig ConfigMap CREATE gets a patch adding the content checksum', async (t) => {
  const answer = reviewed(await admission.review(review(runConfigMap()), 'mutate'))
  t.equal(answer.response.allowed, true)
  t.equal(answer.response.patchType, 'JSONPatch')
  t.same(patchOf(answer.response), [
    {
      op: 'add',
      path: '/metadata/annotations',
      value: { [ANNOTATIONS.contentChecksum]: VECTOR_CHECKSUM },
    },
  ])
})

t.test('existing annotations are kept; the key is escaped in the patch path', async (t) => {
  const object = runConfigMap({
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
  })
  const answer = reviewed(await admission.review(review(object), 'mutate'))
  const patch = patchOf(answer.response)
  t.equal(patch.length, 1)
  t.equal(patch[0]?.path, '/metadata/annotations/toolhive.stacklok.dev~1content-checksum')
  const patchedObject = applyPatch(object, patch)
  t.equal(
    patchedObject.metadata?.annotations &&
      (patchedObject.metadata.annotations as Record<string, string>)[
        'kubectl.kubernetes.io/last-applied-configuration'
      ],
    '{}',
  )
})

t.test('uid, apiVersion and kind are echoed for v1 and v1beta1', async (t) => {
  for (const apiVersion of ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const) {
    const answer = reviewed(
      await admission.review(
        review(runConfigMap(), { apiVersion, uid: `uid-${apiVersion}` }),
        'mutate',
      ),
    )
    t.equal(answer.apiVersion, apiVersion)
    t.equal(answer.kind, 'AdmissionReview')
    t.equal(answer.response.uid, `uid-${apiVersion}`)
  }
})

t.test('no patch when nothing changes (idempotent on its own output)', async (t) => {
  const first = reviewed(await admission.review(review(runConfigMap()), 'mutate'))
  const admitted = applyPatch(runConfigMap(), patchOf(first.response))
  const second = reviewed(
    await admission.review(review(admitted, { operation: 'UPDATE' }), 'mutate'),
  )
  t.equal(second.response.allowed, true)
  t.equal(second.response.patch, undefined)
  t.equal(second.response.patchType, undefined, 'patchType only with a patch')
})

t.test('/validate never returns a patch', async (t) => {
  const answer = reviewed(await admission.review(review(runConfigMap()), 'validate'))
  t.equal(answer.response.allowed, true)
  t.equal(answer.response.patch, undefined)
  t.equal(answer.response.patchType, undefined)
})

t.test('unrecognised objects are allowed untouched', async (t) => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'default' },
    data: { a: 'YQ==' },
  }
  const plainConfigMap = { ...runConfigMap(), metadata: { name: 'other', namespace: 'default' } }
  for (const object of [secret, plainConfigMap]) {
    const answer = reviewed(await admission.review(review(object), 'mutate'))
    t.same(answer.response, { uid: 'test-uid-1', allowed: true })
  }
  const deletion = reviewed(
    await admission.review(review(runConfigMap(), { operation: 'DELETE' }), 'mutate'),
  )
  t.same(
    deletion.response,
    { uid: 'test-uid-1', allowed: true },
    'DELETE is not routed to the mutation',
  )
})

t.test('a legal data key named __proto__ is processed, not rejected', async (t) => {
  const body = JSON.parse(
    JSON.stringify(review(runConfigMap())).replace('"runconfig.json"', '"__proto__"'),
  ) as unknown
  const answer = reviewed(await admission.review(body, 'mutate'))
  t.equal(answer.response.allowed, true)
  const patch = patchOf(answer.response)
  t.equal(patch.length, 1)
  t.not(
    (patch[0] as { value: Record<string, string> }).value[ANNOTATIONS.contentChecksum],
    VECTOR_CHECKSUM,
    'the __proto__ key was hashed as data',
  )
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test(
  'envelopes without a request or a uid are not reviews: the transport answers 400',
  async (t) => {
    const cases: [string, unknown][] = [
      ['missing request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }],
      [
        'missing uid',
        {
          ...review(runConfigMap()),
          request: { ...review(runConfigMap()).request, uid: undefined },
        },
      ],
      [
        'empty uid',
        { ...review(runConfigMap()), request: { ...review(runConfigMap()).request, uid: '' } },
      ],
      ['not an object', [1, 2]],
      ['null', null],
    ]
    for (const [name, body] of cases) {
      const outcome = await admission.review(JSON.parse(JSON.stringify(body)) as unknown, 'mutate')
      t.equal(outcome.ok, false, name)
      if (!outcome.ok) t.match(outcome.message, /^invalid AdmissionReview: /, name)
    }
    const missingRequest = await admission.review(
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' },
      'mutate',
    )
    t.match(!missingRequest.ok && missingRequest.message, /request: Required value/)
  },
)

t.test('a malformed request with a readable uid is answered in-band with code 400', async (t) => {
  const body = { ...review(runConfigMap(), { apiVersion: 'admission.k8s.io/v1beta1' }) }
  const broken = {
    ...body,
    request: { ...body.request, operation: 'PATCH', object: 'not an object' },
  }
  const answer = reviewed(await admission.review(broken, 'mutate'))
  t.equal(answer.apiVersion, 'admission.k8s.io/v1beta1')
  t.equal(answer.response.uid, 'test-uid-1')
  t.equal(answer.response.allowed, false)
  t.equal(answer.response.status?.code, 400)
  t.match(answer.response.status?.message, /request\.operation: must be one of "CREATE"/)
  t.match(answer.response.status?.message, /request\.object: must be object,null/)
})

t.test('a policy that throws yields a 500 verdict with the uid, not a crash', async (t) => {
  const failing = createAdmission({
    view: new MemoryView(),
    routes: [
      {
        webhook: 'mutate',
        group: '',
        kind: 'ConfigMap',
        subResource: '',
        operations: ['CREATE'],
        rule: 'runconfig-content-checksum',
        handler: mutatingHandler(
          pureMutator(() => {
            throw new Error('boom')
          }),
        ),
      },
    ],
  })
  const outcome = await failing.review(review(runConfigMap()), 'mutate')
  const answer = reviewed(outcome)
  t.equal(answer.response.uid, 'test-uid-1')
  t.equal(answer.response.allowed, false)
  t.equal(answer.response.status?.code, 500)
  t.ok(
    outcome.ok &&
      outcome.decision?.verdict.kind === 'failed' &&
      outcome.decision.verdict.error instanceof Error,
    'the error is handed to the caller for logging',
  )
})

t.test('denials carry every violation in the message and in details.causes', async (t) => {
  const denying = createAdmission({
    view: new MemoryView(),
    routes: [
      {
        webhook: 'validate',
        group: '',
        kind: 'ConfigMap',
        subResource: '',
        operations: ['CREATE'],
        rule: 'webhook-config',
        handler: validatingHandler({
          gather: () => Promise.resolve(undefined),
          validate: () => ({
            violations: [
              violation.required('spec.a'),
              violation.invalid('spec.b[1].url', 'http://x', 'must use https'),
            ],
            warnings: ['w'.repeat(200)],
          }),
        }),
      },
    ],
  })
  const answer = reviewed(await denying.review(review(runConfigMap()), 'validate'))
  t.equal(answer.response.allowed, false)
  t.equal(answer.response.patch, undefined)
  t.equal(
    answer.response.status?.message,
    '[spec.a: Required value, spec.b[1].url: Invalid value: "http://x": must use https]',
  )
  // Shaped like the API server's own validation errors: kubectl prints `field: message`.
  t.same(answer.response.status?.details, {
    name: 'demo-runconfig',
    kind: 'ConfigMap',
    causes: [
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.a' },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "http://x": must use https',
        field: 'spec.b[1].url',
      },
    ],
  })
  t.equal(answer.response.warnings?.[0]?.length, 120, 'warnings are kept short')
})

t.test(
  'a denial about no field (a refused DELETE) is a 403 Forbidden without causes',
  async (t) => {
    const refusing = createAdmission({
      view: new MemoryView(),
      routes: [
        {
          webhook: 'validate',
          group: '',
          kind: 'ConfigMap',
          subResource: '',
          operations: ['CREATE'],
          rule: 'webhook-config',
          handler: validatingHandler({
            gather: () => Promise.resolve(undefined),
            validate: () => ({
              violations: [violation.forbidden('', 'still in use')],
              warnings: [],
            }),
          }),
        },
      ],
    })
    const answer = reviewed(await refusing.review(review(runConfigMap()), 'validate'))
    t.same(answer.response.status, {
      status: 'Failure',
      message: 'Forbidden: still in use',
      reason: 'Forbidden',
      code: 403,
    })
  },
)

t.test('a live read that fails is answered in-band with 503, naming what', async (t) => {
  const failing = new MemoryView()
  failing.get = () =>
    Promise.reject(
      new ClusterReadError('MCPServer team/demo', new Error('no answer before the deadline')),
    )
  const answer = reviewed(
    await createAdmission({ view: failing }).review(
      review(proxyDeployment('MCPServer', 'demo'), { uid: 'live' }),
      'mutate',
    ),
  )
  t.same(answer.response, {
    uid: 'live',
    allowed: false,
    status: {
      status: 'Failure',
      message: 'cannot read MCPServer team/demo from the API server: no answer before the deadline',
      reason: 'ServiceUnavailable',
      code: 503,
    },
  })
})

t.test('a DELETE review with no oldObject still names the config it refuses', async (t) => {
  const referencing = {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPServer',
    metadata: { name: 'uses-hooks', namespace: 'team' },
    spec: { webhookConfigRef: { name: 'hooks' } },
  }
  const deleting = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'delete-1',
      kind: { group: 'toolhive.stacklok.dev', version: 'v1alpha1', kind: 'MCPWebhookConfig' },
      resource: {
        group: 'toolhive.stacklok.dev',
        version: 'v1alpha1',
        resource: 'mcpwebhookconfigs',
      },
      name: 'hooks',
      namespace: 'team',
      operation: 'DELETE',
      userInfo: { username: 'someone' },
      object: null,
      oldObject: null,
    },
  }
  const answer = reviewed(
    await createAdmission({ view: new MemoryView([referencing]) }).review(deleting, 'validate'),
  )
  t.equal(answer.response.allowed, false)
  t.match(
    answer.response.status?.message,
    /^Forbidden: MCPWebhookConfig "hooks" is still referenced/,
  )
})

t.test('one nesting limit: a routed request past it is refused in-band, others pass', async (t) => {
  const nested = (depth: number): unknown => {
    let value: unknown = 'leaf'
    for (let i = 0; i < depth; i++) value = [value]
    return value
  }
  // request → object → data → [x]: the array starts at level 4 of the request.
  const within = runConfigMap({ data: { 'runconfig.json': nested(MAX_NESTING - 3) as string } })
  const past = runConfigMap({ data: { 'runconfig.json': nested(MAX_NESTING - 2) as string } })
  const allowedAnswer = reviewed(await admission.review(review(within), 'mutate'))
  t.not(allowedAnswer.response.status?.code, 400, 'exactly at the limit: the rules decide')
  const refused = reviewed(await admission.review(review(past, { uid: 'deep' }), 'mutate'))
  t.equal(refused.response.uid, 'deep')
  t.equal(refused.response.allowed, false)
  t.match(refused.response.status, {
    code: 400,
    message: `the request is nested deeper than ${MAX_NESTING} levels`,
  })
  const plain = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'not-toolhive', namespace: 'default' },
  }
  const untouched = reviewed(await admission.review(review(plain), 'mutate'))
  t.equal(untouched.response.allowed, true, 'a request no rule reads is allowed, however deep')
})
