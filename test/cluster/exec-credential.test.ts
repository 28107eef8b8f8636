/**
 * The exec credential protocol on its own: an `exec` config checked as client-go checks it, an
 * ExecCredential read back as client-go reads it, a credential kept until it expires (requests
 * together sharing one run), a 401 running the plugin again, shutdown ending a run, and a failed
 * run's message quoting the plugin's last stderr line without the token in it.
 */

import t from 'tap'
import type { Test } from 'tap'
import {
  ExecCredentialSource,
  readExecConfig,
  readExecCredential,
} from '../../src/cluster/exec-credential.ts'
import { execPlugin, runsOf, survivors, waitForRuns } from '../helpers/exec-plugin.ts'

const V1 = 'client.authentication.k8s.io/v1'
const V1BETA1 = 'client.authentication.k8s.io/v1beta1'

t.test('an exec config is checked as client-go checks it', async (t) => {
  const base = { apiVersion: V1, command: 'plugin', interactiveMode: 'Never' }
  t.same(readExecConfig(base, '/etc/kube'), {
    apiVersion: V1,
    command: 'plugin',
    args: [],
    env: [],
    interactiveMode: 'Never',
    provideClusterInfo: false,
    installHint: undefined,
  })
  t.equal(
    readExecConfig({ ...base, command: 'bin/plugin' }, '/etc/kube').command,
    '/etc/kube/bin/plugin',
    'a relative path is the kubeconfig directory’s; a bare name is looked up on PATH',
  )
  t.equal(
    readExecConfig({ apiVersion: V1BETA1, command: 'p' }, '/').interactiveMode,
    'IfAvailable',
    'v1beta1 defaults the mode',
  )
  const refused: [unknown, string][] = [
    ['plugin', 'exec: not a mapping'],
    [{ ...base, apiVersion: undefined }, 'exec: apiVersion must be specified'],
    [{ ...base, command: '' }, 'exec: command must be specified'],
    [{ ...base, args: ['a', 1] }, 'exec: args must be a list of strings'],
    [
      { ...base, env: [{ name: '', value: 'x' }] },
      'exec: env must be a list of a name and a value each',
    ],
    [
      { ...base, interactiveMode: 'Sometimes' },
      'exec: interactiveMode "\\"Sometimes\\"" is not one of Never, IfAvailable, Always',
    ],
  ]
  for (const [raw, message] of refused) t.throws(() => readExecConfig(raw, '/'), { message })
})

t.test('an ExecCredential is read back as client-go reads it', async (t) => {
  const answer = (status: unknown, apiVersion = V1) =>
    JSON.stringify({ apiVersion, kind: 'ExecCredential', status })
  t.same(
    readExecCredential(answer({ token: 't', expirationTimestamp: '2030-01-02T03:04:05Z' }), V1),
    { token: 't', cert: undefined, key: undefined, expiresAt: Date.UTC(2030, 0, 2, 3, 4, 5) },
  )
  t.same(readExecCredential(answer({ clientCertificateData: 'C', clientKeyData: 'K' }), V1), {
    token: undefined,
    cert: 'C',
    key: 'K',
    expiresAt: undefined,
  })
  const refused: [string, string][] = [
    ['token: secret', 'its output is not an ExecCredential (not JSON)'],
    [JSON.stringify({ kind: 'Status' }), 'its output is not an ExecCredential'],
    [
      answer({ token: 't' }, V1BETA1),
      `it answered with apiVersion "${V1BETA1}", but the kubeconfig says ${V1}`,
    ],
    [answer(undefined), 'its ExecCredential has no status'],
    [answer({}), 'its ExecCredential has neither a token nor a client certificate and key'],
    [
      answer({ clientCertificateData: 'C' }),
      'its ExecCredential has only one of clientCertificateData and clientKeyData',
    ],
    [
      answer({ token: 't', expirationTimestamp: 'soon' }),
      "its ExecCredential's status.expirationTimestamp is not a time",
    ],
  ]
  for (const [stdout, message] of refused)
    t.throws(() => readExecCredential(stdout, V1), { message })
})

