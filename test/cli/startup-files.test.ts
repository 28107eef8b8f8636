/**
 * `serve` with a file it cannot use, run in-process: exit 2 and one line naming the flag, the
 * value and what is wrong, before anything listens. The process-level cases (exit by itself,
 * listeners closed again) are in startup-failures.test.ts.
 */

import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import type { Test } from 'tap'
import { run } from '../../src/cli/program.ts'
import { createDevCertificates } from '../../src/http/dev-certs.ts'
import { freePort } from '../helpers/ports.ts'

const SAMPLES = fileURLToPath(new URL('../../samples/objects', import.meta.url))

interface Outcome {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  /** The service started (and was stopped again at once): the start did not fail. */
  readonly started: boolean
}

async function serve(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  const [port, probePort] = [await freePort(), await freePort()]
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const out: string[] = []
  const err: string[] = []
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString('utf8')))
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString('utf8')))
  let started = false
  const code = await run(
    [
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--probe-host',
      '127.0.0.1',
      '--probe-port',
      String(probePort),
      '--shutdown-delay',
      '0s',
      ...args,
    ],
    {
      stdout,
      stderr,
      stdin: Readable.from(['']),
      env,
      runUntilSignal: (close) => {
        started = true
        void close()
      },
    },
  )
  return { code, stdout: out.join(''), stderr: err.join(''), started }
}

/** Exit 2, exactly this line on stderr, and no listener was ever opened. */
function refused(t: Test, outcome: Outcome, line: string): void {
  t.equal(outcome.started, false, 'not started')
  t.equal(outcome.code, 2, 'exit 2')
  t.equal(outcome.stderr, `mcp-admission: ${line}\n`, 'one line naming the flag and value')
  t.notMatch(outcome.stdout, /Server listening at/, 'before anything listens')
}

t.test('--kubeconfig missing, a directory, not a kubeconfig, or with no cluster', async (t) => {
  const dir = t.testdir()
  const missing = join(dir, 'missing')
  refused(t, await serve(['--kubeconfig', missing]), `--kubeconfig ${missing}: no such file`)
  refused(t, await serve(['--kubeconfig', dir]), `--kubeconfig ${dir}: is a directory`)
  refused(t, await serve([], { KUBECONFIG: dir }), `KUBECONFIG ${dir}: is a directory`)
  const empty = join(dir, 'empty')
  await writeFile(empty, 'apiVersion: v1\nkind: Config\n')
  refused(
    t,
    await serve(['--kubeconfig', empty]),
    `--kubeconfig ${empty}: not a valid kubeconfig: no current cluster`,
  )
})

t.test('--client-ca that is not a CA bundle', async (t) => {
  const dir = t.testdir()
  const certDir = join(dir, 'certs')
  const leaf = (await createDevCertificates()).cert
  const file = join(dir, 'client-ca.pem')
  await writeFile(file, 'not a certificate\n')
  refused(
    t,
    await serve(['--cert-dir', certDir, '--client-ca', file]),
    `--client-ca ${file}: no PEM certificate in it`,
  )
  await writeFile(file, leaf)
  refused(
    t,
    await serve(['--cert-dir', certDir, '--client-ca', file]),
    `--client-ca ${file}: no CA certificate in it (1 certificate, none with basicConstraints CA:TRUE)`,
  )
  await writeFile(
    file,
    `${(await createDevCertificates()).ca}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
  )
  const garbled = await serve(['--cert-dir', certDir, '--client-ca', file])
  t.equal(garbled.code, 2)
  t.match(
    garbled.stderr,
    new RegExp(`^mcp-admission: --client-ca ${file}: block 2 is not a valid certificate: .+\\n$`),
  )
})

t.test('--cert-dir that is a file: in the embedded default and in a pod', async (t) => {
  const file = join(t.testdir(), 'certs')
  await writeFile(file, '')
  refused(t, await serve(['--cert-dir', file]), `--cert-dir ${file}: not a directory`)
  // In a pod nothing is generated, but a file is no directory to watch for a pair either.
  refused(
    t,
    await serve(['--cert-dir', file, '--objects', SAMPLES], {
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
    }),
    `--cert-dir ${file}: not a directory`,
  )
})

t.test('--cert-dir: no tree is created, no file of the user replaced', async (t) => {
  const dir = t.testdir()
  const deep = join(dir, 'a', 'b', 'certs')
  refused(
    t,
    await serve(['--cert-dir', deep]),
    `--cert-dir ${deep}: no such directory ${join(dir, 'a', 'b')} (only the last directory of the path is created)`,
  )
  const half = join(dir, 'half')
  await mkdir(half)
  await writeFile(join(half, 'ca.crt'), 'my ca')
  await writeFile(join(half, 'tls.crt'), 'my certificate')
  refused(
    t,
    await serve(['--cert-dir', half]),
    `--cert-dir ${half}: has ca.crt and tls.crt but no tls.key`,
  )
  t.equal(await readFile(join(half, 'ca.crt'), 'utf8'), 'my ca', 'ca.crt kept')
  t.equal(await readFile(join(half, 'tls.crt'), 'utf8'), 'my certificate', 'tls.crt kept')
})
