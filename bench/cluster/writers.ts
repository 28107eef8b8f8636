/**
 * The measured writes: proxy Deployment CREATEs (POST) and UPDATEs (PUT of the operator's object
 * with a new pod-template revision, no resourceVersion, as an operator's unconditional update)
 * through the API server by a fixed number of closed-loop writers, with the CPU every process
 * used meanwhile.
 */

import type { ApiClient, Sample } from './client.ts'
import { must, runPool } from './client.ts'
import type { ProxyDeployments } from './deployments.ts'
import type { CpuUse } from './meter.ts'
import { startMeter } from './meter.ts'
import { serverName } from './population.ts'
import type { ServiceName } from './service.ts'

/** Which webhook a run's writes went through: none, or one of the measured services. */
export type Webhooks = false | ServiceName

export type Operation = 'CREATE' | 'UPDATE'

export interface WriteRun {
  readonly operation: Operation
  readonly writers: number
  readonly webhooks: Webhooks
  readonly writes: number
  readonly wallMs: number
  /** Latencies of the accepted writes, ms, in completion order. */
  readonly latenciesMs: number[]
  /** Writes the API server refused or that failed, and their answers by kind ("n× status: …"). */
  readonly failures: number
  readonly failureSamples: string[]
  readonly cpu: CpuUse
}

export interface WriteJob {
  readonly operation: Operation
  readonly writers: number
  readonly webhooks: Webhooks
  /** Server indices whose Deployments are written. */
  readonly indices: readonly number[]
  /** The pod-template revision written by an UPDATE (CREATE writes 0). */
  readonly revision: number
  readonly deadlineMs: number
}

export async function runWrites(
  api: ApiClient,
  deployments: ProxyDeployments,
  uids: ReadonlyMap<number, string>,
  job: WriteJob,
): Promise<WriteRun> {
  const uidOf = (i: number): string => {
    const uid = uids.get(i)
    if (uid === undefined) throw new Error(`no stored uid for server ${i}`)
    return uid
  }
  const meter = startMeter()
  const { samples, wallMs } = await runPool(
    job.indices.length,
    job.writers,
    job.deadlineMs,
    (n) => {
      const i = job.indices[n]!
      return job.operation === 'CREATE'
        ? api.send('POST', deployments.collection(i), deployments.body(i, uidOf(i), 0))
        : api.send(
            'PUT',
            `${deployments.collection(i)}/${serverName(i)}`,
            deployments.body(i, uidOf(i), job.revision),
          )
    },
  )
  const cpu = meter()
  const failed = samples.filter((sample: Sample) => !sample.ok)
  return {
    operation: job.operation,
    writers: job.writers,
    webhooks: job.webhooks,
    writes: samples.length,
    wallMs,
    latenciesMs: samples.filter((sample) => sample.ok).map((sample) => sample.ms),
    failures: failed.length,
    failureSamples: failureKinds(failed),
    cpu,
  }
}

/** Failures grouped by their answer with the object's names taken out, most frequent first. */
function failureKinds(failed: readonly Sample[]): string[] {
  const kinds = new Map<string, number>()
  for (const sample of failed) {
    const kind = `${sample.status}: ${sample.message ?? ''}`
      .replace(/team-\d+/g, '<namespace>')
      .replace(/mcp-\d{6}/g, '<name>')
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
  }
  return [...kinds]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([kind, n]) => `${n}× ${kind}`)
}

const CHECKSUM = 'toolhive.stacklok.dev/runconfig-checksum'

/**
 * Whether server i's stored Deployment carries the webhook's checksum: proves a "with" run was
 * mutated (the webhook did its work, live reads included) and a "without" run was not.
 */
export async function isMutated(
  api: ApiClient,
  deployments: ProxyDeployments,
  i: number,
): Promise<boolean> {
  const stored = JSON.parse(
    must(await api.send('GET', `${deployments.collection(i)}/${serverName(i)}`), 'GET').body,
  ) as { spec: { template: { metadata: { annotations?: Record<string, string> } } } }
  return stored.spec.template.metadata.annotations?.[CHECKSUM] !== undefined
}

/** Hands out disjoint ranges of server indices, so every CREATE is of a new Deployment. */
export class IndexRanges {
  #next: number
  readonly #limit: number

  constructor(from: number, limit: number) {
    this.#next = from
    this.#limit = limit
  }

  take(count: number): number[] {
    if (this.#next + count > this.#limit)
      throw new Error(`need ${this.#next + count} servers for the writes, have ${this.#limit}`)
    const range = Array.from({ length: count }, (_, k) => this.#next + k)
    this.#next += count
    return range
  }
}
