/**
 * Fuzzing through the HTTP layer (`inject` into the real app and admission pipeline) with a fixed
 * seed and a bounded number of inputs; `npm run fuzz` runs the same properties longer with a
 * random seed. The properties and their oracle are in http-properties.ts.
 */

import t from 'tap'
import { requestFor } from '../../src/admission/request.ts'
import { reviewOf } from '../helpers/objects.ts'
import { LIMIT } from './reviews.ts'
import type { Body } from './reviews.ts'
import {
  HTTP_PROPERTIES,
  STACK_OVERFLOW,
  checkReply,
  closeFuzzApp,
  post,
  watchProcess,
} from './http-properties.ts'
import { testProperties } from './bounded.ts'
import { testApp } from '../helpers/app.ts'
import { review, runConfigMap } from '../helpers/objects.ts'
import { NAMESPACE, proxyDeployment, workload } from '../helpers/proxy.ts'
import { withRaw, rawMarker } from './wire.ts'

const watch = watchProcess()
t.teardown(async () => {
  watch.stop()
  await closeFuzzApp()
})

const JSON_TYPE = 'application/json'

/** A review body with raw text spliced in where `value` holds the marker. */
function bodyWith(
  webhook: Body['webhook'],
  document: unknown,
  raw: (string | Buffer)[],
  contentType: string | undefined = JSON_TYPE,
): Body {
  return { webhook, payload: withRaw(JSON.stringify(document), raw), contentType }
}

const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

testProperties(HTTP_PROPERTIES, 'every reply well-formed')

t.test('hostile shapes the API server could relay, one by one', async (t) => {
  const mcp = workload('MCPServer', 'demo', { spec: { replicas: rawMarker(0) } })
  const cases: { name: string; body: Body; status: number }[] = [
    {
      name: '10,000 levels in a validated object (the API server decoder allows that many)',
      body: bodyWith(
        'validate',
        review(workload('MCPServer', 'demo', { spec: { extra: rawMarker(0) } })),
        [deepArray(10_000)],
      ),
      status: 200,
    },
    {
      name: '100,000 levels in the envelope (request.options)',
      body: bodyWith('mutate', { ...review(runConfigMap()), extra: rawMarker(0) }, [
        deepArray(100_000),
      ]),
      status: 200,
    },
    ...['9007199254740993', '1e400', '-0', '123456789012345678901234567890'].map((number) => ({
      name: `replicas ${number}`,
      body: bodyWith('validate', review(mcp), [number]),
      status: 200,
    })),
    {
      name: '__proto__ and constructor keys everywhere in a proxy Deployment',
      body: {
        webhook: 'mutate' as const,
        payload: Buffer.from(
          JSON.stringify(review(proxyDeployment('MCPServer', 'demo'))).replaceAll(
            '{"',
            '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"',
          ),
        ),
        contentType: JSON_TYPE,
      },
      status: 200,
    },
    {
      name: 'invalid UTF-8 inside a label value',
      body: bodyWith(
        'mutate',
        review(
          runConfigMap({
            labels: { 'toolhive.stacklok.io/component': 'run-config', bad: rawMarker(0) },
          }),
        ),
        [Buffer.from([0x22, 0xff, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x22])],
      ),
      status: 200,
    },
    {
      name: 'a body just under the limit',
      body: bodyWith('mutate', review(runConfigMap({ data: { big: rawMarker(0) } })), [
        `"${'x'.repeat(LIMIT - 1024)}"`,
      ]),
      status: 200,
    },
    {
      name: 'a body just over the limit',
      body: bodyWith('mutate', review(runConfigMap({ data: { big: rawMarker(0) } })), [
        `"${'x'.repeat(LIMIT)}"`,
      ]),
      status: 413,
    },
    {
      name: 'a review sent as text/plain',
      body: bodyWith('mutate', review(runConfigMap()), [], 'text/plain'),
      status: 415,
    },
  ]
  for (const c of cases) {
    const reply = await post(c.body)
    t.equal(reply.statusCode, c.status, c.name)
    t.doesNotThrow(() => checkReply(c.body, reply), c.name)
  }
  t.equal(({} as Record<string, unknown>)['polluted'], undefined, 'no prototype was polluted')
})

/** Regressions of bugs this fuzzing found (stack overflows on deep nesting, values echoed into denials). */
type Verdict = { response: { status?: { code: number; message: string } } }

t.test(
  'an object nested 10,000 levels deep on /mutate gets a 4xx verdict, not a 500',
  async (t) => {
    const cases = [
      {
        name: 'any nested value in a ConfigMap (the diff)',
        object: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'plain', namespace: NAMESPACE },
          data: rawMarker(0),
        },
      },
      {
        name: 'a nested value in a RunConfig ConfigMap (the violation message)',
        object: runConfigMap({ data: { 'runconfig.json': rawMarker(0) } }),
      },
    ]
    for (const c of cases) {
      const document = reviewOf(requestFor(c.object, { operation: 'CREATE', uid: 'deep' }))
      const reply = await post(bodyWith('mutate', document, [deepArray(10_000)]))
      t.equal(reply.statusCode, 200, c.name)
      const status = reply.json<Verdict>().response.status
      t.comment(`${c.name}: ${JSON.stringify(status)}`)
      t.not(status?.code, 500, `${c.name}: no internal error`)
      t.notMatch(status?.message ?? '', STACK_OVERFLOW, `${c.name}: no overflow`)
    }
  },
)

t.test(
  'a non-string value in a RunConfig ConfigMap is not echoed into the denial or the log',
  async (t) => {
    const { app, logLines } = testApp()
    const value = {
      token: 'do-not-echo',
      padding: Array.from({ length: 20_000 }, () => 'abcdefgh'),
    }
    const reply = await app.inject({
      method: 'POST',
      url: '/mutate',
      headers: { 'content-type': JSON_TYPE },
      payload: review(runConfigMap({ data: { 'runconfig.json': value } })),
    })
    const status = reply.json<Verdict>().response.status
    t.equal(status?.code, 422, 'denied as invalid')
    const length = status?.message.length ?? 0
    t.comment(`denial message: ${length} characters`)
    t.ok(length < 1_000, 'the message names the problem, not the value')
    const info = logLines().filter((line) =>
      ['info', 'warn', 'error', 'fatal'].includes(line['level'] as string),
    )
    t.notMatch(JSON.stringify(info), /do-not-echo/, 'no object content logged at info')
  },
)

t.test('no unhandled rejection or uncaught exception while fuzzing', async (t) => {
  t.same(watch.events, [])
})
