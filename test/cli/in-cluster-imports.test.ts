/**
 * `serve` in a pod never loads `@kubernetes/client-node` (some 40 MiB resident for its generated
 * models): the service account's token and CA are read by our own code. Nor the CEL engine of
 * `check --crds` (`@bufbuild`), which the CLI module graph reaches. With a kubeconfig the client
 * is loaded, which shows the check sees a package when it is there.
 */

import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { createDevCertificates } from '../../src/http/dev-certs.ts'
import { freePort } from '../helpers/ports.ts'
import { spawnServe } from '../helpers/serve-process.ts'

const SCRIPT = fileURLToPath(new URL('../helpers/serve-recording-imports.ts', import.meta.url))

interface Outcome {
  readonly code: number
  readonly started: boolean
  readonly stderr: string
  readonly loaded: readonly string[]
}

/** `serve` started and stopped in a fresh process, with the client's modules it resolved. */
async function serveRecordingImports(
  args: readonly string[],
  env: Record<string, string>,
): Promise<Outcome> {
  const apiPort = await freePort()
  // The script in place of main.ts: `serve` on loopback ports of its own, stopped at once.
  const child = await spawnServe({
    main: SCRIPT,
    args: ['--shutdown-delay=0s', ...args],
    logLevel: null,
    // Nothing listens on apiPort: the watches just retry until the service is stopped.
    env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(apiPort), ...env },
    killAfterMs: 30_000,
  })
  const code = await child.exited
  const stdout = child.text('stdout')
  if (code !== 0) throw new Error(`exit ${code}: ${child.output()}`)
  return JSON.parse(stdout) as Outcome
}

const dir = t.testdir({
  account: { token: 'jwt', 'ca.crt': (await createDevCertificates({ hosts: ['x'] })).ca },
  kubeconfig: JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
    users: [{ name: 'u', user: { token: 'jwt' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  }),
})

t.test('in a pod, serve starts without loading @kubernetes/client-node or @bufbuild', async (t) => {
  const outcome = await serveRecordingImports(['--cert-dir', join(dir, 'certs')], {
    SERVICE_ACCOUNT_DIR: join(dir, 'account'),
  })
  t.match(outcome, { code: 0, started: true, stderr: '' }, 'started with the reconciler')
  t.same(outcome.loaded, [], 'no module of the client or the CEL engine was resolved')
})

t.test('with a kubeconfig the client is loaded', async (t) => {
  const outcome = await serveRecordingImports(
    ['--cert-dir', join(dir, 'certs'), '--kubeconfig', join(dir, 'kubeconfig')],
    {},
  )
  t.match(outcome, { code: 0, started: true, stderr: '' })
  t.ok(
    outcome.loaded.some((url) => url.endsWith('/@kubernetes/client-node/dist/index.js')),
    `the client's entry point was resolved (${outcome.loaded.length} modules)`,
  )
})
