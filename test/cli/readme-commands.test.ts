/**
 * The README's "Try it" block runs as written on a fresh clone:
 *
 * - its server lines (`curl …`) against `serve` started as `npm start` starts it, from a directory
 *   laid out like a fresh clone (certs/ holding only what the repository tracks there), so the
 *   first README command is proven on the state a new user has;
 * - each `npm run -s cli -- …` line, run in-process through `run` (what `node src/main.ts …`, the
 *   script, calls with the process's streams), which must end as the README says: allowed (0), or
 *   denied (1) where its comment says so; never a usage error or a crash;
 * - the first denied line once more as the real process (`node src/main.ts …` from the sources under
 *   test), for what main.ts adds: the exit code of the process, its stdout and stderr. (The server
 *   part above is the process that exits 0.)
 */

import { spawnSync, execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { startServe } from '../helpers/serve-process.ts'

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

t.test('the server lines, against `npm start` on a fresh clone', async (t) => {
  const dir = freshCloneDir(t.testdir())
  // What `npm start` runs, from the sources under test, with the ports made free ones. No
  // cluster around (none is passed on): the embedded default, as on a new user's machine.
  const service = await startServe({
    nodeFlags: ['--expose-gc'],
    loopback: false,
    logLevel: null,
    cwd: dir,
    readyTimeoutMs: 30_000,
  })
  t.teardown(service.kill)
  const { port, probePort } = service

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

  t.equal(await service.stop('SIGTERM'), 0, `stops cleanly on SIGTERM: ${service.text('stderr')}`)
})

const lines = cliLines()
/** A line as the command line it stands for: its arguments, its input file, the exit expected. */
function parse(line: string) {
  const [command = '', comment] = line.split(/\s+#\s+/)
  const [argv = '', input] = command.replace('npm run -s cli -- ', '').split(' < ')
  return {
    args: argv.trim().split(/\s+/),
    input: input?.trim(),
    expected: comment?.startsWith('denied') ? 1 : 0,
  }
}

// The README's paths are relative to the repository.
process.chdir(REPO)

t.ok(lines.length >= 4, 'the README shows the CLI')
for (const line of lines) {
  t.test(line, async (t) => {
    const { args, input, expected } = parse(line)
    const result = await runCli(args, input ? readFileSync(`${REPO}${input}`, 'utf8') : '')
    t.equal(result.code, expected, `exit ${expected}: ${result.stderr}`)
    t.notMatch(result.stderr, /\n\s+at /, 'no stack trace')
    t.ok(result.stdout.length > 0, 'prints something')
  })
}

/** The README's output block after the first `check`: the command it shows, and what it prints. */
function shownOutput(): { command: string; printed: string } {
  const shown = /`(npm run -s cli -- check [^`]*)` prints[^`]*```text\n([\s\S]*?)```/.exec(README)
  return { command: shown?.[1] ?? '', printed: shown?.[2] ?? '' }
}

t.test('the output the README shows is what check prints', async (t) => {
  const { command, printed } = shownOutput()
  t.ok(lines.includes(command), `the Try it block runs it: ${command}`)
  const result = await runCli(parse(command).args)
  t.equal(result.code, 0)
  // stdout then stderr, as a terminal shows them: the report, then the line of information.
  t.equal(`${result.stdout}${result.stderr}`, printed)
})

const denied = lines.find((line) => parse(line).expected === 1)
t.ok(denied, 'the README shows a denial')
t.test(`as the process: ${denied ?? ''}`, async (t) => {
  const { args, input } = parse(denied ?? '')
  const result = spawnSync(process.execPath, ['src/main.ts', ...args], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 60_000,
    ...(input ? { input: readFileSync(`${REPO}${input}`) } : {}),
  })
  t.equal(result.status, 1, `exit 1: ${result.stderr}`)
  t.notMatch(result.stderr, /\n\s+at /, 'no stack trace')
  t.ok(result.stdout.length > 0, 'prints something')
})
