/**
 * KubeApi on a keep-alive connection: many requests over one socket leave nothing behind; a
 * signal ends a read or a write the server never answers.
 */

import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { RequestListener } from 'node:http'
import type { Socket } from 'node:net'
import t from 'tap'
import type { Test } from 'tap'
import type { KubeApi } from '../../src/cluster/kube-api.ts'
import { loopbackKubeApi } from '../helpers/fake-kube-api.ts'
import { loopbackServer } from '../helpers/loopback-server.ts'

/** A KubeApi against a plain-http loopback server answering with `handler`. */
async function apiFor(t: Test, handler: RequestListener): Promise<KubeApi> {
  const api = loopbackKubeApi(await loopbackServer(t, handler))
  t.teardown(() => {
    api.close()
  })
  return api
}

t.test('reads over one pooled socket do not pile up timeout listeners', async (t) => {
  // Client sockets as Node creates them (the agent that owns them is private to KubeApi).
  const clients: Socket[] = []
  const onSocket = (message: unknown) => clients.push((message as { socket: Socket }).socket)
  subscribe('net.client.socket', onSocket)
  t.teardown(() => unsubscribe('net.client.socket', onSocket))
  const api = await apiFor(t, (_request, response) => {
    response.setHeader('content-type', 'application/json')
    response.end('{"kind":"ConfigMap"}')
  })
  for (let i = 0; i < 50; i++) t.same(await api.get('/api/v1/x'), { kind: 'ConfigMap' })

  t.equal(clients.length, 1, 'one keep-alive connection served every read')
  const listeners = clients[0]?.listenerCount('timeout') ?? -1
  t.ok(listeners >= 0 && listeners <= 2, `timeout listeners left on the socket: ${listeners}`)
})

t.test('a signal ends a read or a write that gets no answer', async (t) => {
  const held: string[] = []
  // Reads the request and never answers it, like a stalled API server.
  const api = await apiFor(t, (request) => {
    held.push(`${request.method} ${request.url}`)
    request.resume()
  })
  await t.rejects(api.get('/api/v1/x', {}, AbortSignal.timeout(50)), {
    name: 'KubeApiError',
    message: 'GET /api/v1/x: no answer before the deadline',
    status: 0,
  })
  const leadership = new AbortController()
  const write = api.write('PUT', '/api/v1/y', { kind: 'Lease' }, { signal: leadership.signal })
  setTimeout(() => {
    leadership.abort(new Error('leadership lost'))
  }, 50)
  await t.rejects(write, { message: 'PUT /api/v1/y: leadership lost', status: 0 })
  t.same(held, ['GET /api/v1/x', 'PUT /api/v1/y'], 'both requests reached the server')
})

t.test('a body read in pieces keeps a character split between them', async (t) => {
  // Bodies are decoded as they arrive (one string, no Buffer of the whole page), so a multi-byte
  // character whose bytes straddle two chunks must still come out whole.
  const text = JSON.stringify({ data: { 'runconfig.json': 'café ☕ 𝄞' } })
  const bytes = Buffer.from(text)
  const splits = [text.indexOf('é'), text.indexOf('☕'), text.indexOf('𝄞')].map(
    (index) => Buffer.byteLength(text.slice(0, index)) + 1,
  )
  const api = await apiFor(t, (_request, response) => {
    response.setHeader('content-type', 'application/json')
    let from = 0
    const next = (index: number) => {
      const to = splits[index] ?? bytes.length
      response.write(bytes.subarray(from, to))
      from = to
      if (to === bytes.length) response.end()
      else
        setTimeout(() => {
          next(index + 1)
        }, 5)
    }
    next(0)
  })
  t.same(await api.get('/api/v1/x'), JSON.parse(text))
})
