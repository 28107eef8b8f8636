/**
 * `insecure-skip-tls-verify: true` with a CA (file or data) is refused as kubectl refuses it, in
 * every command, before anything is asked: one of the two is a mistake, and which one is the
 * user's to say.
 */

import { join } from 'node:path'
import t from 'tap'
import { createDevCertificates } from '../../src/http/dev-certs.ts'
import { runCli } from '../helpers/cli.ts'
import { startFakeKubeApi } from '../helpers/fake-kube-api.ts'
import { kubeconfigText } from '../helpers/kubeconfig.ts'
import { serveInProcess } from '../helpers/serve-in-process.ts'

const KUBECTL = 'specifying a root certificates file with the insecure flag is not allowed'

t.test('a CA with insecure-skip-tls-verify: refused at start, nothing asked', async (t) => {
  const fake = await startFakeKubeApi(t)
  const { ca } = await createDevCertificates({ hosts: ['127.0.0.1'], validDays: 1 })
  // The fake serves plain http, so kubeconfigText sets insecure-skip-tls-verify already.
  const dir = t.testdir({
    data: kubeconfigText(fake.server, { ca }),
    file: kubeconfigText(fake.server, { cluster: { 'certificate-authority': 'ca.crt' } }),
    'ca.crt': ca,
  })
  const line = (name: string, field: string) =>
    `mcp-admission: --kubeconfig ${join(dir, name)}: cluster "c": ${KUBECTL} (insecure-skip-tls-verify: true with ${field})\n`
  const checked = await runCli(['check', '--kubeconfig', join(dir, 'data'), dir])
  t.equal(checked.code, 2)
  t.equal(checked.stderr, line('data', 'certificate-authority-data'))
  const audited = await runCli(['audit', '--kubeconfig', join(dir, 'file')])
  t.equal(audited.code, 2)
  t.equal(audited.stderr, line('file', 'certificate-authority'))
  const served = await serveInProcess([], { env: { KUBECONFIG: join(dir, 'data') } })
  t.match(served, { code: 2, started: false })
  t.equal(
    served.stderr,
    line('data', 'certificate-authority-data').replace('--kubeconfig', 'KUBECONFIG'),
  )
  t.same(fake.requests, [], 'the cluster was never asked')
})
