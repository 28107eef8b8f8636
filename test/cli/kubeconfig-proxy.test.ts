/**
 * A kubeconfig cluster's `proxy-url`, as kubectl takes it: every request to the API server goes
 * through the proxy (an HTTP CONNECT tunnel, with the URL's credentials), over TLS to an https://
 * proxy; a proxy that refuses or cannot be reached is an error naming it, never a direct
 * connection; a SOCKS5 proxy, or a scheme no proxy has, is refused at start.
 */

import { createServer } from 'node:https'
import { createServer as createNetServer } from 'node:net'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { createDevCertificates } from '../../src/http/dev-certs.ts'
import { runCli } from '../helpers/cli.ts'
import { startConnectProxy } from '../helpers/connect-proxy.ts'
import { startFakeKubeApi } from '../helpers/fake-kube-api.ts'
import { kubeconfigText } from '../helpers/kubeconfig.ts'
import { kubeApiFromKubeconfig } from '../helpers/kubeconfig-api.ts'
import { freePort } from '../helpers/ports.ts'

const CRDS_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'

t.test('check reads the cluster through the proxy, every request tunnelled', async (t) => {
  const fake = await startFakeKubeApi(t)
  const proxy = await startConnectProxy(t, { credentials: 'user:p@ss' })
  const withCredentials = proxy.url.replace('//', '//user:p%40ss@')
  const dir = t.testdir({
    kubeconfig: kubeconfigText(fake.server, { cluster: { 'proxy-url': withCredentials } }),
    'objects.json': '[]',
  })
  const result = await runCli([
    'check',
    '--kubeconfig',
    join(dir, 'kubeconfig'),
    join(dir, 'objects.json'),
  ])
  t.match(result.stderr, /has no CustomResourceDefinition of group/, 'the cluster answered')
  t.same(
    fake.requests.map((request) => request.path),
    [CRDS_PATH],
  )
  const authority = new URL(fake.server).host
  t.same(
    proxy.connects,
    [{ authority, authorization: `Basic ${Buffer.from('user:p@ss').toString('base64')}` }],
    'through one tunnel, with the URL credentials',
  )
  t.same(proxy.plain, [])
})

t.test(
  'a proxy that refuses or cannot be reached: exit 2 naming it, no direct connection',
  async (t) => {
    const fake = await startFakeKubeApi(t)
    const refusing = await startConnectProxy(t, { refuse: 403 })
    const closed = `http://127.0.0.1:${await freePort()}`
    const asking = await startConnectProxy(t, { credentials: 'user:secret' })
    const dir = t.testdir({
      refusing: kubeconfigText(fake.server, { cluster: { 'proxy-url': refusing.url } }),
      closed: kubeconfigText(fake.server, { cluster: { 'proxy-url': closed } }),
      wrong: kubeconfigText(fake.server, {
        cluster: { 'proxy-url': asking.url.replace('//', '//user:hunter2@') },
      }),
    })
    const authority = new URL(fake.server).host
    const cases = [
      ['refusing', `proxy ${refusing.url}: refused CONNECT ${authority}: 403 Forbidden`],
      ['closed', `proxy ${closed}: connect ECONNREFUSED ${new URL(closed).host}`],
      [
        'wrong',
        `proxy ${asking.url}: refused CONNECT ${authority}: 407 Proxy Authentication Required`,
      ],
    ] as const
    for (const [name, reason] of cases) {
      const result = await runCli(['check', '--kubeconfig', join(dir, name), dir])
      t.equal(result.code, 2, name)
      t.equal(
        result.stderr,
        `mcp-admission: --kubeconfig ${join(dir, name)}: cannot list the CustomResourceDefinitions of ${fake.server}: ${reason}\n`,
        name,
      )
      t.notMatch(result.stderr, 'hunter2', 'the password is never shown')
    }
    t.same(fake.requests, [], 'the API server was never reached directly')
  },
)

t.test('a SOCKS5 proxy, or a scheme no proxy has, is refused at start', async (t) => {
  const fake = await startFakeKubeApi(t)
  const dir = t.testdir({
    socks: kubeconfigText(fake.server, {
      cluster: { 'proxy-url': 'socks5://user:secret@127.0.0.1:1080' },
    }),
    ftp: kubeconfigText(fake.server, { cluster: { 'proxy-url': 'ftp://127.0.0.1:21' } }),
  })
  const socks = await runCli(['audit', '--kubeconfig', join(dir, 'socks')])
  t.equal(socks.code, 2)
  t.equal(
    socks.stderr,
    `mcp-admission: --kubeconfig ${join(dir, 'socks')}: cluster "c": proxy-url socks5://127.0.0.1:1080: SOCKS5 proxies are not supported; an HTTP or HTTPS proxy (CONNECT) is\n`,
  )
  const ftp = await runCli(['check', '--kubeconfig', join(dir, 'ftp'), dir])
  t.equal(ftp.code, 2)
  t.equal(
    ftp.stderr,
    `mcp-admission: --kubeconfig ${join(dir, 'ftp')}: cluster "c": proxy-url: unsupported scheme "ftp", must be http or https\n`,
  )
  t.same(fake.requests, [], 'nothing was asked')
})

