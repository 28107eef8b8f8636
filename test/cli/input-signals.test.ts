/**
 * The real process (src/main.ts) reading inputs that never end or never come. A FIFO given as an
 * object or review file is read as kubectl reads it: a real pipe (`check <(printf …)`) and a slow
 * writer give the normal result, and with no writer the command waits, as a pipeline would, until
 * SIGTERM ends it at once. A device ends at the size bound with one line and bounded memory;
 * configuration that is a FIFO (`--crds`, a serving certificate) ends the command at once. Each
 * child is watched (a deadline, a resident bound) and SIGKILLed past either, a failure.
 */

import { spawn } from 'node:child_process'
import type { ChildProcessByStdio } from 'node:child_process'
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync, readlinkSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { OBJECT_FILE_MAX_BYTES } from '../../src/cluster/load-files.ts'
import { REVIEW_MAX_BYTES } from '../../src/cli/review.ts'
import { MiB } from '../../src/files/bounded-read.ts'
import { freePort } from '../helpers/ports.ts'
import { SOURCE_MAIN } from '../helpers/serve-process.ts'

/** Far longer than an exit on SIGTERM takes on a busy machine, far shorter than any hang. */
const EXIT_WITHIN_MS = 5_000
/** Past this a run is a hang: killed, and a failure. */
const DEADLINE_MS = 40_000
/** Reading to the 64 MiB bound stays well under this; reading `/dev/zero` unbounded passes it. */
const MAX_RSS_BYTES = 400 * MiB

const REVIEW = 'samples/reviews/runconfig-configmap-create.json'
const CONFIG_MAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: piped\n'

interface Ended {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly peakRssBytes: number
  /** Why the watcher killed it, if it did. */
  readonly killed: string
}

interface Running {
  readonly pid: number
  /** Whether the process holds `path` open now. */
  readonly holds: (path: string) => boolean
  readonly ended: Promise<Ended>
  readonly terminate: () => void
}

/** `node src/main.ts ARGS` (or `bash -c SCRIPT` with the same node as $0), watched. */
function start(
  argv: readonly string[],
  { stdin = 'ignore', shell }: { stdin?: 'ignore' | 'pipe' | number; shell?: string } = {},
): Running {
  const [command, args] =
    shell === undefined
      ? [process.execPath, [SOURCE_MAIN, ...argv]]
      : ['bash', ['-c', shell, process.execPath, SOURCE_MAIN]]
  const child = spawn(command, args, {
    stdio: [stdin, 'pipe', 'pipe'],
    // Nothing of the runner's that would point it at a cluster.
    env: { PATH: process.env['PATH'] ?? '' },
  }) as ChildProcessByStdio<Writable | null, Readable, Readable>
  const out: Buffer[] = []
  const err: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
  let peakRssBytes = 0
  let killed = ''
  const watch = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
      peakRssBytes = Math.max(
        peakRssBytes,
        Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024,
      )
      if (peakRssBytes > MAX_RSS_BYTES && child.kill('SIGKILL')) killed = 'resident size'
    } catch {
      // exited between two looks
    }
  }, 20)
  const deadline = setTimeout(() => {
    if (child.kill('SIGKILL')) killed = 'deadline'
  }, DEADLINE_MS)
  const ended = new Promise<Ended>((resolve) => {
    child.on('close', (code, signal) => {
      clearInterval(watch)
      clearTimeout(deadline)
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        peakRssBytes,
        killed,
      })
    })
  })
  const pid = child.pid ?? 0
  const holds = (path: string): boolean => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === path
        } catch {
          return false
        }
      })
    } catch {
      return false // exited
    }
  }
  return { pid, holds, ended, terminate: () => child.kill('SIGTERM') }
}

/** Resolves once the process holds `path` open; rejects, with its output, if it ends first. */
async function readingOf(running: Running, path: string): Promise<void> {
  let ended: Ended | undefined
  void running.ended.then((outcome) => (ended = outcome))
  while (!running.holds(path)) {
    if (ended !== undefined)
      throw new Error(`ended before reading ${path}: ${JSON.stringify(ended)}`)
    await sleep(20)
  }
}

/** SIGTERM now; the outcome, and how long the exit took. */
async function terminated(running: Running): Promise<Ended & { readonly exitMs: number }> {
  const signalled = performance.now()
  running.terminate()
  const outcome = await running.ended
  return { ...outcome, exitMs: performance.now() - signalled }
}

function fifoIn(dir: string, name: string): string {
  const path = join(dir, name)
  execFileSync('mkfifo', [path])
  return path
}

