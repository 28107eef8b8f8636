/**
 * `serve` as a child process on loopback: the one way tests and benchmarks start the real service.
 *
 * `spawnServe` starts it on free 127.0.0.1 ports and returns at once (for starts that are meant to
 * fail); `startServe` also waits until `/readyz` answers 200, or fails with the output so far if
 * the process exits or is not ready in time. Output is kept line by line (and, with `logFile`,
 * appended to that file as it comes, for a run's artifacts); `waitForLine` waits for one. `stop`
 * sends a signal and awaits the exit (SIGKILL past a limit); `kill` is for teardown.
 * No cluster is configured unless `env` names one: the runner's KUBECONFIG, KUBERNETES_SERVICE_*
 * and MCP_ADMISSION_* variables are not passed on. A child still running when this process exits
 * is killed then.
 */

import { spawn } from 'node:child_process'
import type { ChildProcessByStdio } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import type { Readable } from 'node:stream'
import { request } from 'node:http'
import { StringDecoder } from 'node:string_decoder'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort } from './ports.ts'

/** The service from the sources under test; bench runs `dist/main.js` as it ships. */
export const SOURCE_MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url))

/** The child: no stdin, stdout and stderr piped. */
export type ServeChild = ChildProcessByStdio<null, Readable, Readable>

export interface ServeOptions {
  /** `serve` arguments after the defaults (a flag given twice: the last wins). */
  readonly args?: readonly string[]
  /** Set over the inherited environment; `undefined` removes a variable. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The entry point: SOURCE_MAIN unless given. */
  readonly main?: string
  /** Node flags before the entry point, e.g. `--expose-gc`. */
  readonly nodeFlags?: readonly string[]
  /**
   * Pass `--host`/`--probe-host 127.0.0.1` (default true). False leaves the hosts to the service's
   * defaults, as `npm start` does.
   */
  readonly loopback?: boolean
  /** The admission port (default: a free one); the probe port is always a free one. */
  readonly port?: number
  /** `--log-level` (default `warn`); null: none given, the service's default. */
  readonly logLevel?: string | null
  /**
   * Wraps the command line, e.g. in `timeout` or in a pod's mount namespace (bench); the variables
   * it returns are set over `env`.
   */
  readonly wrap?: (argv: readonly string[]) => Wrapped | Promise<Wrapped>
  readonly cwd?: string
  /** Every byte of stdout and stderr is also appended to this file, as it comes. */
  readonly logFile?: string
  /** SIGKILL the process if it has not exited by then (a start that hangs). */
  readonly killAfterMs?: number
}

export interface Wrapped {
  readonly argv: readonly string[]
  readonly env?: Readonly<Record<string, string>>
}

export interface ServeProcess {
  readonly child: ServeChild
  /** `performance.now()` when it was spawned (bench: time to ready). */
  readonly spawnedAt: number
  readonly port: number
  readonly probePort: number
  /** The admission endpoint's base URL. */
  readonly url: string
  /**
   * Resolves with the exit code (null when killed by a signal) once stdout and stderr have ended
   * and `logFile` holds all of them.
   */
  readonly exited: Promise<number | null>
  /** Complete lines written so far. */
  readonly stdout: readonly string[]
  readonly stderr: readonly string[]
  /** What `stream` carried so far, exactly as written. */
  text: (stream: 'stdout' | 'stderr') => string
  /** Everything written so far, both streams, for a failure message. */
  output: () => string
  /** `/readyz`'s status now; undefined when nothing answers. */
  readyz: () => Promise<number | undefined>
  /** The first line (existing or to come) on `stream` matching `pattern`; rejects on exit or timeout. */
  waitForLine: (stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs?: number) => Promise<string>
  /** Sends `signal` and resolves with the exit code; SIGKILL after `timeoutMs`. */
  stop: (signal?: NodeJS.Signals, timeoutMs?: number) => Promise<number | null>
  /** SIGKILL if still running (teardown). */
  kill: () => void
}

const running = new Set<ServeChild>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** The environment of the runner without anything that would point `serve` at a cluster. */
function baseEnv(): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) =>
        name !== 'KUBECONFIG' &&
        !name.startsWith('KUBERNETES_SERVICE_') &&
        !name.startsWith('MCP_ADMISSION_'),
    ),
  )
}

