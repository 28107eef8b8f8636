/**
 * KubeApi with the pod's credentials against a real HTTPS server on 127.0.0.1 that trusts only
 * the current token: the CA from ca.crt is what verifies it, and a 401 has the token read again
 * at once (not a minute later), a read being sent again once with the new one.
 */

import { createServer } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { loadInClusterCredentials } from '../../src/cluster/in-cluster-credentials.ts'
import { KubeApi } from '../../src/cluster/kube-api.ts'
import { createDevCertificates } from '../../src/http/dev-certs.ts'

const certificates = await createDevCertificates({ hosts: ['127.0.0.1'], validDays: 1 })

interface Cluster {
  readonly api: KubeApi
  readonly tokenFile: string
  /** The token the server accepts; any other gets 401. */
  valid: string
  /** `METHOD path token` of every request, in order. */
  readonly seen: string[]
}

/** A server accepting one token, and a KubeApi with in-cluster credentials (token `first`). */
async function cluster(t: Test): Promise<Cluster> {
  const seen: string[] = []
  const server = createServer(
    { cert: certificates.cert, key: certificates.key },
    (request: IncomingMessage, response: ServerResponse) => {
      const token = (request.headers.authorization ?? '').replace(/^Bearer /, '')
      seen.push(`${request.method} ${request.url?.split('?')[0]} ${token}`)
      request.resume()
      response.setHeader('content-type', 'application/json')
      if (token !== state.valid) {
        response.statusCode = 401
        response.end('{"kind":"Status","message":"Unauthorized","code":401}')
        return
      }
      response.end('{"kind":"ConfigMap"}')
    },
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const { port } = server.address() as { port: number }
  const dir = t.testdir({ token: 'first', 'ca.crt': certificates.ca })
  const loaded = await loadInClusterCredentials({
    server: `https://127.0.0.1:${port}`,
    serviceAccountDir: dir,
    logger: { info: () => undefined, warn: () => undefined } as never,
  })
  if ('problems' in loaded) throw new Error(loaded.problems.join('; '))
  const api = new KubeApi(loaded.credentials)
  t.teardown(() => {
    api.close()
  })
  const state: Cluster = { api, tokenFile: join(dir, 'token'), valid: 'first', seen }
  return state
}

/** The kubelet rotated the token and the old one was revoked. */
async function rotate(cluster: Cluster, token: string): Promise<void> {
  await writeFile(cluster.tokenFile, token)
  cluster.valid = token
}

t.test('a read refused with 401 is sent again once, with the token read anew', async (t) => {
  const c = await cluster(t)
  t.same(await c.api.get('/api/v1/a'), { kind: 'ConfigMap' }, 'verified with the CA of ca.crt')
  await rotate(c, 'second')
  t.same(await c.api.get('/api/v1/b'), { kind: 'ConfigMap' })
  t.same(c.seen, ['GET /api/v1/a first', 'GET /api/v1/b first', 'GET /api/v1/b second'])
})

t.test('a 401 with the same token still in the file is not sent again', async (t) => {
  const c = await cluster(t)
  c.valid = 'revoked-and-not-yet-rotated'
  await t.rejects(c.api.get('/api/v1/a'), { name: 'KubeApiError', status: 401 })
  t.same(c.seen, ['GET /api/v1/a first'])
})

t.test(
  'a watch or write refused with 401 is not resent; the next request has the new token',
  async (t) => {
    const c = await cluster(t)
    await rotate(c, 'second')
    const signal = new AbortController().signal
    await t.rejects(
      c.api.watch('/api/v1/configmaps', {}, () => undefined, { signal, idleTimeoutMs: 5_000 }),
      { name: 'KubeApiError', status: 401 },
    )
    t.same(await c.api.get('/api/v1/b'), { kind: 'ConfigMap' })
    await rotate(c, 'third')
    const written = await c.api.write('PUT', '/api/v1/c', { kind: 'Lease' })
    t.equal(written.status, 401, "a write's 401 is the caller's to retry")
    t.equal((await c.api.write('PUT', '/api/v1/c', { kind: 'Lease' })).status, 200)
    t.same(c.seen, [
      'GET /api/v1/configmaps first',
      'GET /api/v1/b second',
      'PUT /api/v1/c second',
      'PUT /api/v1/c third',
    ])
  },
)

t.test('reads refused together all succeed with the new token', async (t) => {
  const c = await cluster(t)
  await rotate(c, 'second')
  const reads = await Promise.all(Array.from({ length: 8 }, (_, i) => c.api.get(`/api/v1/r${i}`)))
  t.same(
    reads,
    Array.from({ length: 8 }, () => ({ kind: 'ConfigMap' })),
  )
  t.equal(c.seen.filter((line) => line.endsWith(' first')).length, 8)
  t.equal(c.seen.filter((line) => line.endsWith(' second')).length, 8)
})
