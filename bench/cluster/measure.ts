/**
 * The two write measurements, each alternating without the webhooks and with each service's
 * (mcp-admission's, the Go peer's) in a palindrome over the rounds, so a drift in the machine's
 * load falls on all three alike: the latency cells (CREATE then UPDATE of fresh Deployments, at
 * each writer count) and the burst (the same Deployments re-applied at once). The servers'
 * histograms are read around every "with" run.
 */

import type { Environment, RunningAdmission } from '../../test/e2e/harness/environment.ts'
import { accumulate, emptyRunHistograms, scrape, summariseRun } from './apiserver-metrics.ts'
import type { RunHistograms } from './apiserver-metrics.ts'
import type { ApiClient } from './client.ts'
import { CLUSTER_CONFIG } from './config.ts'
import type { ProxyDeployments } from './deployments.ts'
import { burstSummary, latencyCell } from './report.ts'
import type { BurstSummary, LatencyCell } from './report.ts'
import { sampleRss } from './service.ts'
import type { ServiceName } from './service.ts'
import { isMutated, runWrites } from './writers.ts'
import type { IndexRanges, Operation, Webhooks, WriteJob, WriteRun } from './writers.ts'

export interface Context {
  readonly api: ApiClient
  /** The e2e environment: the control plane, and the webhooks switched on and off. */
  readonly env: Environment
  readonly deployments: ProxyDeployments
  readonly uids: ReadonlyMap<number, string>
  /** The running services the webhooks may point at, with their pids. */
  readonly services: ReadonlyMap<ServiceName, { admission: RunningAdmission; pid: number }>
  readonly progress: (message: string) => void
}

/** Points the webhook configurations at a service, or removes them, only when that changes. */
export function webhookSwitch(context: Context) {
  let current: Webhooks = false
  return async (wanted: Webhooks): Promise<void> => {
    if (wanted === current) return
    if (wanted) await context.env.registerWebhooks(serviceOf(context, wanted).admission)
    else await context.env.unregisterWebhooks()
    current = wanted
  }
}

function serviceOf(context: Context, name: ServiceName) {
  const found = context.services.get(name)
  if (!found) throw new Error(`${name} is not running`)
  return found
}

/** Round 0 without, then each service; round 1 the reverse; … */
function orderOf(context: Context, round: number): Webhooks[] {
  const order: Webhooks[] = [false, ...context.services.keys()]
  return round % 2 === 0 ? order : order.reverse()
}

/** One run; with the webhooks, the servers' histograms over it are added to `histograms`. */
async function measuredRun(
  context: Context,
  job: WriteJob,
  histograms: RunHistograms,
): Promise<WriteRun> {
  if (!job.webhooks) return runWrites(context.api, context.deployments, context.uids, job)
  const { admission } = serviceOf(context, job.webhooks)
  const before = await scrape(context.api, admission)
  const run = await runWrites(context.api, context.deployments, context.uids, job)
  accumulate(histograms, before, await scrape(context.api, admission))
  return run
}

/** Fails the benchmark when a run was (not) mutated against what its phase says. */
async function expectMutated(context: Context, i: number, webhooks: Webhooks): Promise<void> {
  if ((await isMutated(context.api, context.deployments, i)) !== Boolean(webhooks))
    throw new Error(
      `server ${i}'s Deployment was ${webhooks ? 'not ' : ''}mutated in a run ${webhooks ? `with ${webhooks}'s` : 'without the'} webhooks`,
    )
}

/** "without" or "with <service>", for progress lines. */
const phase = (webhooks: Webhooks): string => (webhooks ? `with ${webhooks}` : 'without')

export async function measureLatency(
  context: Context,
  setWebhooks: (on: Webhooks) => Promise<void>,
  ranges: IndexRanges,
): Promise<{ runs: WriteRun[]; cells: LatencyCell[] }> {
  const { latency } = CLUSTER_CONFIG
  const runs: WriteRun[] = []
  const histograms = new Map<string, RunHistograms>()
  const histogramsOf = (operation: Operation, writers: number, service: ServiceName) => {
    const key = `${operation}@${writers}@${service}`
    const found = histograms.get(key) ?? emptyRunHistograms()
    histograms.set(key, found)
    return found
  }
  for (let round = 0; round < latency.rounds; round++) {
    for (const webhooks of orderOf(context, round)) {
      await setWebhooks(webhooks)
      for (const writers of latency.writers) {
        const indices = ranges.take(latency.writes[writers])
        for (const operation of ['CREATE', 'UPDATE'] as const) {
          const job = {
            operation,
            writers,
            webhooks,
            indices,
            revision: 1,
            deadlineMs: latency.deadlineMs,
          }
          const histograms = webhooks ? histogramsOf(operation, writers, webhooks) : undefined
          const run = await measuredRun(context, job, histograms ?? emptyRunHistograms())
          runs.push(run)
          context.progress(
            `  ${operation} @${writers} ${phase(webhooks)}: ${run.writes} writes in ${(run.wallMs / 1000).toFixed(1)} s, ${run.failures} failed`,
          )
        }
        await expectMutated(context, indices[0]!, webhooks)
      }
    }
  }
  const cells = [...context.services.keys()].flatMap((service) =>
    latency.writers.flatMap((writers) =>
      (['CREATE', 'UPDATE'] as const).map((operation) =>
        latencyCell(
          { operation, writers, service },
          runs,
          summariseRun(histogramsOf(operation, writers, service)),
        ),
      ),
    ),
  )
  return { runs, cells }
}

export async function measureBursts(
  context: Context,
  setWebhooks: (on: Webhooks) => Promise<void>,
  servers: number,
  indices: readonly number[],
  firstRevision: number,
): Promise<{ summaries: BurstSummary[]; runs: WriteRun[] }> {
  const { burst, rssSampleMs } = CLUSTER_CONFIG
  const runs: WriteRun[] = []
  const histograms = new Map([...context.services.keys()].map((s) => [s, emptyRunHistograms()]))
  const peakRssMiB = new Map<ServiceName, number>()
  let revision = firstRevision
  for (let round = 0; round < burst.rounds; round++) {
    for (const webhooks of orderOf(context, round)) {
      await setWebhooks(webhooks)
      const stopSampling = webhooks
        ? sampleRss(serviceOf(context, webhooks).pid, rssSampleMs)
        : () => NaN
      const job = {
        operation: 'UPDATE' as const,
        writers: burst.concurrency,
        webhooks,
        indices,
        revision: revision++,
        deadlineMs: burst.deadlineMs,
      }
      const run = await measuredRun(
        context,
        job,
        (webhooks && histograms.get(webhooks)) || emptyRunHistograms(),
      )
      const peak = stopSampling()
      if (webhooks) peakRssMiB.set(webhooks, Math.max(peakRssMiB.get(webhooks) ?? 0, peak))
      const rss = webhooks ? `, ${webhooks} RSS peak ${peak.toFixed(0)} MiB` : ''
      runs.push(run)
      await expectMutated(context, indices.at(-1)!, webhooks)
      context.progress(
        `  burst ${phase(webhooks)}: ${run.writes} in ${(run.wallMs / 1000).toFixed(2)} s, ${run.failures} failed${rss}`,
      )
    }
  }
  const summaries = [...histograms].map(([service, h]) =>
    burstSummary(
      { servers, deployments: indices.length, service },
      runs,
      summariseRun(h),
      peakRssMiB.get(service) ?? NaN,
    ),
  )
  return { summaries, runs }
}
