/**
 * Turns the runs into figures (percentiles, webhook-added latency as a share of the write's own,
 * burst ratios), checks the issue's goals, and prints the report as text tables.
 */

import type { ProfileSummary } from '../profile.ts'
import type { ServiceLogSummary } from './service-log.ts'
import type { HistogramSummary, TimeSplit } from './apiserver-metrics.ts'
import { GOALS } from './config.ts'
import type { PopulationStep } from './population.ts'
import type { Operation, WriteRun } from './writers.ts'

/** Nearest-rank percentile of `values` (ms); NaN when empty. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const cpuMsPerWrite = (runs: readonly WriteRun[], process: string): number =>
  (runs.reduce((sum, run) => sum + (run.cpu.byProcess[process] ?? 0), 0) * 1000) /
  runs.reduce((sum, run) => sum + run.writes, 0)

export interface LatencyCell {
  readonly operation: Operation
  readonly writers: number
  readonly samples: { readonly without: number; readonly with: number }
  readonly without: { readonly p50: number; readonly p99: number; readonly perSecond: number }
  readonly with: { readonly p50: number; readonly p99: number; readonly perSecond: number }
  /** p(with) − p(without), ms, and as a share of p(without). */
  readonly addedP50: number
  readonly addedP99: number
  readonly addedP50Share: number
  readonly addedP99Share: number
  readonly failures: number
  /** CPU ms per write: kube-apiserver without / with, etcd with, mcp-admission with. */
  readonly apiServerCpuMs: { readonly without: number; readonly with: number }
  readonly admissionCpuMs: number
  /** The servers' histograms over the "with" runs: webhook calls, live reads, handling. */
  readonly split: TimeSplit
}

export function latencyCell(
  operation: Operation,
  writers: number,
  runs: readonly WriteRun[],
  split: TimeSplit,
): LatencyCell {
  const pick = (on: boolean) =>
    runs.filter((r) => r.operation === operation && r.writers === writers && r.webhooks === on)
  const stats = (chosen: readonly WriteRun[]) => {
    const all = chosen.flatMap((r) => r.latenciesMs)
    const wall = chosen.reduce((sum, r) => sum + r.wallMs, 0)
    return {
      p50: percentile(all, 0.5),
      p99: percentile(all, 0.99),
      perSecond: all.length / (wall / 1000),
      n: all.length,
    }
  }
  const [off, on] = [pick(false), pick(true)]
  const without = stats(off)
  const withHooks = stats(on)
  return {
    operation,
    writers,
    samples: { without: without.n, with: withHooks.n },
    without: { p50: without.p50, p99: without.p99, perSecond: without.perSecond },
    with: { p50: withHooks.p50, p99: withHooks.p99, perSecond: withHooks.perSecond },
    addedP50: withHooks.p50 - without.p50,
    addedP99: withHooks.p99 - without.p99,
    addedP50Share: (withHooks.p50 - without.p50) / without.p50,
    addedP99Share: (withHooks.p99 - without.p99) / without.p99,
    failures: [...off, ...on].reduce((sum, r) => sum + r.failures, 0),
    apiServerCpuMs: {
      without: cpuMsPerWrite(off, 'kube-apiserver'),
      with: cpuMsPerWrite(on, 'kube-apiserver'),
    },
    admissionCpuMs: cpuMsPerWrite(on, 'mcp-admission'),
    split,
  }
}

export interface BurstSummary {
  readonly servers: number
  readonly deployments: number
  readonly withoutSeconds: number[]
  readonly withSeconds: number[]
  /** Median with ÷ median without. */
  readonly ratio: number
  readonly failures: number
  readonly failureSamples: string[]
  readonly apiServerCpuMs: { readonly without: number; readonly with: number }
  readonly admissionCpuMs: number
  readonly split: TimeSplit
}

export function burstSummary(
  servers: number,
  deployments: number,
  runs: readonly WriteRun[],
  split: TimeSplit,
): BurstSummary {
  const off = runs.filter((r) => !r.webhooks)
  const on = runs.filter((r) => r.webhooks)
  const seconds = (chosen: readonly WriteRun[]) => chosen.map((r) => r.wallMs / 1000)
  return {
    servers,
    deployments,
    withoutSeconds: seconds(off),
    withSeconds: seconds(on),
    ratio: median(seconds(on)) / median(seconds(off)),
    // A write the deadline kept from starting counts as failed too.
    failures: runs.reduce((sum, r) => sum + r.failures + deployments - r.writes, 0),
    failureSamples: runs.flatMap((r) => r.failureSamples),
    apiServerCpuMs: {
      without: cpuMsPerWrite(off, 'kube-apiserver'),
      with: cpuMsPerWrite(on, 'kube-apiserver'),
    },
    admissionCpuMs: cpuMsPerWrite(on, 'mcp-admission'),
    split,
  }
}

