/**
 * The measured services, started and timed the same way: mcp-admission as it ships, run by the e2e
 * environment (`node dist/main.js serve` as the chart's pod runs it: in-cluster config from its
 * service account's token and CA mounted at the kubelet's path, or a kubeconfig when asked), with
 * the Node flags of the image's entrypoint; and the Go peer (peer.ts). When each became ready, and its memory then and
 * under load. The environment switches the webhook configurations in front of either.
 */

import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LEASE_NAME } from '../../src/reconciler/leader-election.ts'
import { SERVICE_NAMESPACE, waitFor } from '../../test/e2e/harness/environment.ts'
import type { Environment, RunningAdmission } from '../../test/e2e/harness/environment.ts'
import { memory } from '../proc.ts'
import { PEER, ensurePeer, startPeer } from './peer.ts'
import type { ApiClient } from './client.ts'
import { must } from './client.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100
const MiB = 2 ** 20

/** The Node flags of `npm start`, which are the image entrypoint's. */
export function shippedNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: { start: string }
  }
  return pkg.scripts.start.split(' ').filter((word) => word.startsWith('--'))
}

/** Seconds since the process started, from the kernel's accounting (10 ms resolution). */
function processAgeMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
  const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0])
  return (uptime - startTicks / CLOCK_TICKS) * 1000
}

/** The services measured: mcp-admission, and the Go peer (peer.ts) beside it. */
export type ServiceName = 'mcp-admission' | typeof PEER

export interface StartedService {
  readonly name: ServiceName
  readonly admission: RunningAdmission
  readonly pid: number
  /** From process start to the first /readyz 200. */
  readonly readyMs: number
  /** When the process started, epoch ms (for reading its log's timestamps). */
  readonly startedAtMs: number
  readonly rssAtReadyMiB: number
  /** The highest RSS before ready (VmHWM then): loading the view's pages. */
  readonly startPeakMiB: number
  /** The runtime's heap in use and reserved at ready, and V8's external memory, from /metrics. */
  readonly heapUsedMiB: number
  readonly heapTotalMiB: number
  readonly externalMiB: number
}

/** Each runtime's own heap gauges (prom-client's for Node, client_golang's for Go). */
const HEAP_METRICS: Record<ServiceName, readonly string[]> = {
  'mcp-admission': [
    'nodejs_heap_size_used_bytes',
    'nodejs_heap_size_total_bytes',
    'nodejs_external_memory_bytes',
  ],
  [PEER]: ['go_memstats_heap_inuse_bytes', 'go_memstats_heap_sys_bytes'],
}

/** How a service is started, when not as the bench usually starts it. */
export interface StartOptions {
  /** mcp-admission only: added to the shipped Node flags (e.g. `--cpu-prof`). */
  readonly nodeFlags?: readonly string[]
  /**
   * Read the cluster through this kubeconfig (e.g. one naming a `proxy-url`) instead of the usual
   * credentials: mcp-admission's in-cluster files, the peer's service-account kubeconfig.
   */
  readonly kubeconfig?: string
  /** mcp-admission only: arguments added to `serve`'s. */
  readonly args?: readonly string[]
  /** The peer only: environment variables added to its own. */
  readonly env?: Readonly<Record<string, string>>
}

/** Starts `name` and waits for /readyz 200, polling every 20 ms once the probe port answers. */
export async function startService(
  env: Environment,
  name: ServiceName,
  readyLimitMs: number,
  options: StartOptions = {},
): Promise<StartedService> {
  const admission =
    name === PEER
      ? await startPeer(env, await ensurePeer(() => {}), options)
      : await startOurs(env, options)
  const pid = admission.process.child.pid
  if (pid === undefined) throw new Error(`${name} has no pid`)
  try {
    const readyMs = await waitFor(
      `${name} /readyz`,
      async () =>
        (await admission.probe('/readyz')).status === 200 ? processAgeMs(pid) : undefined,
      { timeoutMs: readyLimitMs, process: admission.process, intervalMs: 20 },
    )
    const startedAtMs = Date.now() - readyMs
    const { rss, peak } = memory(pid)
    const [used = NaN, total = NaN, external = NaN] = await Promise.all(
      HEAP_METRICS[name].map(async (metric) => (await admission.metric(metric)) / MiB),
    )
    return {
      name,
      admission,
      pid,
      readyMs,
      startedAtMs,
      rssAtReadyMiB: rss / MiB,
      startPeakMiB: peak / MiB,
      heapUsedMiB: used,
      heapTotalMiB: total,
      externalMiB: external,
    }
  } catch (error) {
    await admission.stop()
    throw error
  }
}

/**
 * mcp-admission as the chart's pod runs it, with the image's Node flags and `nodeFlags`; or, given
 * a kubeconfig, reading the cluster through that instead of the pod's files.
 */
async function startOurs(env: Environment, options: StartOptions): Promise<RunningAdmission> {
  const { kubeconfig } = options
  // startAdmission passes this process's environment on: NODE_OPTIONS carries the flags.
  const saved = process.env['NODE_OPTIONS']
  process.env['NODE_OPTIONS'] = [...shippedNodeFlags(), ...(options.nodeFlags ?? [])].join(' ')
  try {
    // Info, as shipped (the e2e harness asks for debug).
    return await env.startAdmission({
      credentials: kubeconfig === undefined ? 'pod' : () => Promise.resolve(kubeconfig),
      args: ['--log-level=info', ...(options.args ?? [])],
      waitUntilReady: false,
    })
  } finally {
    if (saved === undefined) delete process.env['NODE_OPTIONS']
    else process.env['NODE_OPTIONS'] = saved
  }
}

/** Reads `pid`'s RSS every `everyMs` until stopped; returns the highest, MiB. */
export function sampleRss(pid: number, everyMs: number): () => number {
  let highest = 0
  const read = () => {
    try {
      highest = Math.max(highest, memory(pid).rss / MiB)
    } catch {
      // the process ended
    }
  }
  read()
  const timer = setInterval(read, everyMs)
  return () => {
    clearInterval(timer)
    read()
    return highest
  }
}

/**
 * A Lease held by a stand-in for the second replica, so the measured instance is a follower and
 * its status reconciler stays idle. The bench stores no conditions (a status write per object
 * would double the time to populate), so a leader would spend the run stamping every object:
 * the first install's one-off cost, which would also load the API server under every figure.
 */
export async function holdReconcilerLease(api: ApiClient): Promise<void> {
  const now = new Date().toISOString().replace(/Z$/, '000Z')
  must(
    await api.send('POST', `/apis/coordination.k8s.io/v1/namespaces/${SERVICE_NAMESPACE}/leases`, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: LEASE_NAME, namespace: SERVICE_NAMESPACE },
      spec: {
        holderIdentity: 'bench-standby-replica',
        leaseDurationSeconds: 3600,
        acquireTime: now,
        renewTime: now,
      },
    }),
    'the stand-in Lease',
  )
}

/** The `.cpuprofile` a stopped `--cpu-prof` run left in `dir`. */
export async function profileIn(dir: string): Promise<string | undefined> {
  const files = (await readdir(dir).catch(() => [])).filter((f) => f.endsWith('.cpuprofile'))
  return files.length > 0 ? join(dir, files.sort().at(-1)!) : undefined
}
