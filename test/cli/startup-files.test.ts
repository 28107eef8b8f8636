/**
 * `serve` with a file it cannot use, run in-process: exit 2 and one line naming the flag, the
 * value and what is wrong, before anything listens. The process-level cases (exit by itself,
 * listeners closed again) are in startup-failures.test.ts.
 */

import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import type { Test } from 'tap'
import { createDevCertificates } from '../../src/http/dev-certs.ts'
import { serveInProcess } from '../helpers/serve-in-process.ts'
import type { ServeOutcome } from '../helpers/serve-in-process.ts'

const SAMPLES = fileURLToPath(new URL('../../samples/objects', import.meta.url))

function serve(
  args: string[],
  env: Record<string, string> = {},
  serviceAccountDir?: string,
): Promise<ServeOutcome> {
  return serveInProcess(args, {
    env,
    ...(serviceAccountDir === undefined ? {} : { serviceAccountDir }),
  })
}

/** Exit 2, exactly this line on stderr, and no listener was ever opened. */
function refused(t: Test, outcome: ServeOutcome, line: string): void {
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

t.test('--cert-dir with a pair that can never serve: refused, whatever the key type', async (t) => {
  const { generateKeyPairSync } = await import('node:crypto')
  const pair = await createDevCertificates({ hosts: ['127.0.0.1'] }) // EC P-256
  const keys = {
    'an RSA key': generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
    'an Ed25519 key': generateKeyPairSync('ed25519').privateKey,
    'an EC P-384 key': generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey,
  }
  for (const [name, key] of Object.entries(keys)) {
    const dir = t.testdir({
      'tls.crt': pair.cert,
      'tls.key': key.export({ type: 'pkcs8', format: 'pem' }).toString(),
    })
    refused(
      t,
      await serve(['--cert-dir', dir, '--objects', SAMPLES]),
      `--cert-dir ${dir}: ${join(dir, 'tls.key')}: does not match tls.crt (${name} beside an EC P-256 certificate)`,
    )
  }
  // Of the same type but another key: refused the same way.
  const other = await createDevCertificates({ hosts: ['127.0.0.1'] })
  const dir = t.testdir({ 'tls.crt': pair.cert, 'tls.key': other.key })
  refused(
    t,
    await serve(['--cert-dir', dir, '--objects', SAMPLES]),
    `--cert-dir ${dir}: ${join(dir, 'tls.key')}: does not match tls.crt`,
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
    `--cert-dir ${half}: has tls.crt but no tls.key, and not from the development CA: remove ${join(half, 'tls.crt')} for new development certificates (or add its tls.key)`,
  )
  t.equal(await readFile(join(half, 'ca.crt'), 'utf8'), 'my ca', 'ca.crt kept')
  t.equal(await readFile(join(half, 'tls.crt'), 'utf8'), 'my certificate', 'tls.crt kept')
})

/** A kubeconfig whose current context reads `server` (nothing listens there: never contacted). */
function kubeconfig(options: {
  readonly server?: string
  readonly cluster?: string
  readonly currentContext?: string | null
}): string {
  const cluster = options.cluster ?? 'c'
  const current =
    options.currentContext === null ? '' : `current-context: ${options.currentContext ?? 'ctx'}\n`
  return (
    `apiVersion: v1\nkind: Config\n${current}` +
    `clusters:\n- name: ${cluster}\n  cluster:\n    server: ${options.server ?? 'https://127.0.0.1:1'}\n` +
    `contexts:\n- name: ctx\n  context:\n    cluster: ${cluster}\n    user: u\n` +
    `users:\n- name: u\n  user:\n    token: t\n`
  )
}

/** The API server the started service said it reads. */
function serverRead(outcome: ServeOutcome): string | undefined {
  const line = outcome.stdout
    .split('\n')
    .find((candidate) => candidate.includes('reading the cluster'))
  return line === undefined ? undefined : (JSON.parse(line) as { server?: string }).server
}

t.test('KUBECONFIG with several files: merged as kubectl merges them', async (t) => {
  const dir = t.testdir()
  const path = (name: string) => join(dir, name)
  await writeFile(path('a'), kubeconfig({ server: 'https://127.0.0.1:1' }))
  await writeFile(path('b'), kubeconfig({ server: 'https://127.0.0.1:2' }))
  await writeFile(
    path('no-context'),
    kubeconfig({ server: 'https://127.0.0.1:3', currentContext: null }),
  )
  await writeFile(path('other'), kubeconfig({ server: 'https://127.0.0.1:4', cluster: 'other' }))
  await writeFile(path('empty'), '')
  await writeFile(path('garbage'), 'clusters: [\n')
  await mkdir(path('dir'))
  const { execFileSync } = await import('node:child_process')
  execFileSync('mkfifo', [path('fifo')])
  const list = (...names: string[]) => names.map(path).join(':')

  const started: readonly (readonly [string, string])[] = [
    [list('a'), 'https://127.0.0.1:1'],
    [list('a', 'b'), 'https://127.0.0.1:1'], // the first to name cluster c wins
    [list('b', 'a'), 'https://127.0.0.1:2'],
    [list('missing', 'a'), 'https://127.0.0.1:1'], // a missing file is skipped
    [list('a', 'missing'), 'https://127.0.0.1:1'],
    [list('no-context', 'other'), 'https://127.0.0.1:3'], // context from the second, cluster c from the first
    [list('empty', 'b'), 'https://127.0.0.1:2'],
    [`${list('a')}::`, 'https://127.0.0.1:1'],
  ]
  for (const [value, server] of started) {
    const outcome = await serve(['--no-reconciler', '--cert-dir', join(dir, 'certs')], {
      KUBECONFIG: value,
    })
    t.equal(outcome.stderr, '', `KUBECONFIG=${value}: no error`)
    t.ok(outcome.started, `KUBECONFIG=${value}: started`)
    t.equal(serverRead(outcome), server, `KUBECONFIG=${value}: reads ${server}`)
  }

  const refusedWith: (readonly [string, string])[] = [
    [list('missing'), `KUBECONFIG ${list('missing')}: no such file`],
    [list('missing', 'gone'), `KUBECONFIG ${list('missing', 'gone')}: none of its 2 files exists`],
    [list('dir', 'a'), `KUBECONFIG ${path('dir')}: is a directory`],
    [list('a', 'fifo'), `KUBECONFIG ${path('fifo')}: not a regular file (a FIFO)`],
    ['/dev/zero', 'KUBECONFIG /dev/zero: not a regular file (a character device)'],
    [list('empty'), `KUBECONFIG ${list('empty')}: not a valid kubeconfig: no current cluster`],
    [
      list('no-context'),
      `KUBECONFIG ${list('no-context')}: not a valid kubeconfig: no current cluster`,
    ],
  ]
  // A long list is named by its ends: the reason stays in sight at the start of the line.
  const many = Array.from({ length: 40 }, (_, index) => `missing-${index}`)
  refusedWith.push([
    list(...many),
    `KUBECONFIG (40 files, ${path('missing-0')} … ${path('missing-39')}): none of its 40 files exists`,
  ])
  for (const [value, line] of refusedWith) {
    refused(t, await serve(['--cert-dir', join(dir, 'certs')], { KUBECONFIG: value }), line)
  }
  const garbage = await serve([], { KUBECONFIG: list('garbage', 'a') })
  t.equal(garbage.code, 2)
  t.match(
    garbage.stderr,
    new RegExp(`^mcp-admission: KUBECONFIG ${path('garbage')}: not a valid kubeconfig: .+\\n$`),
  )
  // --kubeconfig names one file, as kubectl's flag does: a list is one (missing) name.
  refused(
    t,
    await serve(['--kubeconfig', list('a', 'b')]),
    `--kubeconfig ${list('a', 'b')}: no such file`,
  )
})

t.test('in a pod without the service account files: exit 2 naming the file', async (t) => {
  const inPod = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }
  /** Files by name: their content, or `fifo` or `dir` for a FIFO or a directory of that name. */
  const accountDir = async (files: Record<string, string>) => {
    const dir = t.testdir()
    const { execFileSync } = await import('node:child_process')
    for (const [name, content] of Object.entries(files)) {
      if (content === 'fifo') execFileSync('mkfifo', [join(dir, name)])
      else if (content === 'dir') await mkdir(join(dir, name))
      else await writeFile(join(dir, name), content)
    }
    return dir
  }
  const rows: readonly (readonly [Record<string, string>, (dir: string) => string])[] = [
    [{}, (d) => `${d}/token: no such file; ${d}/ca.crt: no such file`],
    [{ token: 'jwt' }, (d) => `${d}/ca.crt: no such file`],
    [{ 'ca.crt': 'pem' }, (d) => `${d}/token: no such file`],
    [{ token: '', 'ca.crt': 'pem' }, (d) => `${d}/token: empty`],
    [{ token: '\n', 'ca.crt': 'pem' }, (d) => `${d}/token: empty`],
    [{ token: 'fifo', 'ca.crt': 'pem' }, (d) => `${d}/token: not a regular file (a FIFO)`],
    [{ token: 'jwt', 'ca.crt': 'dir' }, (d) => `${d}/ca.crt: is a directory`],
  ]
  for (const [files, problem] of rows) {
    const dir = await accountDir(files)
    refused(
      t,
      await serve(['--cert-dir', join(dir, 'certs')], inPod, dir),
      `in-cluster credentials (KUBERNETES_SERVICE_HOST is set): ${problem(dir)}`,
    )
  }
  const dir = await accountDir({ token: 'jwt', 'ca.crt': 'pem' })
  const outcome = await serve(['--no-reconciler', '--cert-dir', join(dir, 'certs')], inPod, dir)
  t.equal(outcome.stderr, '')
  t.ok(outcome.started, 'with both files it starts')
  t.equal(serverRead(outcome), 'https://10.0.0.1:443')
  const ipv6 = await serve(
    ['--no-reconciler', '--cert-dir', join(dir, 'certs')],
    { ...inPod, KUBERNETES_SERVICE_HOST: 'fd00::1' },
    dir,
  )
  t.equal(serverRead(ipv6), 'https://[fd00::1]:443')
})

