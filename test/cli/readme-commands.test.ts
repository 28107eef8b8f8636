/**
 * The README's "Try it" block runs as written on a fresh clone:
 *
 * - its server lines (`curl …`) against `serve` started as `npm start` starts it, from a directory
 *   laid out like a fresh clone (certs/ holding only what the repository tracks there), so the
 *   first README command is proven on the state a new user has;
 * - each `npm run -s cli -- …` line (as `node src/main.ts …`, what the script runs, from the
 *   sources under test), which must end as the README says: allowed (0), or denied (1) where its
 *   comment says so; never a usage error or a crash.
 */

import { spawn, spawnSync, execFileSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { freePort } from '../helpers/ports.ts'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const README = readFileSync(`${REPO}README.md`, 'utf8')

/** The first ```sh block after the "Try it" heading. */
function tryItBlock(): string {
  const section = README.slice(README.indexOf('## Try it'))
  return /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
}

/** The block's server part: everything before its first CLI line. */
function serverScript(): string {
  const block = tryItBlock()
  const cli = block.indexOf('\nnpm run -s cli -- ')
  return cli < 0 ? block : block.slice(0, cli)
}

function cliLines(): string[] {
  return tryItBlock()
    .split('\n')
    .filter((line) => line.startsWith('npm run -s cli -- '))
}

/** A directory laid out like a fresh clone for `serve`: tracked certs/ files and the samples. */
function freshCloneDir(root: string): string {
  const tracked = execFileSync('git', ['ls-files', 'certs'], { cwd: REPO, encoding: 'utf8' })
  mkdirSync(join(root, 'certs'))
  for (const path of tracked.split('\n').filter((line) => line !== '')) {
    cpSync(join(REPO, path), join(root, path))
  }
  symlinkSync(join(REPO, 'samples'), join(root, 'samples'))
  return root
}

async function waitReady(probePort: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline && child.exitCode === null) {
    const ready = await fetch(`http://127.0.0.1:${probePort}/readyz`).then(
      (response) => response.ok,
      () => false,
    )
    if (ready) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`serve was not ready within 30 s (exit ${String(child.exitCode)})`)
}

t.test('the server lines, against `npm start` on a fresh clone', async (t) => {
  const dir = freshCloneDir(t.testdir())
  const [port, probePort] = [await freePort(), await freePort()]
  // No cluster around: the embedded default, as on a new user's machine.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => name !== 'KUBECONFIG' && !name.startsWith('KUBERNETES_SERVICE_'),
    ),
  )
  const stderr: string[] = []
  // What `npm start` runs, from the sources under test, with the ports made free ones.
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      join(REPO, 'src/main.ts'),
      'serve',
      '--port',
      `${port}`,
      '--probe-port',
      `${probePort}`,
    ],
    { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] },
  )
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  await waitReady(probePort, child).catch((error: unknown) => {
    t.fail(`${String(error)}: ${stderr.join('')}`)
  })

  const script = serverScript()
    .replaceAll('127.0.0.1:9443', `127.0.0.1:${port}`)
    .replaceAll('127.0.0.1:8081', `127.0.0.1:${probePort}`)
  t.match(script, /curl/, 'the README shows the server')
  const result = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
  })
  t.equal(result.status, 0, `the lines succeed: ${result.stderr}`)
  t.match(result.stdout, /"allowed":true/, 'the raw review response')
  t.match(
    result.stdout,
    /true \[\{"op":"add","path":"\/metadata\/annotations[^\]]*toolhive\.stacklok\.dev(\/|~1)content-checksum/,
    'the decoded verdict and patch',
  )
  t.match(result.stdout, /controller_runtime_webhook_requests_total\{[^}]*\} [1-9]/, 'the metrics')

  child.kill('SIGTERM')
  t.equal(await exited, 0, 'stops cleanly on SIGTERM')
})

const lines = cliLines()

t.ok(lines.length >= 4, 'the README shows the CLI')
for (const line of lines) {
  t.test(line, async (t) => {
    const [command = '', comment] = line.split(/\s+#\s+/)
    const [argv = '', input] = command.replace('npm run -s cli -- ', '').split(' < ')
    const result = spawnSync(process.execPath, ['src/main.ts', ...argv.trim().split(/\s+/)], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 60_000,
      ...(input ? { input: readFileSync(`${REPO}${input.trim()}`) } : {}),
    })
    const expected = comment?.startsWith('denied') ? 1 : 0
    t.equal(result.status, expected, `exit ${expected}: ${result.stderr}`)
    t.notMatch(result.stderr, /\n\s+at /, 'no stack trace')
    t.ok(result.stdout.length > 0, 'prints something')
  })
}
