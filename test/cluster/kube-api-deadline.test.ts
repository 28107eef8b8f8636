/**
 * Each GET and write is bounded as a whole, from the request to its answer's last byte: a body
 * trickled a byte at a time (each byte well within the socket's idle timeout) fails at the
 * request limit with an error naming the request, and the connection is dropped. A caller's own
 * signal still ends it sooner, in its own words. And the wait a 429 asks for is read from the
 * Status, else from the `Retry-After` header.
 */

import type { RequestListener, ServerResponse } from 'node:http'
import t from 'tap'
import type { Test } from 'tap'
import { KubeApiError } from '../../src/cluster/kube-api.ts'
import type { KubeApi } from '../../src/cluster/kube-api.ts'
import { loopbackKubeApi } from '../helpers/fake-kube-api.ts'
import { loopbackServer } from '../helpers/loopback-server.ts'

const LIMIT_MS = 400

async function apiFor(t: Test, handler: RequestListener): Promise<KubeApi> {
  const port = await loopbackServer(t, handler)
  const api = loopbackKubeApi(port, { requestTimeoutMs: LIMIT_MS, wholeRequestTimeoutMs: LIMIT_MS })
  t.teardown(() => {
    api.close()
  })
  return api
}

/** Answers 200 and then one byte every 20 ms, for ever; resolves `dropped` when the client hangs up. */
function trickle(response: ServerResponse, dropped: () => void): void {
  response.writeHead(200, { 'content-type': 'application/json' })
  response.write('{"items":[')
  const timer = setInterval(() => response.write(' '), 20)
  response.once('close', () => {
    clearInterval(timer)
    dropped()
  })
}

t.test(
  'a body that keeps coming is read past the idle bound, up to the whole-request one',
  async (t) => {
    // The service's reflectors list large pages: a slow link is not a broken server (the idle
    // bound is 5 s, the whole request's a minute, as the API server's own).
    const port = await loopbackServer(t, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"items":[')
      let sent = 0
      const timer = setInterval(() => {
        if (++sent < 12) {
          response.write(' ')
          return
        }
        clearInterval(timer)
        response.end(']}')
      }, 50)
    })
    const api = loopbackKubeApi(port, { requestTimeoutMs: 200 })
    t.teardown(() => {
      api.close()
    })
    t.same(await api.get('/api/v1/configmaps'), { items: [] }, 'read whole after 600 ms')
  },
)

for (const method of ['GET', 'PATCH'] as const) {
  t.test(`a ${method} whose body trickles fails at the request limit`, async (t) => {
    let dropped!: () => void
    const closed = new Promise<void>((resolve) => (dropped = resolve))
    const api = await apiFor(t, (request, response) => {
      request.resume()
      trickle(response, dropped)
    })
    const started = Date.now()
    const read =
      method === 'GET'
        ? api.get('/apis/x/v1/things', { limit: 500 })
        : api.write('PATCH', '/apis/x/v1/things/a/status', {})
    await t.rejects(read, {
      name: 'KubeApiError',
      message: `${method} /apis/x/v1/things${method === 'GET' ? '' : '/a/status'}: no whole answer within ${LIMIT_MS} ms`,
      status: 0,
    })
    const took = Date.now() - started
    t.ok(took >= LIMIT_MS && took < LIMIT_MS + 1_000, `ended at the limit (${took} ms)`)
    await closed
    t.pass('the connection was dropped')
  })
}

t.test('a caller signal that ends first says so, not the limit', async (t) => {
  const api = await apiFor(t, (request, response) => {
    request.resume()
    trickle(response, () => undefined)
  })
  const caller = new AbortController()
  setTimeout(() => {
    caller.abort(new Error('shutting down'))
  }, 50)
  await t.rejects(api.get('/apis/x/v1/things', {}, caller.signal), {
    message: 'GET /apis/x/v1/things: shutting down',
  })
  // Aborted before it began: not sent at all.
  await t.rejects(api.write('PUT', '/apis/x/v1/things/a', {}, { signal: caller.signal }), {
    message: 'PUT /apis/x/v1/things/a: shutting down',
  })
})

t.test('an answer within the limit is read, however long the socket was idle before', async (t) => {
  const api = await apiFor(t, (request, response) => {
    request.resume()
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end('{"kind":"List"}')
  })
  t.same(await api.get('/a'), { kind: 'List' })
  // Well past the limit since the first: each request has a limit of its own.
  await new Promise((resolve) => setTimeout(resolve, LIMIT_MS + 100))
  t.same(await api.get('/a'), { kind: 'List' })
})

t.test('a 429 asks for the wait of its Status, else of its Retry-After header', async (t) => {
  const api = await apiFor(t, (request, response) => {
    request.resume()
    const url = request.url ?? ''
    if (url.startsWith('/status')) {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '9' })
      response.end(
        '{"kind":"Status","code":429,"message":"slow down","details":{"retryAfterSeconds":3}}',
      )
    } else if (url.startsWith('/header')) {
      response.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '7' })
      response.end('Too many requests, please try again later.')
    } else if (url.startsWith('/zero')) {
      response.writeHead(429, { 'retry-after': '0' })
      response.end()
    } else {
      response.writeHead(429, { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' })
      response.end()
    }
  })
  const waitOf = async (path: string) => {
    const error = await api.get(path).catch((error: unknown) => error)
    t.type(error, KubeApiError)
    return (error as KubeApiError).retryAfterSeconds
  }
  t.equal(await waitOf('/status'), 3, "the Status's details win")
  t.equal(await waitOf('/header'), 7, 'else the header, in seconds')
  t.equal(await waitOf('/date'), undefined, 'a date is not read (nor by client-go)')
  t.equal(await waitOf('/zero'), undefined, 'no wait asked for')
})
