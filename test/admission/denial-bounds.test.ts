/**
 * Issue 17 through the real app and logger: a denial neither repeats a password nor grows with
 * the object it denies, in the response or in the log line.
 */

import t from 'tap'
import { createAdmission } from '../../src/admission/webhook.ts'
import { validatingHandler } from '../../src/admission/validating.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { testApp } from '../helpers/app.ts'
import { review } from '../helpers/objects.ts'

const JSON_HEADERS = { 'content-type': 'application/json' }

function webhookConfig(spec: unknown): KubeObject {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace: 'default' },
    spec,
  }
}

interface Verdict {
  response: {
    allowed: boolean
    warnings?: string[]
    status?: { code: number; message: string; details?: { causes?: unknown[] } }
  }
}

async function post(object: KubeObject) {
  const { app, logLines } = testApp()
  const reply = await app.inject({
    method: 'POST',
    url: '/validate',
    headers: JSON_HEADERS,
    payload: review(object),
  })
  return { reply, verdict: reply.json<Verdict>(), logText: JSON.stringify(logLines()), logLines }
}

t.test('a password in a webhook URL reaches neither the response nor the log', async (t) => {
  const urls = [
    'http://admin:hunter2@hooks.example.com/check',
    // A `/` in the password: Go reads `admin:hun` as host and port and quotes the "port".
    'https://admin:hun/ter2@hooks.example.com/check',
    'https://admin:hunter%zz2@hooks.example.com/check',
    'http://hooks.example.com/check?access_token=hunter2',
  ]
  for (const url of urls) {
    const { reply, verdict, logText, logLines } = await post(
      webhookConfig({ validating: [{ name: 'audit', url, timeout: '1d' }] }),
    )
    t.equal(verdict.response.status?.code, 422, `${url}: denied`)
    t.notMatch(reply.body, /hunter2|hun\/ter2|ter2/, `${url}: not in the response`)
    t.notMatch(logText, /hunter2|ter2/, `${url}: not in the log`)
    const denied = logLines().find((line) => line['msg'] === 'admission denied')
    t.match(denied?.['reason'], /REDACTED/, `${url}: the log says what was removed`)
  }
})

t.test('a 6 MB invalid object gets a bounded response and a bounded log line', async (t) => {
  const long = 'a'.repeat(2_000)
  const validating = Array.from({ length: 760 }, (_, i) => ({
    name: `hook-${i}-${long}`,
    url: `ftp://${long}.example.com/${long}`,
    timeout: `${long}s`,
  }))
  const mutating = Array.from({ length: 500 }, (_, i) => ({
    name: `plain-${i}`,
    url: `http://hooks-${i}.example.com/`,
    tlsConfig: { insecureSkipVerify: true },
  }))
  const object = webhookConfig({ validating, mutating })
  const size = JSON.stringify(object).length
  t.ok(size > 6_000_000, `${size} bytes of object`)

  const started = performance.now()
  const { reply, verdict, logLines } = await post(object)
  t.comment(`answered in ${Math.round(performance.now() - started)} ms`)
  const status = verdict.response.status
  t.equal(status?.code, 422)
  const message = status?.message ?? ''
  t.ok(Buffer.byteLength(message) <= 4096, `message: ${Buffer.byteLength(message)} bytes`)
  t.match(message, /, and \d+ more errors\]$/)
  t.ok((status?.details?.causes?.length ?? 0) <= 20, 'at most 20 causes')
  t.ok(reply.body.length <= 16_384, `response: ${reply.body.length} bytes`)
  const warnings = verdict.response.warnings ?? []
  t.ok(warnings.join('').length <= 4096, `warnings: ${warnings.join('').length} characters`)

  const denied = logLines().find((line) => line['msg'] === 'admission denied')
  t.ok(denied, 'the denial is logged')
  const line = JSON.stringify(denied)
  t.ok(line.length <= 8_192, `log line: ${line.length} bytes`)
})

t.test('an internal error message is bounded and redacted too', async (t) => {
  const failing = createAdmission({
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
          gather: () =>
            Promise.reject(new Error(`cannot reach http://u:hunter2@x/${'y'.repeat(1e6)}`)),
          validate: () => ({ violations: [], warnings: [] }),
        }),
      },
    ],
  })
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'd' } }
  const outcome = await failing.review(review(object), 'validate')
  const message = outcome.ok ? (outcome.review.response.status?.message ?? '') : outcome.message
  t.match(message, /^internal error while admitting: cannot reach http:\/\/REDACTED@x\/y+…$/)
  t.ok(Buffer.byteLength(message) <= 4096)
})

t.test('every logged field of a review is redacted and bounded', async (t) => {
  // Hostile request fields, as a client other than the API server could send them.
  const cases: { name: string; request: Record<string, unknown>; absent: RegExp }[] = [
    { name: 'a 1 MiB uid', request: { uid: 'u'.repeat(1 << 20) }, absent: /u{300}/ },
    { name: 'a 1 MiB name', request: { name: 'n'.repeat(1 << 20) }, absent: /n{300}/ },
    {
      name: 'a namespace holding a URL with a password',
      request: { namespace: 'https://admin:hunter2@h/?token=t0k' },
      absent: /hunter2|t0k/,
    },
    {
      name: 'a name with a fragment',
      request: { name: 'x.y#access_token=s3cr3t' },
      absent: /s3cr3t/,
    },
  ]
  for (const { name, request, absent } of cases) {
    const { app, logLines } = testApp()
    const body = review(webhookConfig({}))
    const reply = await app.inject({
      method: 'POST',
      url: '/validate',
      headers: JSON_HEADERS,
      payload: { ...body, request: { ...body.request, ...request } },
    })
    t.equal(reply.statusCode, 200, `${name}: answered`)
    const logged = JSON.stringify(logLines())
    t.ok(logLines().length > 0, `${name}: logged`)
    t.notMatch(logged, absent, `${name}: not logged whole`)
    if (typeof request['uid'] === 'string') {
      t.equal(
        reply.json<{ response: { uid: string } }>().response.uid,
        request['uid'],
        'uid echoed',
      )
    }
  }
})
