/**
 * Runs a kubeconfig's exec credential plugin as a bounded child process, without blocking the
 * event loop: its output is bounded, and a run that does not end in time, or that the caller
 * stops (shutdown), is ended. The plugin runs in a process group of its own (`detached`), so
 * ending it ends whatever it started too (a shell script's `sleep`, a helper), and no signal
 * meant for this process (a terminal's Ctrl-C) reaches it: `endPluginProcesses` is how this
 * process's own end takes them along (main.ts calls it on exit and on a signal).
 *
 * client-node runs a plugin with `spawn` too, but with no time limit and nothing to end it: a
 * plugin that never answers held every request, and outlived the process.
 */

import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { MiB } from '../files/bounded-read.ts'

/** An ExecCredential, a client certificate and key included, is some KiB; this is far above. */
const STDOUT_MAX_BYTES = MiB
/** The end of stderr is kept for a failure's message (a plugin's error is its last line). */
const STDERR_KEPT_BYTES = 4096

export interface PluginRun {
  readonly command: string
  readonly args: readonly string[]
  /** The plugin's whole environment. */
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
  /** Ends the run (shutdown): the plugin's processes are ended and the run rejects. */
  readonly signal?: AbortSignal | undefined
}

export interface PluginOutput {
  readonly stdout: string
  /** Its last KiB at most. */
  readonly stderr: string
}

/** A run that failed; the message says how, in the plugin's terms, and `stderr` holds its end. */
export class PluginError extends Error {
  override name = 'PluginError'
  readonly stderr: string
  constructor(message: string, stderr = '') {
    super(message)
    this.stderr = stderr
  }
}

/** Every plugin process group still running, to end with this process. */
const running = new Set<ChildProcess>()

/** Ends every running plugin with everything it started; synchronous, for an exit handler. */
export function endPluginProcesses(): void {
  for (const child of running) endGroup(child)
}

/** Runs the plugin to its end; its stdout when it exits 0, a PluginError otherwise. */
export function runPlugin(run: PluginRun): Promise<PluginOutput> {
  return new Promise((resolve, reject) => {
    if (run.signal?.aborted) {
      reject(new PluginError('not run: shutting down'))
      return
    }
    const child = spawn(run.command, [...run.args], {
      env: run.env,
      // No stdin: the plugin is told it is not interactive (KUBERNETES_EXEC_INFO).
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      windowsHide: true,
    })
    running.add(child)
    const stdout: Buffer[] = []
    let stdoutBytes = 0
    let stderr = Buffer.alloc(0)
    let settled = false
    const settle = (outcome: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      run.signal?.removeEventListener('abort', onAbort)
      outcome()
    }
    const fail = (message: string) => {
      endGroup(child)
      settle(() => {
        reject(new PluginError(message, stderr.toString('utf8')))
      })
    }
    const timer = setTimeout(() => {
      fail(`no answer within ${seconds(run.timeoutMs)}: ended it`)
    }, run.timeoutMs)
    const onAbort = () => {
      fail('ended: shutting down')
    }
    run.signal?.addEventListener('abort', onAbort, { once: true })
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length
      if (stdoutBytes > STDOUT_MAX_BYTES) fail('its output is larger than 1 MiB: ended it')
      else stdout.push(chunk)
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = Buffer.concat([stderr, chunk])
      if (stderr.length > STDERR_KEPT_BYTES) stderr = stderr.subarray(-STDERR_KEPT_BYTES)
    })
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (child.pid === undefined) running.delete(child) // never started: no 'close' to wait for
      fail(error.code === 'ENOENT' ? 'no such file' : error.message)
    })
    // After its stdio closed too, so the whole output is in.
    child.once('close', (code, signal) => {
      running.delete(child)
      if (code === 0) {
        settle(() => {
          resolve({
            stdout: Buffer.concat(stdout).toString('utf8'),
            stderr: stderr.toString('utf8'),
          })
        })
      } else {
        fail(signal === null ? `exited with code ${code ?? '?'}` : `ended by ${signal}`)
      }
    })
  })
}

/** SIGKILL to the plugin's process group: it has nothing to save, and must not linger. */
function endGroup(child: ChildProcess): void {
  if (child.pid === undefined) return
  try {
    // The group outlives its leader when the leader exits first (its `sleep` still runs).
    if (process.platform === 'win32') child.kill('SIGKILL')
    else process.kill(-child.pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}
