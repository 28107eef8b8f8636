/**
 * Child processes of the end-to-end suite: output kept in a log file (printed when a start
 * fails), stopped with SIGTERM then SIGKILL, and killed when the test process exits whatever the
 * reason, so no etcd or API server outlives a run. mcp-admission itself is started by
 * test/helpers/serve-process.ts, as every test starts it, and held here the same way.
 */

import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ServeProcess } from '../../helpers/serve-process.ts'

/** How long `stop` waits after SIGTERM before SIGKILL. */
const GRACE_MS = 10_000

const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

export interface Managed {
  readonly name: string
  readonly logFile: string
  readonly child: ChildProcess
  /** Resolves with the exit code (or signal) once the process has ended. */
  readonly exited: Promise<number | string>
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>
  /** The last lines of the log, for failure messages. */
  tail(lines?: number): Promise<string>
}

export function startProcess(
  name: string,
  command: string,
  args: readonly string[],
  options: { readonly logFile: string; readonly env?: NodeJS.ProcessEnv; readonly cwd?: string },
): Managed {
  const log = createWriteStream(options.logFile, { flags: 'a' })
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: options.env ?? process.env,
    cwd: options.cwd,
  })
  child.stdout.pipe(log, { end: false })
  child.stderr.pipe(log, { end: false })
  live.add(child)
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child)
      resolve(code ?? signal ?? 'unknown')
    })
    child.once('error', (error) => {
      live.delete(child)
      log.write(`\n[harness] ${name} failed to start: ${error.message}\n`)
      resolve('spawn error')
    })
  })
  return {
    name,
    logFile: options.logFile,
    child,
    exited,
    async stop(graceMs = GRACE_MS) {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      // The grace timer is cancelled once the child exits: left running, it kept every e2e file's
      // process alive for the whole grace period after its last test.
      const grace = new AbortController()
      const outcome = await Promise.race([
        exited,
        sleep(graceMs, 'timeout' as const, { signal: grace.signal }).catch(() => 'exited' as const),
      ])
      grace.abort()
      if (outcome === 'timeout') {
        child.kill('SIGKILL')
        await exited
      }
    },
    tail: (lines) => tail(options.logFile, lines),
  }
}

/** `service`, started with `logFile` (serve-process's option), as a Managed. */
export function managedServe(name: string, service: ServeProcess, logFile: string): Managed {
  const { child } = service
  return {
    name,
    logFile,
    child,
    exited: service.exited.then((code) => code ?? child.signalCode ?? 'unknown'),
    async stop(graceMs = GRACE_MS) {
      await service.stop('SIGTERM', graceMs)
    },
    tail: (lines) => tail(logFile, lines),
  }
}

async function tail(logFile: string, lines = 40): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '')
  return text.split('\n').slice(-lines).join('\n')
}

/** Polls `check` until it returns a value, the process dies, or the time runs out. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  options: { readonly timeoutMs: number; readonly process?: Managed; readonly intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs
  let lastError = ''
  for (;;) {
    const proc = options.process
    if (proc && (proc.child.exitCode !== null || proc.child.signalCode !== null)) {
      throw new Error(`${proc.name} exited while waiting for ${what}:\n${await proc.tail()}`)
    }
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error)
    }
    if (Date.now() > deadline) {
      const tail = proc ? `\n${proc.name} log:\n${await proc.tail()}` : ''
      throw new Error(
        `timed out after ${options.timeoutMs} ms waiting for ${what} ${lastError}${tail}`,
      )
    }
    await sleep(options.intervalMs ?? 200)
  }
}
