/**
 * The TLS files a kubeconfig names (`certificate-authority`, `client-certificate`, `client-key`)
 * are read as every other file is, bounded: a FIFO or a character device stops `check`, `audit`
 * and `serve` at once with one line naming the field and file, exit 2, before anything listens.
 * Read by the client instead, a FIFO blocked the event loop for ever (SIGTERM included) and
 * `/dev/zero` grew memory without end, so the commands run in one child process here, watched:
 * killed past a deadline or a resident size, either being a failure.
 */

import { execFileSync, spawn } from 'node:child_process'
import { readFile, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { KUBECONFIG_TLS_FILE_MAX_BYTES } from '../../src/cluster/kubeconfig-files.ts'
import { runCli } from '../helpers/cli.ts'
import { kubeconfigText } from '../helpers/kubeconfig.ts'
import { freePort } from '../helpers/ports.ts'

const CHILD = fileURLToPath(new URL('../helpers/cli-runs-child.ts', import.meta.url))
/** Far more than the refused starts take (a few seconds on a busy machine), less than tap's timeout. */
const DEADLINE_MS = 30_000
/** The refused starts stay well under this; reading `/dev/zero` passes it within a second. */
const MAX_RSS_BYTES = 400 * 1024 * 1024

interface Outcome {
  readonly code: number
  readonly stderr: string
  readonly started?: boolean
}

/**
 * Each command line's outcome, run in one child SIGKILLed past the deadline or the resident bound
 * (outcomes missing then), and the largest resident size seen (VmHWM).
 */
async function runWatched(
  runs: readonly (readonly string[])[],
): Promise<{ readonly outcomes: Outcome[]; readonly peakRssBytes: number; killed: string }> {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(runs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    // Nothing of the runner's that would point it at a cluster.
    env: { PATH: process.env['PATH'] ?? '' },
  })
  const stdout: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
  let peakRssBytes = 0
  let killed = ''
  const watch = setInterval(() => {
    void readFile(`/proc/${child.pid}/status`, 'utf8').then(
      (status) => {
        const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0)
        peakRssBytes = Math.max(peakRssBytes, kib * 1024)
        if (peakRssBytes > MAX_RSS_BYTES && child.kill('SIGKILL')) killed = 'resident size'
      },
      () => undefined, // exited between two looks
    )
  }, 20)
  const deadline = setTimeout(() => {
    if (child.kill('SIGKILL')) killed = 'deadline'
  }, DEADLINE_MS)
  await new Promise((resolve) => child.on('close', resolve))
  clearInterval(watch)
  clearTimeout(deadline)
  const lines = Buffer.concat(stdout).toString('utf8').split('\n').filter(Boolean)
  return { outcomes: lines.map((line) => JSON.parse(line) as Outcome), peakRssBytes, killed }
}

const OWNERS = {
  'certificate-authority': 'cluster "c"',
  'client-certificate': 'user "u"',
  'client-key': 'user "u"',
} as const
type Field = keyof typeof OWNERS

/** A kubeconfig naming `path` as `field`, any TLS file read before it being a regular one. */
function kubeconfigNaming(dir: string, field: Field, path: string): string {
  const user: Record<string, unknown> = { token: 'static-token' }
  const cluster: Record<string, unknown> = {}
  // The CA is read first, then the certificate, then the key; what a file holds is not parsed
  // before the start fails.
  if (field === 'client-key') user['client-certificate'] = join(dir, 'client.crt')
  if (field === 'certificate-authority') cluster[field] = path
  else user[field] = path
  // https: a CA with insecure-skip-tls-verify would be refused before any file is read.
  return kubeconfigText('https://127.0.0.1:1', { cluster, user })
}

t.test('a FIFO or /dev/zero as each TLS file: one line, exit 2, at once', async (t) => {
  const dir = t.testdir({ 'client.crt': 'not parsed\n' })
  const fifo = join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  const kinds = [
    ['fifo', fifo, 'not a regular file (a FIFO)'],
    ['zero', '/dev/zero', 'not a regular file (a character device)'],
  ] as const
  const cases: { args: string[]; line: string }[] = []
  for (const field of Object.keys(OWNERS) as Field[]) {
    for (const [kind, path, reason] of kinds) {
      const kubeconfig = join(dir, `${field}-${kind}`)
      await writeFile(kubeconfig, kubeconfigNaming(dir, field, path))
      const line = `--kubeconfig ${kubeconfig}: ${OWNERS[field]}: ${field} ${path}: ${reason}`
      cases.push({ args: ['check', '--kubeconfig', kubeconfig, 'samples/objects'], line })
      if (field === 'client-key' && kind === 'fifo') {
        cases.push({ args: ['audit', '--kubeconfig', kubeconfig], line })
      }
      if (field === 'certificate-authority' && kind === 'zero') {
        const ports = [String(await freePort()), String(await freePort())]
        const serve = ['serve', '--host', '127.0.0.1', '--port', ports[0] as string]
        serve.push('--probe-host', '127.0.0.1', '--probe-port', ports[1] as string)
        serve.push('--cert-dir', join(dir, 'certs'), '--kubeconfig', kubeconfig)
        cases.push({ args: serve, line })
      }
    }
  }
  const { outcomes, peakRssBytes, killed } = await runWatched(cases.map(({ args }) => args))
  t.equal(killed, '', 'the child was not killed (blocked, or growing)')
  t.ok(peakRssBytes < MAX_RSS_BYTES, `memory stayed bounded (${peakRssBytes} bytes)`)
  cases.forEach(({ args, line }, index) => {
    t.match(outcomes[index], { code: 2, stderr: `mcp-admission: ${line}\n` }, args.join(' '))
  })
  const served = outcomes[cases.findIndex(({ args }) => args[0] === 'serve')]
  t.equal(served?.started, false, 'serve did not start')
})

t.test('a missing or oversized TLS file: one line naming field and file', async (t) => {
  const dir = t.testdir({ 'client.crt': 'not parsed\n' })
  const large = join(dir, 'large.crt')
  await writeFile(large, '')
  await truncate(large, KUBECONFIG_TLS_FILE_MAX_BYTES + 1)
  await writeFile(join(dir, 'missing'), kubeconfigNaming(dir, 'client-key', join(dir, 'gone')))
  await writeFile(join(dir, 'large'), kubeconfigNaming(dir, 'certificate-authority', large))
  const missing = await runCli(['check', '--kubeconfig', join(dir, 'missing'), 'samples/objects'])
  t.match(missing, {
    code: 2,
    stderr: `mcp-admission: --kubeconfig ${join(dir, 'missing')}: user "u": client-key ${join(dir, 'gone')}: no such file\n`,
  })
  const oversized = await runCli(['audit', '--kubeconfig', join(dir, 'large')])
  t.match(oversized, {
    code: 2,
    stderr: `mcp-admission: --kubeconfig ${join(dir, 'large')}: cluster "c": certificate-authority ${large}: larger than 1 MiB (${KUBECONFIG_TLS_FILE_MAX_BYTES + 1} bytes)\n`,
  })
})
