/**
 * A kubeconfig proxy that stalls while the tunnel opens fails each step within kubectl's bound
 * (10 s, a test's 200 ms here), with one line naming the proxy and never its credentials: an
 * https:// proxy-url that speaks plain HTTP, a proxy that never answers the CONNECT, a tunnel in
 * which the API server's TLS handshake never ends. The request's own limit (30 s here, as `check`
 * and `audit` have it) would otherwise be all that ended them.
 */

import { createServer as createHttpServer } from 'node:http'
import { createServer as createNetServer } from 'node:net'
import type { Server, Socket } from 'node:net'
import { join } from 'node:path'
import { createServer as createTlsServer } from 'node:tls'
import t from 'tap'
import type { Test } from 'tap'
import { createDevCertificates } from '../../src/http/dev-certs.ts'
import { startConnectProxy } from '../helpers/connect-proxy.ts'
import { kubeconfigText } from '../helpers/kubeconfig.ts'
import { kubeApiFromKubeconfig } from '../helpers/kubeconfig-api.ts'

const STEP_MS = 200
/** Far longer than a step: a failure sooner than this came from the step's bound. */
const REQUEST_TIMEOUT_MS = 30_000

/** Listens on 127.0.0.1 until the test ends; returns the port. */
async function listen(t: Test, server: Server): Promise<number> {
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => sockets.add(socket))
  server.on('secureConnection', (socket: Socket) => sockets.add(socket))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  return (server.address() as { port: number }).port
}

/** A server that reads whatever it is sent and never says a word. */
const silent = () => createNetServer((socket) => socket.resume())

async function failureOf(t: Test, server: string, proxyUrl: string) {
  const dir = t.testdir({
    kubeconfig: kubeconfigText(server, { cluster: { 'proxy-url': proxyUrl } }),
  })
  const api = await kubeApiFromKubeconfig(t, join(dir, 'kubeconfig'), {
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    proxyStepTimeoutMs: STEP_MS,
  })
  const started = Date.now()
  const error = await api.get('/api/v1/x').then(
    () => new Error('the request succeeded'),
    (error: unknown) => error as Error,
  )
  return { message: error.message, elapsedMs: Date.now() - started }
}

t.test('an https:// proxy-url whose server never starts TLS', async (t) => {
  const port = await listen(t, silent())
  const { message, elapsedMs } = await failureOf(
    t,
    'https://127.0.0.1:1',
    `https://user:hunter2@127.0.0.1:${port}`,
  )
  t.equal(
    message,
    `GET /api/v1/x: proxy https://127.0.0.1:${port}: no TLS handshake (is it a plain-http proxy?) within ${STEP_MS} ms`,
  )
  t.ok(elapsedMs < 5_000, `ended by the step's bound (${elapsedMs} ms)`)
})

t.test('an https:// proxy-url whose server answers in plain HTTP', async (t) => {
  const port = await listen(
    t,
    createHttpServer((_request, response) => response.end()),
  )
  const { message } = await failureOf(
    t,
    'https://127.0.0.1:1',
    `https://user:hunter2@127.0.0.1:${port}`,
  )
  t.equal(
    message,
    `GET /api/v1/x: proxy https://127.0.0.1:${port}: no TLS handshake: it answered in plain text (is it a plain-http proxy?)`,
  )
})

t.test('an https proxy that completes TLS and never answers the CONNECT', async (t) => {
  const certificates = await createDevCertificates({ hosts: ['127.0.0.1'], validDays: 1 })
  const mute = createTlsServer({ cert: certificates.cert, key: certificates.key }, (socket) =>
    socket.resume(),
  )
  const port = await listen(t, mute)
  const dir = t.testdir({
    kubeconfig: kubeconfigText('https://127.0.0.1:1', {
      ca: certificates.ca,
      cluster: { 'proxy-url': `https://127.0.0.1:${port}` },
    }),
  })
  const api = await kubeApiFromKubeconfig(t, join(dir, 'kubeconfig'), {
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    proxyStepTimeoutMs: STEP_MS,
  })
  const started = Date.now()
  await t.rejects(api.get('/api/v1/x'), {
    message: `GET /api/v1/x: proxy https://127.0.0.1:${port}: no answer to CONNECT 127.0.0.1:1 within ${STEP_MS} ms`,
  })
  t.ok(Date.now() - started < 5_000, "ended by the step's bound")
})

t.test("a tunnel in which the API server's TLS handshake never ends", async (t) => {
  const port = await listen(t, silent())
  const proxy = await startConnectProxy(t)
  const { message, elapsedMs } = await failureOf(
    t,
    `https://127.0.0.1:${port}`,
    proxy.url.replace('//', '//user:hunter2@'),
  )
  t.equal(
    message,
    `GET /api/v1/x: proxy ${proxy.url}: no TLS handshake with 127.0.0.1:${port} through the tunnel within ${STEP_MS} ms`,
  )
  t.ok(elapsedMs < 5_000, `ended by the step's bound (${elapsedMs} ms)`)
  t.same(
    proxy.connects.map((connect) => connect.authority),
    [`127.0.0.1:${port}`],
    'the tunnel was open',
  )
})
