import t from 'tap'
import { BODY_LIMIT_BYTES } from '../../src/http/app.ts'
import { testApp } from '../helpers/app.ts'
import { patchOf, review, runConfigMap } from '../helpers/objects.ts'
import type { AdmissionReviewResponse } from '../../src/admission/review.ts'

const json = { 'content-type': 'application/json' }

t.test('a review is answered with HTTP 200 and the verdict inside', async (t) => {
  const { app } = testApp()
  const reply = await app.inject({
    method: 'POST',
    url: '/mutate',
    headers: json,
    payload: review(runConfigMap()),
  })
  t.equal(reply.statusCode, 200)
  t.match(reply.headers['content-type'], /^application\/json/)
  const answer = reply.json<AdmissionReviewResponse>()
  t.equal(answer.response.uid, 'test-uid-1')
  t.equal(patchOf(answer.response).length, 1)
})

t.test('a byte order mark before the JSON is read past, as in object files', async (t) => {
  const { app } = testApp()
  const reply = await app.inject({
    method: 'POST',
    url: '/mutate',
    headers: json,
    payload: `\uFEFF${JSON.stringify(review(runConfigMap()))}`,
  })
  t.equal(reply.statusCode, 200)
  t.equal(patchOf(reply.json<AdmissionReviewResponse>().response).length, 1)
})

t.test('a write without its object is a 400 in-band, never allowed unchecked', async (t) => {
  const { app } = testApp()
  for (const operation of ['CREATE', 'UPDATE'] as const) {
    const body = review(runConfigMap(), { operation }) as unknown as {
      request: Record<string, unknown>
    }
    body.request['object'] = null
    for (const url of ['/validate', '/mutate']) {
      const reply = await app.inject({ method: 'POST', url, headers: json, payload: body })
      t.equal(reply.statusCode, 200, `${operation} ${url}`)
      t.match(reply.json<AdmissionReviewResponse>().response, {
        allowed: false,
        status: { code: 400, message: 'invalid AdmissionReview: request.object: must be object' },
      })
    }
  }
})

t.test('charset parameters on the content type are fine', async (t) => {
  const { app } = testApp()
  const reply = await app.inject({
    method: 'POST',
    url: '/validate',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    payload: JSON.stringify(review(runConfigMap())),
  })
  t.equal(reply.statusCode, 200)
  t.equal(reply.json<AdmissionReviewResponse>().response.patch, undefined)
})

t.test('malformed requests get a 4xx with a message, never a 500', async (t) => {
  const { app } = testApp()
  const valid = JSON.stringify(review(runConfigMap()))
  const withoutRequest = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
  })
  const withoutUid = valid.replace('"uid":"test-uid-1",', '')
  const cases: {
    name: string
    headers: Record<string, string>
    payload?: string
    status: number
    message: RegExp | string
  }[] = [
    {
      name: 'empty body with JSON type',
      headers: json,
      payload: '',
      status: 400,
      message: /request body is empty/,
    },
    { name: 'empty body, no type', headers: {}, status: 400, message: /request body is empty/ },
    {
      name: 'wrong content type',
      headers: { 'content-type': 'text/plain' },
      payload: valid,
      status: 415,
      message: /unsupported content type text\/plain: expected application\/json/,
    },
    {
      name: 'YAML is not accepted',
      headers: { 'content-type': 'application/yaml' },
      payload: 'a: 1',
      status: 415,
      message: /unsupported content type/,
    },
    // Fastify refuses these itself, before any parser: the same status and words.
    ...['foo', ';', 'application/'].map((type) => ({
      name: `malformed content type ${JSON.stringify(type)}`,
      headers: { 'content-type': type },
      payload: valid,
      status: 415,
      message: `unsupported content type ${type}: expected application/json`,
    })),
    { name: 'truncated JSON', headers: json, payload: '{', status: 400, message: /not valid JSON/ },
    {
      name: 'missing request',
      headers: json,
      payload: withoutRequest,
      status: 400,
      message: /request: Required value/,
    },
    {
      name: 'missing uid',
      headers: json,
      payload: withoutUid,
      status: 400,
      message: /request\.uid: Required value/,
    },
    {
      name: 'a JSON string',
      headers: json,
      payload: '"AdmissionReview"',
      status: 400,
      message: /must be object/,
    },
  ]
  for (const c of cases) {
    const reply = await app.inject({
      method: 'POST',
      url: '/mutate',
      headers: c.headers,
      ...(c.payload === undefined ? {} : { payload: c.payload }),
    })
    t.equal(reply.statusCode, c.status, c.name)
    t.match(reply.json<{ message: string }>().message, c.message, c.name)
  }
})