/** Starts `serve` on free loopback ports; does not wait for it to be ready. */
export async function spawnServe(options: ServeOptions = {}): Promise<ServeProcess> {
  const [port, probePort] = [options.port ?? (await freePort()), await freePort()]
  const hosts =
    options.loopback === false ? [] : ['--host', '127.0.0.1', '--probe-host', '127.0.0.1']
  const argv = [
    process.execPath,
    ...(options.nodeFlags ?? []),
    options.main ?? SOURCE_MAIN,
    'serve',
    ...hosts,
    ...['--port', String(port), '--probe-port', String(probePort)],
    ...(options.logLevel === null ? [] : ['--log-level', options.logLevel ?? 'warn']),
    ...(options.args ?? []),
  ]
  const wrapped = options.wrap ? await options.wrap(argv) : { argv }
  const [command = '', ...args] = wrapped.argv
  const env = Object.fromEntries(
    Object.entries({ ...baseEnv(), ...options.env, ...wrapped.env }).filter(
      ([, value]) => value !== undefined,
    ),
  )
  const spawnedAt = performance.now()
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  })
  running.add(child)
  const log =
    options.logFile === undefined ? undefined : createWriteStream(options.logFile, { flags: 'a' })
  const lines = { stdout: [] as string[], stderr: [] as string[] }
  const raw = { stdout: [] as Buffer[], stderr: [] as Buffer[] }
  const waiters = new Set<() => void>()
  for (const stream of ['stdout', 'stderr'] as const) {
    let partial = ''
    const decoder = new StringDecoder('utf8')
    child[stream].on('data', (chunk: Buffer) => {
      raw[stream].push(chunk)
      log?.write(chunk)
      const parts = (partial + decoder.write(chunk)).split('\n')
      partial = parts.pop() ?? ''
      lines[stream].push(...parts)
      for (const waiter of waiters) waiter()
    })
    child[stream].on('end', () => {
      partial += decoder.end()
      if (partial !== '') lines[stream].push(partial)
      partial = ''
    })
  }
  const killTimer =
    options.killAfterMs === undefined
      ? undefined
      : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs)
  let done = false
  // The child's own errors (not spawned, e.g. a wrapper not installed) are output, not a crash.
  child.on('error', (error) => {
    const line = `child process error: ${error.message}`
    lines.stderr.push(line)
    if (log?.writable) log.write(`${line}\n`)
  })
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      done = true
      clearTimeout(killTimer)
      running.delete(child)
      for (const waiter of waiters) waiter()
      // Resolved once the log is flushed: a caller reads it after the exit.
      if (log)
        log.end(() => {
          resolve(code)
        })
      else resolve(code)
    }),
  )
  const output = () =>
    [...lines.stdout.map((l) => `stdout: ${l}`), ...lines.stderr.map((l) => `stderr: ${l}`)].join(
      '\n',
    )
  const waitForLine = (stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs = 30_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = lines[stream].find((candidate) => pattern.test(candidate))
        if (line !== undefined || done) {
          waiters.delete(check)
          clearTimeout(timer)
          if (line !== undefined) resolve(line)
          else reject(new Error(`serve exited without a line matching ${pattern}:\n${output()}`))
        }
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${output()}`))
      }, timeoutMs)
      waiters.add(check)
      check()
    })
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000) => {
    if (!done) child.kill(signal)
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    try {
      return await exited
    } finally {
      clearTimeout(timer)
    }
  }
  return {
    child,
    spawnedAt,
    port,
    probePort,
    url: `https://127.0.0.1:${port}`,
    exited,
    stdout: lines.stdout,
    stderr: lines.stderr,
    text: (stream) => Buffer.concat(raw[stream]).toString('utf8'),
    output,
    readyz: () => status(probePort, '/readyz'),
    waitForLine,
    stop,
    kill: () => {
      if (!done) child.kill('SIGKILL')
    },
  }
}

export interface StartOptions extends ServeOptions {
  /** Give up (SIGTERM, then SIGKILL) when not ready by then; default 60 s. */
  readonly readyTimeoutMs?: number
  /** How often `/readyz` is asked; default 20 ms. */
  readonly readyPollMs?: number
  /** The `/readyz` answers taken as started; default 200 only (503: listening, not yet ready). */
  readonly readyStatuses?: readonly number[]
}

/** Starts `serve` and waits until `/readyz` answers 200. */
export async function startServe(options: StartOptions = {}): Promise<ServeProcess> {
  const service = await spawnServe(options)
  const deadline = performance.now() + (options.readyTimeoutMs ?? 60_000)
  const state = { exited: false }
  void service.exited.then(() => (state.exited = true))
  for (;;) {
    if (state.exited) throw new Error(`serve exited before it was ready:\n${service.output()}`)
    const status = await service.readyz()
    if (status !== undefined && (options.readyStatuses ?? [200]).includes(status)) return service
    if (performance.now() > deadline) {
      // SIGTERM first: a wrapper such as `timeout` passes it on; SIGKILL would orphan the server.
      await service.stop('SIGTERM', 10_000)
      throw new Error(`serve was not ready in time:\n${service.output()}`)
    }
    await sleep(options.readyPollMs ?? 20)
  }
}

/** The status of a plain HTTP GET on loopback; undefined when nothing answers. */
function status(port: number, path: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const probe = request({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      response.resume()
      resolve(response.statusCode)
    })
    probe.on('error', () => {
      resolve(undefined)
    })
    probe.end()
  })
}
