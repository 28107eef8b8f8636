/**
 * The cluster benchmark's charts, drawn with bench/plot.ts: latency percentiles without webhooks
 * and through each service's per operation, and each service's memory, start-up and burst against
 * the view size.
 */

import { lineChart } from '../plot.ts'
import type { Series } from '../plot.ts'
import { GOALS } from './config.ts'
import { median, percentile } from './report.ts'
import type { BurstSummary, ViewFacts } from './report.ts'
import { PEER } from './peer.ts'
import type { Operation, Webhooks, WriteRun } from './writers.ts'

const PHASES: readonly Webhooks[] = [false, 'mcp-admission', PEER]

/** Percentiles drawn, as far as the samples reach (at least one sample beyond each). */
const QUANTILES = [0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999]

/**
 * x = 1 / (1 − q) on the log axis spreads the tail the way HdrHistogram plots do: 2 is p50, 10
 * p90, 100 p99, 1000 p99.9.
 */
const tailX = (q: number): number => 1 / (1 - q)
const tailLabel = (x: number): string => `p${Number((100 - 100 / x).toPrecision(4))}`

function percentileSeries(name: string, latencies: readonly number[], dashed: boolean): Series {
  const points = QUANTILES.filter((q) => latencies.length * (1 - q) >= 1).map(
    (q) => [tailX(q), percentile(latencies, q)] as const,
  )
  return { name, points, dashed }
}

function latencyChart(operation: Operation, runs: readonly WriteRun[], servers: number): string {
  const writerCounts = [...new Set(runs.map((r) => r.writers))].sort((a, b) => a - b)
  const series = writerCounts.flatMap((writers) =>
    PHASES.map((webhooks) =>
      percentileSeries(
        `${writers} writer${writers === 1 ? '' : 's'}, ${webhooks || 'without'}`,
        runs
          .filter(
            (r) => r.operation === operation && r.writers === writers && r.webhooks === webhooks,
          )
          .flatMap((r) => r.latenciesMs),
        !webhooks,
      ),
    ),
  )
  return lineChart({
    title: `Proxy Deployment ${operation} through the API server (${servers.toLocaleString('en')} servers)`,
    xLabel: 'percentile, at x = 1 ÷ (1 − q)',
    yLabel: 'latency, ms',
    logY: true,
    xFormat: tailLabel,
    series,
  })
}

function goalSeries(goals: Readonly<Record<number, number>>, scale = 1): Series {
  return {
    name: 'goal (issue 19)',
    points: Object.entries(goals).map(
      ([servers, limit]) => [Number(servers), limit * scale] as const,
    ),
    dashed: true,
  }
}

export function clusterCharts(
  runs: readonly WriteRun[],
  latencyServers: number,
  views: readonly ViewFacts[],
  bursts: readonly BurstSummary[],
): Record<string, string> {
  const byServers = [...views].sort((a, b) => a.servers - b.servers)
  const points = (value: (v: ViewFacts) => number, service: string) =>
    byServers.filter((v) => v.service === service).map((v) => [v.servers, value(v)] as const)
  const sortedBursts = [...bursts].sort((a, b) => a.servers - b.servers)
  const burstsOf = (service: string) => sortedBursts.filter((b) => b.service === service)
  const both = <T>(series: (service: string) => T) => [series('mcp-admission'), series(PEER)]
  return {
    'cluster-latency-create.svg': latencyChart('CREATE', runs, latencyServers),
    'cluster-latency-update.svg': latencyChart('UPDATE', runs, latencyServers),
    'cluster-view-memory.svg': lineChart({
      title: 'Memory against the view size (through the API server)',
      xLabel: 'MCPServers stored',
      yLabel: 'RSS, MiB',
      series: [
        ...both((s) => ({ name: `${s} RSS at ready`, points: points((v) => v.rssAtReadyMiB, s) })),
        ...both((s) => ({
          name: `${s} peak while starting`,
          points: points((v) => v.startPeakMiB, s),
          dashed: true,
        })),
        ...both((s) => ({
          name: `${s} peak under the burst`,
          points: burstsOf(s).map((b) => [b.servers, b.peakRssMiB] as const),
        })),
        goalSeries(GOALS.rssMiB),
      ],
    }),
    'cluster-view-startup.svg': lineChart({
      title: 'Start → ready against the view size',
      xLabel: 'MCPServers stored',
      yLabel: 'seconds',
      series: [
        ...both((s) => ({
          name: `${s} start → /readyz 200`,
          points: points((v) => v.readyMs / 1000, s),
        })),
        goalSeries(GOALS.readySeconds),
      ],
    }),
    'cluster-burst.svg': lineChart({
      title: `Burst of ${sortedBursts[0]?.deployments ?? 0} proxy Deployment UPDATEs`,
      xLabel: 'MCPServers stored',
      yLabel: 'seconds to finish',
      series: [
        {
          name: 'without webhooks',
          points: burstsOf('mcp-admission').map(
            (b) => [b.servers, median(b.withoutSeconds)] as const,
          ),
          dashed: true,
        },
        ...both((s) => ({
          name: `through ${s}`,
          points: burstsOf(s).map((b) => [b.servers, median(b.withSeconds)] as const),
        })),
      ],
    }),
  }
}
