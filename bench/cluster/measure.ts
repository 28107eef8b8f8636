/**
 * The two write measurements, each alternating without and with the webhooks (ABBA over the
 * rounds, so a drift in the machine's load falls on both): the latency cells (CREATE then UPDATE
 * of fresh Deployments, at each writer count) and the burst (the same Deployments re-applied at
 * once). The API server's webhook histogram is read around every "with" run.
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
import { isMutated, runWrites } from './writers.ts'
import type { IndexRanges, Operation, WriteJob, WriteRun } from './writers.ts'

export interface Context {
  readonly api: ApiClient
  /** The e2e environment: the control plane, and the webhooks switched on and off. */
  readonly env: Environment
  readonly deployments: ProxyDeployments
  readonly uids: ReadonlyMap<number, string>
  readonly admission: RunningAdmission
  readonly progress: (message: string) => void
}

/** Registers or removes the webhook configurations, only when the state changes. */
export function webhookSwitch(context: Context, initially: boolean) {
  let on = initially
  return async (wanted: boolean): Promise<void> => {
    if (wanted === on) return
    if (wanted) await context.env.registerWebhooks(context.admission)
    else await context.env.unregisterWebhooks()
    on = wanted
  }
}

/** ABBA: round 0 without then with, round 1 with then without, … */
const orderOf = (round: number): boolean[] => (round % 2 === 0 ? [false, true] : [true, false])

/** One run; with the webhooks, the servers' histograms over it are added to `histograms`. */
async function measuredRun(
  context: Context,
  job: WriteJob,
  histograms: RunHistograms,
): Promise<WriteRun> {
  const before = job.webhooks ? await scrape(context.api, context.admission) : undefined
  const run = await runWrites(context.api, context.deployments, context.uids, job)
  if (before) accumulate(histograms, before, await scrape(context.api, context.admission))
  return run
}

/** Fails the benchmark when a run was (not) mutated against what its phase says. */
async function expectMutated(context: Context, i: number, webhooks: boolean): Promise<void> {
  if ((await isMutated(context.api, context.deployments, i)) !== webhooks)
    throw new Error(
      `server ${i}'s Deployment was ${webhooks ? 'not ' : ''}mutated in a run ${webhooks ? 'with' : 'without'} the webhooks`,
    )
}

export async function measureLatency(
  context: Context,
  setWebhooks: (on: boolean) => Promise<void>,
  ranges: IndexRanges,
): Promise<{ runs: WriteRun[]; cells: LatencyCell[] }> {
  const { latency } = CLUSTER_CONFIG
  const runs: WriteRun[] = []
  const histograms = new Map<string, RunHistograms>()
  const histogramsOf = (operation: Operation, writers: number) => {
    const key = `${operation}@${writers}`
    const found = histograms.get(key) ?? emptyRunHistograms()
    histograms.set(key, found)
    return found
  }
  for (let round = 0; round < latency.rounds; round++) {
    for (const webhooks of orderOf(round)) {
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
          const run = await measuredRun(context, job, histogramsOf(operation, writers))
          runs.push(run)
          context.progress(
            `  ${operation} @${writers} ${webhooks ? 'with' : 'without'}: ${run.writes} writes in ${(run.wallMs / 1000).toFixed(1)} s, ${run.failures} failed`,
          )
        }
        await expectMutated(context, indices[0]!, webhooks)
      }
    }
  }
  const cells = latency.writers.flatMap((writers) =>
    (['CREATE', 'UPDATE'] as const).map((operation) =>
      latencyCell(operation, writers, runs, summariseRun(histogramsOf(operation, writers))),
    ),
  )
  return { runs, cells }
}

export async function measureBursts(
  context: Context,
  setWebhooks: (on: boolean) => Promise<void>,
  servers: number,
  indices: readonly number[],
  admissionPid: number,
  firstRevision: number,
): Promise<{ summary: BurstSummary; peakRssMiB: number; runs: WriteRun[] }> {
  const { burst, rssSampleMs } = CLUSTER_CONFIG
  const runs: WriteRun[] = []
  const histograms = emptyRunHistograms()
  let peakRssMiB = 0
  let revision = firstRevision
  for (let round = 0; round < burst.rounds; round++) {
    for (const webhooks of orderOf(round)) {
      await setWebhooks(webhooks)
      const stopSampling = sampleRss(admissionPid, rssSampleMs)
      const job = {
        operation: 'UPDATE' as const,
        writers: burst.concurrency,
        webhooks,
        indices,
        revision: revision++,
        deadlineMs: burst.deadlineMs,
      }
      const run = await measuredRun(context, job, histograms)
      const peak = stopSampling()
      if (webhooks) peakRssMiB = Math.max(peakRssMiB, peak)
      runs.push(run)
      await expectMutated(context, indices.at(-1)!, webhooks)
      context.progress(
        `  burst ${webhooks ? 'with' : 'without'}: ${run.writes} in ${(run.wallMs / 1000).toFixed(2)} s, ${run.failures} failed, RSS peak ${peak.toFixed(0)} MiB`,
      )
    }
  }
  return {
    summary: burstSummary(servers, indices.length, runs, summariseRun(histograms)),
    peakRssMiB,
    runs,
  }
}
