/**
 * A kubeconfig user's exec credential plugin, as kubectl runs it: given its args, env and
 * KUBERNETES_EXEC_INFO (never interactive), its token sent, run once while the credential lasts.
 * One that never answers is ended after the bound, with everything it started, and `check`,
 * `audit` and `serve` stop with one line saying so (exit 2). A config client-go refuses is refused.
 */

import { join } from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { execPlugin, runsOf, survivors } from '../helpers/exec-plugin.ts'
import { startFakeKubeApi } from '../helpers/fake-kube-api.ts'
import { kubeconfigText } from '../helpers/kubeconfig.ts'
import { serveInProcess } from '../helpers/serve-in-process.ts'

const V1 = 'client.authentication.k8s.io/v1'

t.test('check sends the plugin token; the plugin gets its args, env and exec info', async (t) => {
  const fake = await startFakeKubeApi(t)
  const dir = t.testdirName
  const plain = execPlugin(dir, 'token', {
    args: ['--cluster', 'c'],
    env: [{ name: 'PLUGIN_SETTING', value: 'from-kubeconfig' }],
  })
  const withInfo = execPlugin(dir, 'token', { provideClusterInfo: true }, 'with-info')
  t.testdir({
    ...plain.files,
    plain: kubeconfigText(fake.server, { user: { exec: plain.exec } }),
    'with-info': kubeconfigText(fake.server, { user: { exec: withInfo.exec } }),
  })
  const result = await runCli(['check', '--kubeconfig', join(dir, 'plain'), dir])
  t.match(result.stderr, /has no CustomResourceDefinition/, 'the cluster answered')
  t.same(
    fake.requests.map((request) => request.authorization),
    ['Bearer exec-token-1'],
  )
  const [run, ...more] = await runsOf(plain.log)
  t.same(more, [], 'run once')
  t.same(run?.info, { apiVersion: V1, kind: 'ExecCredential', spec: { interactive: false } })
  t.same(run?.args, ['--cluster', 'c'])
  t.equal(run?.setting, 'from-kubeconfig')

  await runCli(['check', '--kubeconfig', join(dir, 'with-info'), dir])
  const [informed] = await runsOf(withInfo.log)
  t.same(informed?.info, {
    apiVersion: V1,
    kind: 'ExecCredential',
    spec: {
      interactive: false,
      cluster: { server: fake.server, 'insecure-skip-tls-verify': true },
    },
  })
})

t.test(
  'a plugin that never answers: ended with its child, one line, exit 2',
  { timeout: 30_000 },
  async (t) => {
    const fake = await startFakeKubeApi(t)
    const dir = t.testdirName
    const plugin = execPlugin(dir, 'hang')
    t.testdir({
      ...plugin.files,
      kubeconfig: kubeconfigText(fake.server, { user: { exec: plugin.exec } }),
    })
    const kubeconfig = join(dir, 'kubeconfig')
    const line = (named: string) =>
      `mcp-admission: ${named}: user "u": exec plugin ${process.execPath}: no answer within 2 s: ended it: waiting for a login\n`
    // Long enough for a Node plugin to start and say why it waits on a loaded 2-core machine
    // (300 ms was not, once), short enough to keep the test quick.
    const io = { execTimeoutMs: 2_000 }
    const checked = await runCli(['check', '--kubeconfig', kubeconfig, dir], '', io)
    t.equal(checked.code, 2)
    t.equal(checked.stderr, line(`--kubeconfig ${kubeconfig}`))
    const audited = await runCli(['audit', '--kubeconfig', kubeconfig], '', io)
    t.equal(audited.code, 2)
    t.equal(audited.stderr, line(`--kubeconfig ${kubeconfig}`))
    const served = await serveInProcess([], { ...io, env: { KUBECONFIG: kubeconfig } })
    t.match(served, { code: 2, started: false })
    t.equal(served.stderr, line(`KUBECONFIG ${kubeconfig}`))
    const runs = await runsOf(plugin.log)
    t.equal(runs.length, 3, 'one run each')
    const pids = runs.flatMap((run) => [run.pid, run.child ?? 0])
    t.same(await survivors(pids), [], 'no plugin process, nor its child, is left')
    t.same(fake.requests, [], 'nothing was asked without a credential')
  },
)

t.test('an exec config client-go refuses is refused at start', async (t) => {
  const fake = await startFakeKubeApi(t)
  const dir = t.testdirName
  const plugin = execPlugin(dir, 'token')
  const configs = {
    'no-mode': { ...plugin.exec, interactiveMode: undefined },
    always: { ...plugin.exec, interactiveMode: 'Always' },
    alpha: { ...plugin.exec, apiVersion: 'client.authentication.k8s.io/v1alpha1' },
  }
  t.testdir({
    ...plugin.files,
    ...Object.fromEntries(
      Object.entries(configs).map(([name, exec]) => [
        name,
        kubeconfigText(fake.server, { user: { exec } }),
      ]),
    ),
  })
  const reasons = {
    'no-mode': 'exec: interactiveMode must be specified (Never or IfAvailable)',
    always:
      'exec: interactiveMode Always needs a terminal, which mcp-admission never gives a plugin: use Never or IfAvailable',
    alpha:
      'exec: apiVersion "client.authentication.k8s.io/v1alpha1" is not supported: use client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1',
  }
  for (const [name, reason] of Object.entries(reasons)) {
    const result = await runCli(['check', '--kubeconfig', join(dir, name), dir])
    t.equal(result.code, 2, name)
    t.equal(
      result.stderr,
      `mcp-admission: --kubeconfig ${join(dir, name)}: user "u": ${reason}\n`,
      name,
    )
  }
  t.same(await runsOf(plugin.log), [], 'the plugin never ran')
  t.same(fake.requests, [])
})