export interface ViewFacts {
  readonly servers: number
  readonly objects: number
  readonly readyMs: number
  readonly rssAtReadyMiB: number
  readonly startPeakMiB: number
  readonly burstPeakMiB: number
  readonly heapUsedMiB: number
  readonly heapTotalMiB: number
  readonly externalMiB: number
  /** CPU seconds to ready: mcp-admission's and the API server's (serving its lists). */
  readonly admissionCpuSeconds: number
  readonly apiServerCpuSeconds: number
  /** From its log: when each resource synced, and its warnings. */
  readonly log: ServiceLogSummary
}

export interface GoalCheck {
  readonly goal: string
  readonly measured: number
  readonly limit: number
  readonly unit: string
  readonly holds: boolean
}

export function checkGoals(
  latency: readonly LatencyCell[],
  bursts: readonly BurstSummary[],
  views: readonly ViewFacts[],
): GoalCheck[] {
  const checks: GoalCheck[] = []
  const at = (goal: string, measured: number, limit: number, unit: string) =>
    checks.push({ goal, measured, limit, unit, holds: measured <= limit })
  for (const cell of latency.filter((c) => c.writers === 1)) {
    at(
      `${cell.operation} @1: mcp-admission CPU per write`,
      cell.admissionCpuMs,
      GOALS.cpuMsPerWriteAt1,
      'ms',
    )
    at(`${cell.operation} @1: added p50`, cell.addedP50, GOALS.addedP50MsAt1, 'ms')
  }
  for (const cell of latency.filter((c) => c.writers === 32)) {
    at(
      `${cell.operation} @32: added p50 ÷ p50 without`,
      cell.addedP50Share * 100,
      GOALS.addedP50Share * 100,
      '%',
    )
    at(
      `${cell.operation} @32: added p99 ÷ p99 without`,
      cell.addedP99Share * 100,
      GOALS.addedP99Share * 100,
      '%',
    )
  }
  for (const burst of bursts)
    at(
      `burst of ${burst.deployments}, ${count(burst.servers)} servers: with ÷ without`,
      burst.ratio,
      GOALS.burstRatio,
      '×',
    )
  for (const view of views) {
    const rss = GOALS.rssMiB[view.servers]
    if (rss !== undefined) {
      at(`RSS at ready, ${count(view.servers)} servers`, view.rssAtReadyMiB, rss, 'MiB')
      at(
        `start-up peak ÷ RSS at ready, ${count(view.servers)} servers`,
        view.startPeakMiB / view.rssAtReadyMiB,
        GOALS.startPeakRatio,
        '×',
      )
    }
    const ready = GOALS.readySeconds[view.servers]
    if (ready !== undefined)
      at(`start → ready, ${count(view.servers)} servers`, view.readyMs / 1000, ready, 's')
  }
  if (bursts.some((b) => b.failures > 0))
    at(
      'burst writes refused or failed',
      bursts.reduce((s, b) => s + b.failures, 0),
      0,
      '',
    )
  return checks
}

// --- text -------------------------------------------------------------------------------------

function count(n: number): string {
  return n.toLocaleString('en')
}

function num(n: number, digits = 1): string {
  if (!Number.isFinite(n)) return '-'
  return Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(digits)
}

