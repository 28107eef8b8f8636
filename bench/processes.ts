/**
 * The benchmark's child processes: the product server as it ships (`dist/main.js serve`, started
 * by test/helpers/serve-process.ts as the tests start it), the floor, and the load-generator worker. Every child stops by itself: the server runs under
 * `timeout`, the forked ones exit when this process goes away.
 */

import { fork } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { request as httpsRequest } from 'node:https'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LoadJob, LoadResult } from './load.ts'
import { childrenOf } from './proc.ts'
import { withPodServiceAccount } from '../test/e2e/harness/chart-pod.ts'
import { freePort } from '../test/helpers/ports.ts'
import { startServe } from '../test/helpers/serve-process.ts'

const ROOT = new URL('..', import.meta.url).pathname
const BENCH = new URL('.', import.meta.url).pathname
/** No child of the benchmark lives longer than this, whatever happens to the benchmark. */
const LIFETIME_S = 20 * 60
/** The 100,000-server view loads in about a minute; beyond this the point is given up. */
const READY_LIMIT_MS = 180_000

const running = new Set<ChildProcess>()
/** Server pids under `timeout`: killing `timeout` with SIGKILL would leave them behind. */
const servers = new Set<number>()
process.on('exit', () => {
  for (const pid of servers) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  for (const child of running) child.kill('SIGKILL')
})

export interface ServerProcess {
  /** The pid of the Node process serving (what CPU and RSS are read from). */
  readonly pid: number
  readonly port: number
  /** The probe port, for the product. */
  readonly probePort?: number
  /** Milliseconds from spawn to ready (`/readyz` 200, or `ready` from the floor). */
  readonly readyMs: number
  stop(): Promise<void>
}

export interface ProductOptions {
  /** `--objects` directory; absent: the embedded default's sample objects. */
  readonly objects?: string
  readonly certDir: string
  /** Extra Node flags, e.g. `--cpu-prof`. */
  readonly nodeFlags?: readonly string[]
  /** Extra `serve` arguments, e.g. `--no-reconciler` (bench/view-peak.ts). */
  readonly args?: readonly string[]
  /**
   * Run as the chart's pod reads the cluster: in-cluster config, with the service account's
   * `token` and `ca.crt` from `serviceAccountDir` bind-mounted at the kubelet's path in a private
   * mount namespace (`unshare`, root only; `workDir` holds its mount points), and `server` (an
   * https URL) as KUBERNETES_SERVICE_HOST/PORT.
   */
  readonly pod?: {
    readonly serviceAccountDir: string
    readonly server: string
    readonly workDir: string
  }
}

/** The Node flags of `npm start` (and the image's entrypoint): the server runs as it ships. */
function shippedNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: { start: string }
  }
  return pkg.scripts.start.split(' ').filter((word) => word.startsWith('--'))
}

/** Spawns `node <shipped flags> dist/main.js serve` and waits until `/readyz` answers 200. */
export async function startProduct(options: ProductOptions): Promise<ServerProcess> {
  const pod = options.pod
  const service = await startServe({
    main: join(ROOT, 'dist/main.js'),
    nodeFlags: [...shippedNodeFlags(), ...(options.nodeFlags ?? [])],
    args: [
      ...(options.objects !== undefined ? ['--objects', options.objects] : []),
      ...['--cert-dir', options.certDir],
      // Not part of what is measured; it only makes stopping between runs quick.
      ...['--shutdown-delay', '0s'],
      ...(options.args ?? []),
    ],
    cwd: ROOT,
    // Under `timeout`, so that the server stops by itself whatever happens to the benchmark.
    wrap: async (argv) => {
      const inPod = pod
        ? await withPodServiceAccount(pod.serviceAccountDir, pod.server, pod.workDir, argv)
        : { argv, env: {} }
      return { argv: ['timeout', '-k', '10', String(LIFETIME_S), ...inPod.argv], env: inPod.env }
    },
    readyTimeoutMs: READY_LIMIT_MS,
    readyPollMs: 5,
  })
  const readyMs = performance.now() - service.spawnedAt
  const { child, port, probePort, exited } = service
  running.add(child)
  const pid = childrenOf(child.pid!)[0]
  if (pid === undefined) throw new Error('cannot find the server process under timeout')
  servers.add(pid)
  let stopping: Promise<void> | undefined
  const stop = async (): Promise<void> => {
    // To the server itself: `timeout` would pass the signal on to its whole process group, and
    // a second SIGTERM makes the server exit at once rather than drain.
    process.kill(pid, 'SIGTERM')
    const code = await Promise.race([exited, sleep(15_000).then(() => 'timeout' as const)])
    if (code === 'timeout') {
      process.kill(pid, 'SIGKILL')
      child.kill('SIGKILL')
      await exited
    }
    running.delete(child)
    servers.delete(pid)
    if (code !== 0 && code !== 'timeout')
      process.stderr.write(`server exit ${code}:\n${service.output().slice(-4000)}\n`)
  }
  return { pid, port, probePort, readyMs, stop: () => (stopping ??= stop()) }
}

/** Starts the floor (bench/floor.ts) on the product's certificate. */
export async function startFloor(
  certDir: string,
  nodeFlags: readonly string[] = [],
): Promise<ServerProcess> {
  const port = await freePort()
  const started = performance.now()
  const child = fork(join(BENCH, 'floor.ts'), [String(port), certDir], {
    stdio: 'inherit',
    execArgv: [...process.execArgv, ...nodeFlags],
  })
  running.add(child)
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => {
      resolve()
    })
    child.once('exit', (code) => {
      reject(new Error(`floor exited with ${code}`))
    })
  })
  const readyMs = performance.now() - started
  let stopping: Promise<void> | undefined
  return { pid: child.pid!, port, readyMs, stop: () => (stopping ??= stopForked(child)) }
}

async function stopForked(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.disconnect()
  await Promise.race([exited, sleep(5000)])
  child.kill('SIGKILL')
  running.delete(child)
}

/** The load-generator worker: one job at a time. */
export class LoadWorker {
  readonly #child: ChildProcess

  private constructor(child: ChildProcess) {
    this.#child = child
  }

  static start(): LoadWorker {
    const child = fork(join(BENCH, 'load.ts'), [], { stdio: 'inherit' })
    running.add(child)
    return new LoadWorker(child)
  }

  run(job: LoadJob): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      this.#child.once(
        'message',
        (answer: { ok: true; result: LoadResult } | { ok: false; message: string }) => {
          if (answer.ok) resolve(answer.result)
          else reject(new Error(answer.message))
        },
      )
      this.#child.send(job)
    })
  }

  #stopping: Promise<void> | undefined

  stop(): Promise<void> {
    return (this.#stopping ??= stopForked(this.#child))
  }
}

/** Sends one review with node:https and returns the parsed answer (for the correctness checks). */
export function postReview(
  port: number,
  ca: string,
  path: string,
  body: string,
): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        ca,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString()
          try {
            resolve({ status: response.statusCode ?? 0, json: JSON.parse(text) })
          } catch {
            reject(new Error(`not JSON (${response.statusCode}): ${text.slice(0, 300)}`))
          }
        })
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}
