/**
 * The API server stopped and started again under load
 * (docs/enforcement.md#read-live-not-from-the-cache, docs/operations.md#reliability-and-security):
 * admission keeps answering what needs no live read, stays ready, refuses in-band (503, naming what
 * it could not read) every proxy Deployment write, which only live reads settle, and the view
 * resynchronises once the API server is back.
 */

import { writeFile } from 'node:fs/promises'
import https from 'node:https'
import { join } from 'node:path'
import t from 'tap'
import { requestFor } from '../../src/admission/request.ts'
import { reviewOf } from '../helpers/objects.ts'
import type { AdmissionReviewResponse } from '../../src/admission/review.ts'
import { runLoad } from '../faults/load.ts'
import { proxyDeployment } from '../helpers/proxy.ts'
import { startEnvironment } from './harness/environment.ts'
import { mustKubectl } from './harness/kubectl.ts'
import { createServerWithProxy } from './harness/proxies.ts'
import { waitFor } from './harness/processes.ts'

type Any = Record<string, any>
const env = await startEnvironment(t)
const { kubectl, admission, plane } = env
const ns = await env.namespace()

const create = (object: unknown) =>
  mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(object))

const serverWithProxy = (name: string) =>
  createServerWithProxy(kubectl, ns, name, { transport: 'sse' })

function post(body: unknown): Promise<AdmissionReviewResponse> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      `${admission.admissionUrl}/mutate`,
      { method: 'POST', ca: admission.caPem, headers: { 'content-type': 'application/json' } },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.once('end', () => {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as AdmissionReviewResponse)
        })
      },
    )
    request.once('error', reject)
    request.end(JSON.stringify(body))
  })
}

const stored = await serverWithProxy('steady')
// Re-submitting the stored Deployment: values that agree with the cache, still read live.
const steadyReview = reviewOf(
  requestFor(stored, {
    operation: 'UPDATE',
    namespace: ns,
    oldObject: stored,
    uid: 'outage-steady',
  }),
)
const runConfigReview = reviewOf(
  requestFor(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'x-runconfig',
        namespace: ns,
        labels: { 'toolhive.stacklok.io/component': 'run-config' },
      },
      data: { a: 'b' },
    },
    { operation: 'CREATE', namespace: ns, uid: 'outage-runconfig' },
  ),
)

t.test('with the API server down, admission answers in-band under load', async (t) => {
  const files = {
    ca: join(plane.dir, 'outage-ca.crt'),
    steady: join(plane.dir, 'steady.json'),
    runConfig: join(plane.dir, 'runconfig.json'),
  }
  await writeFile(files.ca, admission.caPem)
  await writeFile(files.steady, JSON.stringify(steadyReview))
  await writeFile(files.runConfig, JSON.stringify(runConfigReview))

  await plane.stopApiServer()
  const load = (reviewFile: string) =>
    runLoad({
      url: `${admission.admissionUrl}/mutate`,
      caFile: files.ca,
      reviewFile,
      concurrency: 2,
      durationMs: 5_000,
    })
  const [steady, runConfig] = await Promise.all([load(files.steady), load(files.runConfig)])
  t.comment(
    `outage load: proxy Deployment ${JSON.stringify(steady)}, RunConfig ${JSON.stringify(runConfig)}`,
  )
  t.equal(steady.failed + runConfig.failed, 0, 'zero failed requests')
  t.ok(steady.ok > 50 && runConfig.ok > 50, 'both kinds were answered')
  const answer = await post(steadyReview)
  t.equal(answer.response.allowed, false, 'never stamped from the cache alone')
  t.equal(answer.response.status?.code, 503)
  t.match(
    answer.response.status?.message,
    new RegExp(`cannot read (MCPServer|ConfigMap) ${ns}/steady`),
    'names what could not be read',
  )
  const checksum = await post(runConfigReview)
  t.equal(checksum.response.allowed, true, 'what needs no live read is answered as usual')
  t.equal(
    (await admission.probe('/readyz')).status,
    200,
    'a synced view stays ready while the API server is away',
  )

  // A first write too is refused in-band rather than stamped from a possibly stale cache.
  const fresh = proxyDeployment('MCPServer', 'steady', {
    uid: stored['metadata'].ownerReferences[0].uid,
  }) as Any
  fresh['metadata'].namespace = ns
  const refused = await post(
    reviewOf(requestFor(fresh, { operation: 'CREATE', namespace: ns, uid: 'outage-fresh' })),
  )
  t.equal(refused.response.uid, 'outage-fresh')
  t.equal(refused.response.allowed, false)
  t.equal(refused.response.status?.code, 503)
  t.match(
    refused.response.status?.message,
    /^cannot read (MCPServer|ConfigMap) .* from the API server: /,
  )
})

t.test('once the API server is back, the view resynchronises by itself', async (t) => {
  await plane.startApiServer()
  const started = Date.now()
  // The reconciler is fed by the view: a condition on a new object shows the view has seen it.
  await create({
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPServer',
    metadata: { name: 'after', namespace: ns },
    spec: { transport: 'stdio', replicas: 2 },
  })
  await waitFor(
    'the view to see the new server',
    async () => {
      const server = JSON.parse(
        await mustKubectl(kubectl, ['get', 'mcpserver', 'after', '-n', ns, '-o', 'json']),
      ) as Any
      const conditions = (server['status']?.conditions ?? []) as Any[]
      return conditions.some((c) => c['type'] === 'StdioReplicaCapped') ? true : undefined
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  )
  t.comment(`resynchronised ${Date.now() - started} ms after the API server came back`)
  const deployment = await serverWithProxy('later')
  t.match(
    deployment['spec'].template.metadata.annotations['toolhive.stacklok.dev/runconfig-checksum'],
    /^[0-9a-f]{64}$/,
    'live reads work again',
  )
})
