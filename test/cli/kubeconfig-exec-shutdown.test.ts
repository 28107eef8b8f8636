/**
 * `serve` as a process, with a kubeconfig whose exec plugin hangs: SIGTERM still ends it at
 * once, and the plugin with everything it started (it runs in a process group of its own, which
 * the signal does not reach). Both while the plugin holds the start, and while a later run (the
 * credential expired) holds a watch being re-established.
 */

import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { createDevCertificates, writeDevCertificates } from '../../src/http/dev-certs.ts'
import { execPlugin, survivors, waitForRuns } from '../helpers/exec-plugin.ts'
import { startFakeKubeApi } from '../helpers/fake-kube-api.ts'
import { kubeconfigText } from '../helpers/kubeconfig.ts'
import { spawnServe, startServe } from '../helpers/serve-process.ts'

/** Far longer than an exit on SIGTERM takes; far shorter than the 60 s shutdown bound. */
const EXIT_WITHIN_MS = 10_000

t.test('SIGTERM while the plugin holds the start: exits, the plugin ended', async (t) => {
  const fake = await startFakeKubeApi(t)
  const dir = t.testdirName
  const plugin = execPlugin(dir, 'hang')
  t.testdir({
    ...plugin.files,
    kubeconfig: kubeconfigText(fake.server, { user: { exec: plugin.exec } }),
  })
  const certDir = join(dir, 'certs')
  await writeDevCertificates(certDir, await createDevCertificates({ hosts: ['127.0.0.1'] }))
  const service = await spawnServe({
    args: ['--cert-dir', certDir],
    env: { KUBECONFIG: join(dir, 'kubeconfig') },
    killAfterMs: 30_000,
  })
  t.teardown(service.kill)
  const [run] = await waitForRuns(plugin.log, 1)
  const signalled = Date.now()
  const code = await service.stop('SIGTERM', EXIT_WITHIN_MS)
  t.ok(Date.now() - signalled < EXIT_WITHIN_MS, `exited ${Date.now() - signalled} ms after`)
  t.equal(code, null, 'ended by the signal, as before the service is up')
  t.same(await survivors([run?.pid ?? 0, run?.child ?? 0]), [], 'plugin and child ended')
  t.same(fake.requests, [], 'nothing was asked')
})

t.test('SIGTERM while a later run holds a watch: exits 0, the plugin ended', async (t) => {
  const fake = await startFakeKubeApi(t)
  const dir = t.testdirName
  const plugin = execPlugin(dir, 'token-then-hang')
  t.testdir({
    ...plugin.files,
    kubeconfig: kubeconfigText(fake.server, { user: { exec: plugin.exec } }),
  })
  const certDir = join(dir, 'certs')
  await writeDevCertificates(certDir, await createDevCertificates({ hosts: ['127.0.0.1'] }))
  const service = await startServe({
    args: ['--cert-dir', certDir, '--no-reconciler', '--shutdown-delay', '0s'],
    // The first credential lasts 2 s: a request after that runs the plugin again.
    env: { KUBECONFIG: join(dir, 'kubeconfig'), EXPIRES_MS: '2000' },
  })
  t.teardown(service.kill)
  // The credential was had before the start went on: it has expired 2 s after this.
  await sleep(2_300)
  t.same(
    [...new Set(fake.requests.map((request) => request.authorization))],
    ['Bearer exec-token-1'],
  )
  const watch = await fake.nextWatch()
  // The watch ends as the server ends it; its reflector asks again, and needs a credential.
  watch.end()
  const runs = await waitForRuns(plugin.log, 2)
  const signalled = Date.now()
  const code = await service.stop('SIGTERM', EXIT_WITHIN_MS)
  t.ok(Date.now() - signalled < EXIT_WITHIN_MS, `exited ${Date.now() - signalled} ms after`)
  t.equal(code, 0, 'a graceful exit')
  const hung = runs[1]
  t.same(await survivors([hung?.pid ?? 0, hung?.child ?? 0]), [], 'plugin and child ended')
})