/** A source running the test plugin in `mode`, on a clock the test turns. */
function source(t: Test, mode: 'token' | 'hang' | 'fail', env: Record<string, string> = {}) {
  const dir = t.testdirName
  const plugin = execPlugin(dir, mode)
  t.testdir(plugin.files)
  const clock = { now: Date.now() }
  const exec = new ExecCredentialSource({
    config: readExecConfig(plugin.exec, dir),
    env,
    timeoutMs: 5_000,
    cluster: { server: 'https://127.0.0.1:1' },
    now: () => clock.now,
  })
  t.teardown(() => {
    exec.close()
  })
  return { exec, clock, log: plugin.log }
}

t.test('a credential is kept until it expires; requests together share one run', async (t) => {
  const { exec, clock, log } = source(t, 'token', { EXPIRES_MS: '60000' })
  const together = await Promise.all([exec.credential(), exec.credential(), exec.credential()])
  t.same(
    together.map((credential) => credential.token),
    ['exec-token-1', 'exec-token-1', 'exec-token-1'],
  )
  clock.now += 59_000
  t.equal((await exec.credential()).token, 'exec-token-1', 'kept while it lasts')
  clock.now += 2_000
  t.equal((await exec.credential()).token, 'exec-token-2', 'run again once expired')
  // The plugin's clock is the real one: back to it, where its last credential still lasts.
  clock.now = Date.now()
  await exec.refresh()
  t.equal((await exec.credential()).token, 'exec-token-3', 'and at once after a 401')
  t.equal((await runsOf(log)).length, 3)
})

t.test('closing ends a run under way, and no run starts after', async (t) => {
  const { exec, log } = source(t, 'hang')
  const pending = exec.credential()
  const [run] = await waitForRuns(log, 1)
  exec.close()
  await t.rejects(pending, { message: /: ended: shutting down: waiting for a login$/ })
  t.same(await survivors([run?.pid ?? 0, run?.child ?? 0]), [], 'plugin and child ended')
  await t.rejects(exec.credential(), { message: /: not run: shutting down$/ })
  t.equal((await runsOf(log)).length, 1)
})

t.test('a waiting request gives up on its signal; the run goes on for the others', async (t) => {
  const { exec, log } = source(t, 'hang')
  const first = exec.credential()
  first.catch(() => undefined)
  await waitForRuns(log, 1)
  await t.rejects(exec.credential(AbortSignal.timeout(50)), {
    message: 'aborted while waiting for the exec plugin',
  })
  t.equal((await runsOf(log)).length, 1, 'no second run')
})

t.test('a failed run: its exit code and last stderr line, the token taken out', async (t) => {
  const { exec } = source(t, 'fail')
  await t.rejects(exec.credential(), {
    message: `exec plugin ${process.execPath}: exited with code 3: error: token [redacted] expired`,
  })
})

t.test('a plugin not installed, or one that says too much', async (t) => {
  const run = (exec: Record<string, unknown>) =>
    new ExecCredentialSource({
      config: readExecConfig({ apiVersion: V1, interactiveMode: 'Never', ...exec }, '/'),
      env: {},
      cluster: { server: 'https://127.0.0.1:1' },
    }).credential()
  await t.rejects(
    run({ command: '/nowhere/kubelogin', installHint: 'brew install kubelogin\nor see the docs' }),
    { message: 'exec plugin /nowhere/kubelogin: no such file (brew install kubelogin)' },
  )
  await t.rejects(
    run({
      command: process.execPath,
      args: ['-e', "process.stdout.write('x'.repeat(2 * 1024 * 1024))"],
    }),
    { message: `exec plugin ${process.execPath}: its output is larger than 1 MiB: ended it` },
  )
})