t.test(
  'a FIFO with no writer, or standard input never closed, is waited on; SIGTERM ends the wait at once',
  async (t) => {
    const dir = t.testdir()
    const fifo = fifoIn(dir, 'objects.yaml')
    const port = String(await freePort())
    const probePort = String(await freePort())
    const commands = [
      ['check', fifo],
      ['check', '--objects', fifo, 'samples/objects'],
      ['review', fifo],
      ['serve', '--host', '127.0.0.1', '--port', port, '--probe-host', '127.0.0.1'],
    ]
    commands[3]?.push(
      '--probe-port',
      probePort,
      '--cert-dir',
      join(dir, 'certs'),
      '--objects',
      fifo,
    )
    const runs = commands.map((args) => ({ args, running: start(args) }))
    // Standard input open and never written: its read starts with the others'.
    runs.push({ args: ['check', '-'], running: start(['check', '-'], { stdin: 'pipe' }) })
    for (const { running } of runs.slice(0, commands.length)) await readingOf(running, fifo)
    for (const { args, running } of runs) {
      const outcome = await terminated(running)
      t.equal(outcome.killed, '', `${args[0]}: not killed`)
      t.equal(outcome.signal, 'SIGTERM', `${args.join(' ')}: ended by the signal`)
      t.ok(outcome.exitMs < EXIT_WITHIN_MS, `exited ${Math.round(outcome.exitMs)} ms after`)
    }
  },
)

t.test('a pipe with a writer gives the normal result, however slow the writer', async (t) => {
  const dir = t.testdir()
  const fifo = fifoIn(dir, 'slow.yaml')
  const substituted = start([], {
    shell: `exec "$0" "$1" check <(printf '${CONFIG_MAP.replaceAll('\n', '\\n')}') samples/objects`,
  })
  const review = start([], { shell: `exec "$0" "$1" review <(cat ${REVIEW})` })
  const slow = start(['check', fifo])
  const writer = await open(fifo, 'w') // once the reader has it open
  await writer.write(CONFIG_MAP.slice(0, 20))
  await sleep(1_500)
  await writer.write(CONFIG_MAP.slice(20))
  await writer.close()
  const admitted = { code: 0, stdout: /admitted ConfigMap default\/piped: unchanged/ }
  t.match(await substituted.ended, admitted, 'check <(printf …)')
  t.match(await slow.ended, admitted, 'a FIFO written slowly')
  t.match(await review.ended, { code: 0, stdout: /"allowed": true/ }, 'review <(cat …)')
})

t.test('a device ends at the bound: one line, exit 2, memory bounded', async (t) => {
  const zero = await open('/dev/zero', 'r')
  t.teardown(() => zero.close())
  const runs = [
    { run: start(['check', '/dev/zero']), line: '/dev/zero', bound: OBJECT_FILE_MAX_BYTES },
    { run: start(['check', '/dev/urandom']), line: '/dev/urandom', bound: OBJECT_FILE_MAX_BYTES },
    { run: start(['review', '/dev/zero']), line: '/dev/zero', bound: REVIEW_MAX_BYTES },
    {
      run: start(['check', '-'], { stdin: zero.fd }),
      line: 'standard input',
      bound: OBJECT_FILE_MAX_BYTES,
    },
  ]
  for (const { run, line, bound } of runs) {
    const outcome = await run.ended
    t.equal(outcome.killed, '', 'neither blocked nor growing')
    t.equal(outcome.code, 2)
    t.equal(outcome.stderr, `mcp-admission: ${line}: larger than ${bound / MiB} MiB\n`)
    t.ok(outcome.peakRssBytes < MAX_RSS_BYTES, `memory bounded (${outcome.peakRssBytes} bytes)`)
  }
})

t.test('configuration that is a FIFO ends the command at once, with one line', async (t) => {
  const dir = t.testdir({ crds: {}, certs: { 'tls.key': 'not read\n' } })
  const inCrds = fifoIn(dir, 'crds/crds.yaml')
  const certificate = fifoIn(dir, 'certs/tls.crt')
  const serve = ['serve', '--host', '127.0.0.1', '--port', String(await freePort())]
  serve.push('--probe-host', '127.0.0.1', '--probe-port', String(await freePort()))
  const runs = [
    [
      ['check', '--crds', join(dir, 'crds'), 'samples/objects'],
      `${inCrds}: not a regular file (a FIFO)`,
    ],
    [['check', '--crds', inCrds, 'samples/objects'], `${inCrds}: not a regular file (a FIFO)`],
    [
      [...serve, '--cert-dir', join(dir, 'certs')],
      `--cert-dir ${join(dir, 'certs')}: ${certificate}: not a regular file (a FIFO)`,
    ],
  ] as const
  const started = performance.now()
  const outcomes = await Promise.all(runs.map(([args]) => start(args).ended))
  runs.forEach(([args, line], index) => {
    t.match(
      outcomes[index],
      { killed: '', code: 2, stderr: `mcp-admission: ${line}\n` },
      args.join(' '),
    )
  })
  t.ok(performance.now() - started < DEADLINE_MS / 2, 'at once')
})
