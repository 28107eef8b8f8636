/**
 * A kubeconfig user's `tokenFile`, as kubectl reads it: its token is the one sent (over a static
 * `token`), a relative path is the kubeconfig's directory's, a missing or empty file stops every
 * command with one line naming it, and a rotated token is used after a 401 at once and otherwise
 * once the last read is a minute old (client-go's cached file token source).
 */

import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type https from 'node:https'
import { KubeConfig } from '@kubernetes/client-node'
import t from 'tap'
import type { Test } from 'tap'
import { kubeConfigCredentials } from '../../src/cluster/kubeconfig-credentials.ts'
import { TOKEN_REREAD_MS } from '../../src/cluster/in-cluster-credentials.ts'
import { runCli } from '../helpers/cli.ts'
import { startFakeKubeApi } from '../helpers/fake-kube-api.ts'
import { kubeconfigText } from '../helpers/kubeconfig.ts'
import { kubeApiFromKubeconfig } from '../helpers/kubeconfig-api.ts'
import { loopbackServer } from '../helpers/loopback-server.ts'
import { serveInProcess } from '../helpers/serve-in-process.ts'

const GROUP = 'toolhive.stacklok.dev'

t.test('check sends the token of the token file, named relative to the kubeconfig', async (t) => {
  const fake = await startFakeKubeApi(t)
  fake.objects = [{ metadata: { name: `probes.${GROUP}` }, spec: { group: GROUP } }]
  const dir = t.testdir({
    kubeconfig: kubeconfigText(fake.server, {
      // client-go: with both, the file's token is sent (the static one is its fallback).
      user: { token: 'static-token', tokenFile: 'secrets/token' },
    }),
    secrets: { token: 'file-token\n' },
    'objects.json': '[]',
  })
  await runCli(['check', '--kubeconfig', join(dir, 'kubeconfig'), join(dir, 'objects.json')])
  t.ok(fake.requests.length > 0, 'the cluster was asked')
  t.same(
    [...new Set(fake.requests.map((request) => request.authorization))],
    ['Bearer file-token'],
    'every request carried the file token, trimmed',
  )
})

t.test('a missing or empty token file: one line naming it, exit 2, nothing asked', async (t) => {
  const fake = await startFakeKubeApi(t)
  const dir = t.testdir({
    missing: kubeconfigText(fake.server, { user: { tokenFile: 'gone' } }),
    empty: kubeconfigText(fake.server, { user: { tokenFile: join(t.testdirName, 'blank') } }),
    blank: ' \n',
  })
  const line = (file: string, problem: string) =>
    `mcp-admission: --kubeconfig ${join(dir, file)}: user "u": tokenFile ${problem}\n`
  const checked = await runCli(['check', '--kubeconfig', join(dir, 'missing'), dir])
  t.equal(checked.code, 2)
  t.equal(checked.stderr, line('missing', `${join(dir, 'gone')}: no such file`))
  const audited = await runCli(['audit', '--kubeconfig', join(dir, 'empty')])
  t.equal(audited.code, 2)
  t.equal(audited.stderr, line('empty', `${join(dir, 'blank')}: empty`))
  const served = await serveInProcess(['--kubeconfig', join(dir, 'missing')])
  t.match(served, { code: 2, started: false })
  t.equal(served.stderr, line('missing', `${join(dir, 'gone')}: no such file`))
  t.same(fake.requests, [], 'no request was made')
})

/** A server that accepts one token (`valid`) and answers 401 to any other. */
async function oneTokenServer(t: Test) {
  const state = { valid: 'first', seen: [] as string[] }
  const port = await loopbackServer(t, (request, response) => {
    const token = (request.headers.authorization ?? '').replace(/^Bearer /, '')
    state.seen.push(token)
    request.resume()
    response.setHeader('content-type', 'application/json')
    if (token !== state.valid) {
      response.statusCode = 401
      response.end('{"kind":"Status","message":"Unauthorized","code":401}')
      return
    }
    response.end('{"kind":"ConfigMap"}')
  })
  return { state, url: `http://127.0.0.1:${port}` }
}

t.test('a token rotated in the file is used as soon as the server refuses the old', async (t) => {
  const { state, url } = await oneTokenServer(t)
  const dir = t.testdir({
    kubeconfig: kubeconfigText(url, { user: { tokenFile: 'token' } }),
    token: 'first',
  })
  const api = await kubeApiFromKubeconfig(t, join(dir, 'kubeconfig'))
  t.same(await api.get('/api/v1/x'), { kind: 'ConfigMap' })
  await writeFile(join(dir, 'token'), 'second')
  state.valid = 'second'
  t.same(await api.get('/api/v1/x'), { kind: 'ConfigMap' }, 'read again after the 401')
  t.same(state.seen, ['first', 'first', 'second'])
})

t.test('the token file is read again once the last read is a minute old', async (t) => {
  const dir = t.testdir({ token: 'first' })
  const config = new KubeConfig()
  config.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: false }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  })
  const clock = { now: 0 }
  const credentials = kubeConfigCredentials(config, {
    tokenFile: join(dir, 'token'),
    now: () => clock.now,
  })
  await credentials.start()
  const authorization = async () => {
    const options: https.RequestOptions = { headers: {} }
    await credentials.applyTo(options)
    return (options.headers as Record<string, unknown>)['authorization']
  }
  t.equal(await authorization(), 'Bearer first')
  await writeFile(join(dir, 'token'), 'second\n')
  clock.now += TOKEN_REREAD_MS - 1
  t.equal(await authorization(), 'Bearer first', 'not before a minute')
  clock.now += 1
  t.equal(await authorization(), 'Bearer second', 'read again after a minute')
})
