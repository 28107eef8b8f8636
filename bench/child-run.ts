/**
 * Runs `node ARGS…` as a child the benchmark times, with cpu-at-exit.ts among its `--import`s:
 * its wall-clock time from spawn to exit, its CPU time and peak RSS as it reported them at exit,
 * its exit code, the start of its stdout (and how many bytes it wrote), the end of its stderr.
 * Killed after `timeoutMs`: a benchmark must stop by itself.
 */

import { spawn } from 'node:child_process'
import type { Readable } from 'node:stream'

export interface ChildRun {
  readonly ms: number
  /** User + system, every thread. */
  readonly cpuMs: number
  /** VmHWM at exit. */
  readonly peakBytes: number
  readonly code: number
  /** The first `keepStdout` bytes. */
  readonly stdout: string
  readonly stdoutBytes: number
  readonly stderrTail: string
}

export function runChild(
  args: readonly string[],
  options: { readonly cwd: string; readonly timeoutMs: number; readonly keepStdout?: number },
): Promise<ChildRun> {
  const keep = options.keepStdout ?? 64 * 2 ** 20
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, {
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    })
    const stdout: Buffer[] = []
    let stdoutBytes = 0
    child.stdout!.on('data', (chunk: Buffer) => {
      if (stdoutBytes < keep) stdout.push(chunk.subarray(0, keep - stdoutBytes))
      stdoutBytes += chunk.length
    })
    let stderr = ''
    child.stderr!.setEncoding('utf8')
    child.stderr!.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)))
    let atExit = ''
    const fd3 = child.stdio[3] as Readable
    fd3.setEncoding('utf8')
    fd3.on('data', (chunk: string) => (atExit += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      const ms = performance.now() - started
      if (code === null) {
        reject(new Error(`${args.join(' ')}: not done within ${options.timeoutMs} ms`))
        return
      }
      const [cpuUs, peak] = atExit.trim().split(' ').map(Number)
      resolve({
        ms,
        cpuMs: (cpuUs ?? Number.NaN) / 1000,
        peakBytes: peak ?? Number.NaN,
        code,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stdoutBytes,
        stderrTail: stderr,
      })
    })
  })
}