t.test('every bad value is reported at once, the log level among them', async (t) => {
  const outcome = await serve(['--log-level', 'loud', '--keep-alive-timeout', '1s'], {
    MCP_ADMISSION_DRAIN_TIMEOUT: 'x',
    MCP_ADMISSION_RECONCILER_ONLY: 'no',
  })
  t.equal(outcome.code, 2)
  t.equal(outcome.started, false)
  t.same(outcome.stderr.split('\n'), [
    'mcp-admission: invalid configuration:',
    '  MCP_ADMISSION_DRAIN_TIMEOUT: must be a duration such as 500ms, 5s or 1m30s, got "x"',
    '  --keep-alive-timeout: must be at least 90000 ms, got "1s"',
    '  MCP_ADMISSION_RECONCILER_ONLY: must be true or false (also 1, 0, t, f, TRUE, FALSE, True, False), got "no"',
    '  --log-level: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    '',
  ])
})

t.test('a value set by a variable is named by the variable when it cannot be used', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'certs')
  await writeFile(file, '')
  refused(
    t,
    await serve([], { MCP_ADMISSION_CERT_DIR: file }),
    `MCP_ADMISSION_CERT_DIR ${file}: not a directory`,
  )
  refused(
    t,
    await serve(['--cert-dir', join(dir, 'c')], { MCP_ADMISSION_CLIENT_CA: join(dir, 'ca.pem') }),
    `MCP_ADMISSION_CLIENT_CA ${join(dir, 'ca.pem')}: no such file`,
  )
})