function table(header: readonly string[], rows: readonly string[][], leftColumns = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

function verdict(check: GoalCheck): string {
  if (check.holds) return 'holds'
  if (check.limit === 0) return `FAILS (${num(check.measured, 0)})`
  const over =
    check.unit === '%'
      ? `${num(check.measured - check.limit)} points over`
      : `${num(check.measured / check.limit, 2)}× the limit`
  return `FAILS (${over})`
}

/** Where mcp-admission's time and memory went, when profiled (profiling.ts). */
export interface Profiles {
  readonly servers: number
  /** At ready, then right after a full, compacting collection. */
  readonly memory: {
    readonly rssAtReadyMiB: number
    readonly heapUsedAtReadyMiB: number
    readonly rssAfterGcMiB: number
    readonly heapUsedAfterGcMiB: number
  }
  readonly startup: ProfileSummary
  readonly burst: ProfileSummary
  readonly burstSeconds: number
}

export interface ReportInput {
  readonly header: readonly string[]
  readonly population: readonly PopulationStep[]
  readonly latency: readonly LatencyCell[]
  readonly latencyServers: number
  readonly bursts: readonly BurstSummary[]
  readonly burstConcurrency: number
  readonly views: readonly ViewFacts[]
  readonly goals: readonly GoalCheck[]
  readonly profiles?: Profiles
  readonly notes: readonly string[]
}

/** Rows of the time split: each histogram's count, mean, p50 and p99 for one stretch of runs. */
function splitRows(label: string, split: TimeSplit): string[][] {
  const rows = (
    what: string,
    summaries: readonly HistogramSummary[],
    name: (l: string[]) => string,
  ) =>
    summaries.map((h) => [
      label,
      what,
      name(h.labels),
      count(h.count),
      num(h.meanMs, 2),
      num(h.p50Ms, 2),
      num(h.p99Ms, 2),
    ])
  return [
    ...rows(
      'API server → webhook',
      split.webhookCalls,
      ([name = '', operation = '', rejected = '']) =>
        `${name.replace('.mcp-admission.toolhive.stacklok.dev', '')} ${operation}${rejected === 'true' ? ' rejected' : ''}`,
    ),
    ...rows('mcp-admission handling', split.handling, ([webhook = '']) => webhook),
    ...rows(
      'live read at API server',
      split.liveReads,
      ([verb = '', resource = '']) => `${verb} ${resource}`,
    ),
  ]
}

function profileLines(title: string, summary: ProfileSummary): string[] {
  return [
    `CPU profile of ${title}: self time, ${count(Math.round(summary.busyMs))} ms busy`,
    ...summary.top.map(
      (f) =>
        `  ${(f.share * 100).toFixed(1).padStart(5)} %  ${f.name} ${f.where}${f.via ? `  (called in ${f.via})` : ''}`,
    ),
    `  by origin: ${summary.byOrigin
      .filter((o) => o.share >= 0.01)
      .map((o) => `${o.origin} ${Math.round(o.share * 100)} %`)
      .join(', ')}`,
  ]
}

export function formatReport(input: ReportInput): string {
  const out: string[] = [...input.header, '']
  out.push(
    'Goals (issues 19 and 27)',
    table(
      ['goal', 'measured', 'limit', 'result'],
      input.goals.map((g) => [
        g.goal,
        `${num(g.measured, 2)} ${g.unit}`,
        `${num(g.limit, 2)} ${g.unit}`,
        verdict(g),
      ]),
    ),
    '',
    'Populating the API server (MCPServers with their RunConfig ConfigMaps, plus MCPWebhookConfigs; before any webhook is registered)',
    table(
      ['servers', 'objects added', 'how', 'seconds', 'objects/s'],
      input.population.map((p) => [
        count(p.servers),
        count(p.objects),
        p.via === 'api' ? 'REST API' : 'into etcd, until listed',
        num(p.seconds),
        num(p.objectsPerSecond, 0),
      ]),
      3,
    ),
    '',
    `Proxy Deployment writes through the API server, ${count(input.latencyServers)} servers stored; latency ms (client side, nearest rank); added = with − without`,
    table(
      [
        'write',
        'writers',
        'n w/o',
        'n with',
        'p50 w/o',
        'p50 with',
        'p99 w/o',
        'p99 with',
        'added p50',
        'added p99',
        'writes/s w/o',
        'with',
        'failed',
      ],
      input.latency.map((c) => [
        c.operation,
        String(c.writers),
        count(c.samples.without),
        count(c.samples.with),
        num(c.without.p50, 2),
        num(c.with.p50, 2),
        num(c.without.p99, 2),
        num(c.with.p99, 2),
        `${num(c.addedP50, 2)} (${num(c.addedP50Share * 100, 0)} %)`,
        `${num(c.addedP99, 2)} (${num(c.addedP99Share * 100, 0)} %)`,
        num(c.without.perSecond, 0),
        num(c.with.perSecond, 0),
        String(c.failures),
      ]),
      2,
    ),
    '',
    'CPU per write, ms: kube-apiserver without and with the webhooks, and mcp-admission (live reads included)',
    table(
      ['write', 'writers', 'apiserver w/o', 'apiserver with', 'mcp-admission'],
      input.latency.map((c) => [
        c.operation,
        String(c.writers),
        num(c.apiServerCpuMs.without, 2),
        num(c.apiServerCpuMs.with, 2),
        num(c.admissionCpuMs, 2),
      ]),
      2,
    ),
    '',
    "Where a 'with' write's time goes, ms, from the servers' own histograms over the 'with' runs: the API server's wait for the webhook",
    "(apiserver_admission_webhook_admission_duration_seconds), mcp-admission's handling (controller_runtime_webhook_latency_seconds), and the",
    "live reads it makes (apiserver_request_duration_seconds, GET); p50/p99 interpolated in the buckets (the API server's: 5, 25, 100 ms…)",
    table(
      ['runs', 'measured', 'what', 'count', 'mean', 'p50', 'p99'],
      [
        ...input.latency.flatMap((c) => splitRows(`${c.operation} @${c.writers}`, c.split)),
        ...input.bursts.flatMap((b) => splitRows(`burst, ${count(b.servers)}`, b.split)),
      ],
      3,
    ),
    '',
    `Burst: proxy Deployments re-applied (PUT, new pod-template revision), ${input.bursts[0]?.deployments ?? 0} at a time, ${input.burstConcurrency} in flight; seconds per run`,
    table(
      [
        'servers',
        'without',
        'with',
        'with ÷ without',
        'failed',
        'apiserver ms/write w/o',
        'with',
        'mcp-admission ms/write',
      ],
      input.bursts.map((b) => [
        count(b.servers),
        b.withoutSeconds.map((s) => num(s, 2)).join(' '),
        b.withSeconds.map((s) => num(s, 2)).join(' '),
        num(b.ratio, 2),
        String(b.failures),
        num(b.apiServerCpuMs.without, 2),
        num(b.apiServerCpuMs.with, 2),
        num(b.admissionCpuMs, 2),
      ]),
    ),
    ...input.bursts.flatMap((b) =>
      b.failureSamples.map((s) => `  failure at ${count(b.servers)}: ${s}`),
    ),
    '',
    'mcp-admission against the view size: start → /readyz 200, memory (MiB), CPU seconds to ready',
    table(
      [
        'servers',
        'objects',
        'ready s',
        'RSS ready',
        'start peak',
        'burst peak',
        'heap used',
        'heap total',
        'external',
        'CPU s',
        'apiserver CPU s',
      ],
      input.views.map((v) => [
        count(v.servers),
        count(v.objects),
        num(v.readyMs / 1000, 2),
        num(v.rssAtReadyMiB, 0),
        num(v.startPeakMiB, 0),
        num(v.burstPeakMiB, 0),
        num(v.heapUsedMiB, 0),
        num(v.heapTotalMiB, 0),
        num(v.externalMiB, 0),
        num(v.admissionCpuSeconds, 1),
        num(v.apiServerCpuSeconds, 1),
      ]),
    ),
  )
  out.push(
    '',
    "The view's initial lists, from mcp-admission's log: seconds after start when each resource synced (objects)",
    ...input.views.map(
      (v) =>
        `  ${count(v.servers).padStart(7)}: ${v.log.synced
          .map((s) => `${s.resource} ${num(s.seconds, 2)} s (${count(s.objects)})`)
          .join(', ')}`,
    ),
    ...input.views.flatMap((v) =>
      v.log.warnings.map((w) => `  ${count(v.servers)}: ${w.count}× warning: ${w.message}`),
    ),
  )
  if (input.profiles) {
    const { servers, startup, burst, burstSeconds, memory } = input.profiles
    out.push(
      '',
      `Memory of a second start with ${count(servers)} servers (under --cpu-prof): at ready RSS ${num(memory.rssAtReadyMiB, 0)} MiB, heap used ${num(memory.heapUsedAtReadyMiB, 0)} MiB;`,
      `after a full, compacting collection (through the inspector) RSS ${num(memory.rssAfterGcMiB, 0)} MiB, heap used ${num(memory.heapUsedAfterGcMiB, 0)} MiB`,
      '',
      ...profileLines(`mcp-admission from start to ready, ${count(servers)} servers`, startup),
      '',
      ...profileLines(
        `mcp-admission under a burst with the webhooks, ${count(servers)} servers (${num(burstSeconds, 2)} s under --cpu-prof)`,
        burst,
      ),
    )
  }
  out.push('', ...input.notes.map((note) => `Note: ${note}`))
  return out.join('\n') + '\n'
}
