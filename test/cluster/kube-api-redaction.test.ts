/**
 * An API server (or a proxy in front of it) may echo the request in a 401 or 403, Authorization
 * header and all: the credentials sent, and anything shaped like a credential, never reach an
 * error's message or a write's Status, whether the body is a Status or plain text cut short.
 */

import type { RequestListener } from 'node:http'
import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import t from 'tap'
import type { Test } from 'tap'
import { KubeApi } from '../../src/cluster/kube-api.ts'
import { kubeConfigCredentials } from '../../src/cluster/kubeconfig-credentials.ts'
import { runCli } from '../helpers/cli.ts'
import { kubeconfigText } from '../helpers/kubeconfig.ts'
import { loopbackServer } from '../helpers/loopback-server.ts'

const TOKEN = 'sa-token-0f9e8d7c6b5a'
/** Someone else's token, shaped as service account tokens are (a JWT). */
const OTHER_JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06YWRtaW4ifQ.c2lnbmF0dXJl'

/** A server refusing everything, its body echoing what it was sent. */
async function echoingServer(t: Test, handler: RequestListener): Promise<string> {
  return `http://127.0.0.1:${await loopbackServer(t, handler)}`
}

function apiWithToken(t: Test, server: string): KubeApi {
  const config = new KubeConfig()
  config.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u', token: TOKEN }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  })
  const api = new KubeApi(kubeConfigCredentials(config))
  t.teardown(() => {
    api.close()
  })
  return api
}

const echo: RequestListener = (request, response) => {
  request.resume()
  const sent = request.headers.authorization ?? ''
  const status = request.url?.startsWith('/forbidden') ? 403 : 401
  const said = `Authorization: ${sent}; token ${sent.replace('Bearer ', '')}; also ${OTHER_JWT}`
  if (request.url?.includes('plain')) {
    // Not a Status: the start of the body is quoted, the token straddling where it is cut.
    response.writeHead(status, { 'content-type': 'text/plain' })
    response.end(`${'x'.repeat(290)}${sent.replace('Bearer ', '')} and more`)
    return
  }
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ kind: 'Status', code: status, message: said }))
}

t.test('a refusal echoing the token: redacted in errors and Status bodies', async (t) => {
  const api = apiWithToken(t, await echoingServer(t, echo))
  await t.rejects(api.get('/api/v1/x'), {
    status: 401,
    message:
      'GET /api/v1/x: 401 Authorization: Bearer [redacted]; token [redacted]; also [redacted]',
  })
  await t.rejects(api.get('/forbidden/plain'), {
    status: 403,
    // Redacted before the cut at 300 characters: no part of the token is left at the cut.
    message: `GET /forbidden/plain: 403 ${'x'.repeat(290)}[redacted]`,
  })
  await t.rejects(
    api.watch('/forbidden/w', {}, () => undefined, {
      signal: new AbortController().signal,
      idleTimeoutMs: 5_000,
    }),
    { message: /^GET \/forbidden\/w: 403 Authorization: Bearer \[redacted\]; token \[redacted\]/ },
  )
  const written = await api.write('PUT', '/forbidden/lease', { kind: 'Lease' })
  t.equal(written.status, 403)
  t.equal(
    written.body?.['message'],
    'Authorization: Bearer [redacted]; token [redacted]; also [redacted]',
  )
})

t.test('check --kubeconfig never prints the token a server echoes', async (t) => {
  const server = await echoingServer(t, echo)
  const dir = t.testdir({ kubeconfig: kubeconfigText(server, { user: { token: TOKEN } }) })
  const result = await runCli(['check', '--kubeconfig', join(dir, 'kubeconfig'), dir])
  t.equal(result.code, 2)
  t.match(result.stderr, /cannot list the CustomResourceDefinitions of .*: 401 Authorization:/)
  t.notMatch(result.stderr, TOKEN)
  t.notMatch(result.stderr, OTHER_JWT)
})