t.test('an 8 MiB body is refused with 413; 7 MiB is the limit', async (t) => {
  const { app } = testApp()
  t.equal(BODY_LIMIT_BYTES, 7 * 1024 * 1024)
  const big = runConfigMap({ data: { 'runconfig.json': 'x'.repeat(8 * 1024 * 1024) } })
  const reply = await app.inject({
    method: 'POST',
    url: '/mutate',
    headers: json,
    payload: JSON.stringify(review(big)),
  })
  t.equal(reply.statusCode, 413)
  t.match(reply.json<{ message: string }>().message, /body/i)

  const fits = runConfigMap({ data: { 'runconfig.json': 'x'.repeat(6 * 1024 * 1024) } })
  const ok = await app.inject({
    method: 'POST',
    url: '/mutate',
    headers: json,
    payload: JSON.stringify(review(fits)),
  })
  t.equal(ok.statusCode, 200, 'a large object under the limit is admitted')
})

t.test('unknown paths and methods are 404 with a message', async (t) => {
  const { app } = testApp()
  for (const [method, url] of [
    ['GET', '/mutate'],
    ['POST', '/other'],
  ] as const) {
    const reply = await app.inject({ method, url })
    t.equal(reply.statusCode, 404)
    t.match(reply.json<{ message: string }>().message, /no route/)
  }
})

t.test('controller-runtime metrics count requests by webhook and code', async (t) => {
  const { app, metrics } = testApp()
  await app.inject({
    method: 'POST',
    url: '/mutate',
    headers: json,
    payload: review(runConfigMap()),
  })
  await app.inject({ method: 'POST', url: '/mutate', headers: json, payload: '{' })
  await app.inject({
    method: 'POST',
    url: '/validate',
    headers: json,
    payload: review(runConfigMap()),
  })
  await app.inject({ method: 'POST', url: '/elsewhere', headers: json, payload: '{}' })
  const text = await metrics.registry.metrics()
  t.match(text, /controller_runtime_webhook_requests_total\{webhook="\/mutate",code="200"\} 1/)
  t.match(text, /controller_runtime_webhook_requests_total\{webhook="\/mutate",code="400"\} 1/)
  t.match(text, /controller_runtime_webhook_requests_total\{webhook="\/validate",code="200"\} 1/)
  t.notMatch(text, /elsewhere/)
  t.match(text, /controller_runtime_webhook_latency_seconds_count\{webhook="\/mutate"\} 2/)
  t.match(text, /controller_runtime_webhook_requests_in_flight\{webhook="\/mutate"\} 0/)
})

t.test('observed patches and violations are counted by what was done with them', async (t) => {
  const { app, metrics, logLines } = testApp([], {
    enforcement: { validationActions: ['Warn', 'Audit'], mutationMode: 'observe' },
  })
  const operator = { username: 'system:serviceaccount:toolhive-system:toolhive-operator' }
  const body = review(runConfigMap()) as unknown as { request: Record<string, unknown> }
  body.request['userInfo'] = operator
  const mutated = await app.inject({ method: 'POST', url: '/mutate', headers: json, payload: body })
  t.equal(mutated.json<{ response: { patch?: string } }>().response.patch, undefined)
  const invalid = {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace: 'default' },
    spec: {
      validating: [
        { name: 'a', url: 'http://x' },
        { name: 'b', url: 'http://y' },
      ],
    },
  }
  await app.inject({ method: 'POST', url: '/validate', headers: json, payload: review(invalid) })

  const text = await metrics.registry.metrics()
  t.match(
    text,
    'mcp_admission_mutations_total{resource="configmaps",changed="true",writer="operator",mode="observe"} 1',
  )
  t.match(text, 'mcp_admission_violations_total{kind="MCPWebhookConfig",action="warn"} 2')
  t.match(text, 'mcp_admission_violations_total{kind="MCPWebhookConfig",action="audit"} 2')
  t.notMatch(text, /action="deny"/)
  t.ok(
    logLines().some((line) => line['msg'] === 'admission observed a patch of an operator write'),
    'a disagreement with the operator is logged even when only observed',
  )
  t.ok(logLines().some((line) => line['msg'] === 'admission found violations'))
})

t.test('violations are counted by the actions taken on their rule', async (t) => {
  // Everything denies but the config rule, set to warn; the delete guard keeps its default.
  const tools = {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPToolConfig',
    metadata: { name: 'tools', namespace: 'default' },
    spec: {},
  }
  const remote = {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPRemoteProxy',
    metadata: { name: 'remote', namespace: 'default' },
    spec: { toolConfigRef: { name: 'tools' } },
  }
  const { app, metrics } = testApp([tools, remote], {
    enforcement: {
      validationActions: ['Deny'],
      ruleActions: new Map([['webhook-config', ['Warn']]]),
      mutationMode: 'apply',
    },
  })
  const invalid = {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace: 'default' },
    spec: { validating: [{ name: 'a', url: 'http://x' }] },
  }
  for (const payload of [review(invalid), review(tools, { operation: 'DELETE' })])
    await app.inject({ method: 'POST', url: '/validate', headers: json, payload })
  const text = await metrics.registry.metrics()
  t.match(text, 'mcp_admission_violations_total{kind="MCPWebhookConfig",action="warn"} 1')
  t.match(text, 'mcp_admission_violations_total{kind="MCPToolConfig",action="warn"} 1')
  t.match(text, 'mcp_admission_violations_total{kind="MCPToolConfig",action="audit"} 1')
  t.notMatch(text, /action="deny"/)
})

