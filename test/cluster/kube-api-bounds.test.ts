/**
 * Answers read within bounds: a GET body that never ends, or is larger than the bound, is an
 * error saying so once the bound is passed (the connection dropped, nothing more read); so is a
 * watch event line past its own bound. A body of exactly the bound is read.
 */

import type { RequestListener, ServerResponse } from 'node:http'
import t from 'tap'
import type { Test } from 'tap'
import type { KubeApi } from '../../src/cluster/kube-api.ts'
import { loopbackKubeApi } from '../helpers/fake-kube-api.ts'
import { loopbackServer } from '../helpers/loopback-server.ts'

const MiB = 1024 * 1024

async function apiFor(t: Test, handler: RequestListener): Promise<KubeApi> {
  const port = await loopbackServer(t, handler)
  const api = loopbackKubeApi(port, { maxBodyBytes: MiB, maxLineBytes: MiB })
  t.teardown(() => {
    api.close()
  })
  return api
}

/** Writes `chunk` for ever, as fast as the client reads, until the connection closes. */
function endless(response: ServerResponse, chunk: Buffer, sent: { bytes: number }): void {
  const pump = () => {
    while (!response.destroyed) {
      sent.bytes += chunk.length
      if (!response.write(chunk)) {
        response.once('drain', pump)
        return
      }
    }
  }
  pump()
}

t.test('a GET body that never ends fails past the bound', { timeout: 20_000 }, async (t) => {
  const sent = { bytes: 0 }
  let closed!: () => void
  const dropped = new Promise<void>((resolve) => (closed = resolve))
  const api = await apiFor(t, (request, response) => {
    request.resume()
    response.once('close', closed)
    response.writeHead(200, { 'content-type': 'application/json' })
    response.write('{"items":["')
    endless(response, Buffer.alloc(64 * 1024, 'x'), sent)
  })
  await t.rejects(api.get('/apis/x/v1/things', { limit: 500 }), {
    name: 'KubeApiError',
    message: 'GET /apis/x/v1/things: the answer is larger than 1 MiB: not read',
    status: 0,
  })
  await dropped
  t.pass('the connection was dropped')
  // What was in flight besides: the sockets' buffers, not the body.
  t.ok(sent.bytes < 32 * MiB, `${sent.bytes} bytes sent before the server saw the drop`)
})

t.test('a body over the bound fails; one of exactly the bound is read', async (t) => {
  const api = await apiFor(t, (request, response) => {
    request.resume()
    const size = request.url?.startsWith('/over') ? MiB + 1 : MiB
    const body = `{"kind":"List"}`.padEnd(size, ' ')
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': size })
    response.end(body)
  })
  t.same(await api.get('/exact'), { kind: 'List' })
  await t.rejects(api.get('/over'), {
    message: 'GET /over: the answer is larger than 1 MiB: not read',
  })
})

t.test('a watch event line past the bound fails the watch', { timeout: 20_000 }, async (t) => {
  const api = await apiFor(t, (request, response) => {
    request.resume()
    response.writeHead(200, { 'content-type': 'application/json' })
    response.write('{"type":"ADDED","object":{"kind":"MCPServer"}}\r\n')
    response.write('{"type":"MODIFIED","object":{"data":"')
    endless(response, Buffer.alloc(64 * 1024, 'y'), { bytes: 0 })
  })
  const events: unknown[] = []
  await t.rejects(
    api.watch('/apis/x/v1/things', {}, (event) => events.push(event), {
      signal: new AbortController().signal,
      idleTimeoutMs: 10_000,
    }),
    {
      name: 'KubeApiError',
      message: 'watch /apis/x/v1/things: a line of the answer is longer than 1 MiB: not read',
    },
  )
  t.same(events, [{ type: 'ADDED', object: { kind: 'MCPServer' } }], 'the line before it came')
})