t.test('an https API server through an https proxy, one tunnel kept alive', async (t) => {
  const certificates = await createDevCertificates({ hosts: ['127.0.0.1'], validDays: 1 })
  const server = createServer(
    { cert: certificates.cert, key: certificates.key },
    (request, response) => {
      request.resume()
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify({ kind: 'ConfigMap', auth: request.headers.authorization }))
    },
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const { port } = server.address() as { port: number }
  // The proxy's certificate is signed by the cluster's CA, which is trusted for it too.
  const proxy = await startConnectProxy(t, { tls: certificates })
  const dir = t.testdir({
    kubeconfig: kubeconfigText(`https://127.0.0.1:${port}`, {
      ca: certificates.ca,
      cluster: { 'proxy-url': proxy.url },
    }),
  })
  const api = await kubeApiFromKubeconfig(t, join(dir, 'kubeconfig'))
  for (let i = 0; i < 3; i++) {
    t.same(await api.get('/api/v1/x'), { kind: 'ConfigMap', auth: 'Bearer static-token' })
  }
  t.same(proxy.connects, [{ authority: `127.0.0.1:${port}` }], 'one tunnel served every read')
})

t.test('a proxy that never answers the CONNECT: the request bound ends it', async (t) => {
  const silent = createNetServer((socket) => socket.resume())
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const sockets = new Set<Socket>()
  silent.on('connection', (socket) => sockets.add(socket))
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    silent.close()
  })
  const proxy = `http://127.0.0.1:${(silent.address() as { port: number }).port}`
  const dir = t.testdir({
    kubeconfig: kubeconfigText('https://127.0.0.1:1', { cluster: { 'proxy-url': proxy } }),
  })
  const api = await kubeApiFromKubeconfig(t, join(dir, 'kubeconfig'), { requestTimeoutMs: 200 })
  await t.rejects(api.get('/api/v1/x'), {
    message: `GET /api/v1/x: proxy ${proxy}: no answer to CONNECT 127.0.0.1:1 within 200 ms`,
  })
})

t.test(
  'an https:// proxy-url served in plain HTTP: exit 2 within the step bound, one line naming it',
  async (t) => {
    const fake = await startFakeKubeApi(t)
    // One plain-HTTP proxy that answers a TLS hello with 400, one that waits for a line forever.
    const answering = await startConnectProxy(t)
    const waiting = createNetServer((socket) => socket.resume())
    await new Promise<void>((resolve) => waiting.listen(0, '127.0.0.1', resolve))
    const sockets = new Set<Socket>()
    waiting.on('connection', (socket) => sockets.add(socket))
    t.teardown(() => {
      for (const socket of sockets) socket.destroy()
      waiting.close()
    })
    const waitingUrl = `https://127.0.0.1:${(waiting.address() as { port: number }).port}`
    const answeringUrl = answering.url.replace('http:', 'https:')
    const withSecret = (url: string) => url.replace('//', '//user:hunter2@')
    const dir = t.testdir({
      answering: kubeconfigText(fake.server, {
        cluster: { 'proxy-url': withSecret(answeringUrl) },
      }),
      waiting: kubeconfigText(fake.server, { cluster: { 'proxy-url': withSecret(waitingUrl) } }),
    })
    const cases = [
      [
        'answering',
        `proxy ${answeringUrl}: no TLS handshake: it answered in plain text (is it a plain-http proxy?)`,
      ],
      [
        'waiting',
        `proxy ${waitingUrl}: no TLS handshake (is it a plain-http proxy?) within 300 ms`,
      ],
    ] as const
    for (const [name, reason] of cases) {
      const started = Date.now()
      const result = await runCli(['check', '--kubeconfig', join(dir, name), dir], '', {
        proxyStepTimeoutMs: 300,
      })
      t.ok(Date.now() - started < 5_000, `${name}: ended by the step's bound`)
      t.equal(result.code, 2, name)
      t.equal(
        result.stderr,
        `mcp-admission: --kubeconfig ${join(dir, name)}: cannot list the CustomResourceDefinitions of ${fake.server}: ${reason}\n`,
        name,
      )
    }
    t.same(fake.requests, [], 'the API server was never reached directly')
    t.same(answering.connects, [], 'no CONNECT was sent in the clear')
  },
)