t.test(
  'mcp_admission_mutations_total: by resource, changed, and the operator as writer',
  async (t) => {
    const { app, metrics } = testApp()
    const operator = { username: 'system:serviceaccount:toolhive-system:toolhive-operator' }
    const send = async (object: ReturnType<typeof runConfigMap>, userInfo: unknown, uid = 'u') => {
      const body = review(object, { uid }) as unknown as { request: Record<string, unknown> }
      body.request['userInfo'] = userInfo
      await app.inject({ method: 'POST', url: '/mutate', headers: json, payload: body })
    }
    const stamped = runConfigMap({ annotations: { 'toolhive.stacklok.dev/content-checksum': '' } })
    await send(runConfigMap(), operator) // patched: the checksum is missing
    await send(runConfigMap(), { username: 'kubernetes-admin' })
    await send(runConfigMap(), { username: 'kubernetes-admin' })
    // Not a RunConfig ConfigMap: routed, admitted, nothing to change.
    await send({ ...runConfigMap(), metadata: { name: 'plain', namespace: 'default' } }, operator)
    await send(stamped, { username: 'system:serviceaccount:toolhive-system:default' })
    // Hostile resource names do not become labels: the request is not routed, so not counted.
    const odd = review(runConfigMap()) as unknown as { request: { resource: { resource: string } } }
    odd.request.resource.resource = 'made-up'
    await app.inject({ method: 'POST', url: '/mutate', headers: json, payload: odd })
    // The validating webhook is not counted.
    await app.inject({ method: 'POST', url: '/validate', headers: json, payload: review(stamped) })

    const text = await metrics.registry.metrics()
    const series = (labels: string) =>
      Number(new RegExp(`mcp_admission_mutations_total\\{${labels}\\} (\\d+)`).exec(text)?.[1])
    t.equal(series('resource="configmaps",changed="true",writer="operator",mode="apply"'), 1)
    t.equal(series('resource="configmaps",changed="true",writer="other",mode="apply"'), 3)
    t.equal(series('resource="configmaps",changed="false",writer="operator",mode="apply"'), 1)
    t.notMatch(text, /made-up/)
    t.equal(text.match(/^mcp_admission_mutations_total\{/gm)?.length, 3, 'no other series')
  },
)

t.test('logs carry uid, kind, namespace, name and operation, never the object', async (t) => {
  const { app, logLines } = testApp()
  await app.inject({
    method: 'POST',
    url: '/mutate',
    headers: json,
    payload: review(runConfigMap()),
  })
  const line = logLines().find((l) => l.msg === 'admission patched')
  t.match(line, {
    uid: 'test-uid-1',
    kind: 'ConfigMap',
    namespace: 'default',
    name: 'demo-runconfig',
    operation: 'CREATE',
    webhook: 'mutate',
  })
  t.notMatch(JSON.stringify(logLines()), /runconfig\.json/, 'no object content in the logs')
})

t.test(
  'the log contract: at info, one line for a denial or a patch on the operator write; the rest at debug',
  async (t) => {
    const { app, logLines } = testApp()
    const send = (object: ReturnType<typeof runConfigMap>, username: string, uid: string) => {
      const body = review(object, { uid }) as unknown as { request: Record<string, unknown> }
      body.request['userInfo'] = { username }
      return app.inject({ method: 'POST', url: '/mutate', headers: json, payload: body })
    }
    const stamped = runConfigMap({ annotations: { 'toolhive.stacklok.dev/content-checksum': '' } })
    await send(runConfigMap(), 'kubernetes-admin', 'person-patched')
    await send(stamped, 'kubernetes-admin', 'person-allowed')
    await send(runConfigMap(), 'system:serviceaccount:toolhive-system:toolhive-operator', 'fight')
    const invalidConfig = {
      apiVersion: 'toolhive.stacklok.dev/v1alpha1',
      kind: 'MCPWebhookConfig',
      metadata: { name: 'hooks', namespace: 'default' },
      spec: { validating: [{ name: 'audit', url: 'http://x', timeout: '1d' }] },
    }
    const verdict = await app.inject({
      method: 'POST',
      url: '/validate',
      headers: json,
      payload: review(invalidConfig, { uid: 'denied' }),
    })
    t.equal(verdict.json<AdmissionReviewResponse>().response.allowed, false)
    const levels = Object.fromEntries(logLines().map((line) => [line['uid'], line['level']]))
    t.same(
      levels,
      { 'person-patched': 'debug', 'person-allowed': 'debug', fight: 'info', denied: 'info' },
      'one line per review, at its level',
    )
    t.match(
      logLines().find((line) => line['uid'] === 'fight'),
      { msg: 'admission patched an operator write', writer: 'operator' },
    )
  },
)
