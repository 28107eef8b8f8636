/**
 * Turns the runs into figures (percentiles, webhook-added latency as a share of the write's own,
 * burst ratios, mcp-admission ÷ the Go peer), checks the issues' goals, and prints the report as
 * text tables.
 */

import type { ProfileSummary } from '../profile.ts'
import type { ServiceLogSummary } from './service-log.ts'
import type { HistogramSummary, TimeSplit } from './apiserver-metrics.ts'
import { GOALS } from './config.ts'
import { PEER } from './peer.ts'
import type { PopulationStep } from './population.ts'
import type { ServiceName } from './service.ts'
import type { Operation, Webhooks, WriteRun } from './writers.ts'

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

/** A service's CPU ms per review it handled (its own histogram's count: reinvocations too). */
function cpuMsPerReview(runs: readonly WriteRun[], service: ServiceName, split: TimeSplit): number {
  const reviews = split.handling.reduce((sum, h) => sum + h.count, 0)
  return (runs.reduce((sum, run) => sum + (run.cpu.byProcess[service] ?? 0), 0) * 1000) / reviews
}

export interface LatencyCell {
  readonly operation: Operation
  readonly writers: number
  /** Whose webhooks the "with" runs went through. */
  readonly service: ServiceName
  readonly samples: { readonly without: number; readonly with: number }
  readonly without: { readonly p50: number; readonly p99: number; readonly perSecond: number }
  readonly with: { readonly p50: number; readonly p99: number; readonly perSecond: number }
  /** p(with) − p(without), ms, and as a share of p(without). */
  readonly addedP50: number
  readonly addedP99: number
  readonly addedP50Share: number
  readonly addedP99Share: number
  readonly failures: number
  /** CPU ms per write: kube-apiserver without / with, the service with; the service's per review. */
  readonly apiServerCpuMs: { readonly without: number; readonly with: number }
  readonly serviceCpuMs: number
  readonly cpuMsPerReview: number
  /** The servers' histograms over the "with" runs: webhook calls, live reads, handling. */
  readonly split: TimeSplit
}

export function latencyCell(
  { operation, writers, service }: Pick<LatencyCell, 'operation' | 'writers' | 'service'>,
  runs: readonly WriteRun[],
  split: TimeSplit,
): LatencyCell {
  const pick = (webhooks: false | ServiceName) =>
    runs.filter(
      (r) => r.operation === operation && r.writers === writers && r.webhooks === webhooks,
    )
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
  const [off, on] = [pick(false), pick(service)]
  const without = stats(off)
  const withHooks = stats(on)
  return {
    operation,
    writers,
    service,
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
    serviceCpuMs: cpuMsPerWrite(on, service),
    cpuMsPerReview: cpuMsPerReview(on, service, split),
    split,
  }
}

export interface BurstSummary {
  readonly servers: number
  readonly deployments: number
  readonly service: ServiceName
  readonly withoutSeconds: number[]
  readonly withSeconds: number[]
  /** Median with ÷ median without. */
  readonly ratio: number
  readonly failures: number
  readonly failureSamples: string[]
  readonly apiServerCpuMs: { readonly without: number; readonly with: number }
  readonly serviceCpuMs: number
  readonly cpuMsPerReview: number
  /** The service's highest RSS while it served the bursts. */
  readonly peakRssMiB: number
  readonly split: TimeSplit
}

export function burstSummary(
  { servers, deployments, service }: Pick<BurstSummary, 'servers' | 'deployments' | 'service'>,
  runs: readonly WriteRun[],
  split: TimeSplit,
  peakRssMiB: number,
): BurstSummary {
  const off = runs.filter((r) => !r.webhooks)
  const on = runs.filter((r) => r.webhooks === service)
  const seconds = (chosen: readonly WriteRun[]) => chosen.map((r) => r.wallMs / 1000)
  return {
    servers,
    deployments,
    service,
    withoutSeconds: seconds(off),
    withSeconds: seconds(on),
    ratio: median(seconds(on)) / median(seconds(off)),
    // A write the deadline kept from starting counts as failed too.
    failures: [...off, ...on].reduce((sum, r) => sum + r.failures + deployments - r.writes, 0),
    failureSamples: [...off, ...on].flatMap((r) => r.failureSamples),
    apiServerCpuMs: {
      without: cpuMsPerWrite(off, 'kube-apiserver'),
      with: cpuMsPerWrite(on, 'kube-apiserver'),
    },
    serviceCpuMs: cpuMsPerWrite(on, service),
    cpuMsPerReview: cpuMsPerReview(on, service, split),
    peakRssMiB,
    split,
  }
}

/** One run of the slow-API-server measurement (slow-api.ts). */
export interface SlowApiRun {
  readonly servers: number
  readonly delayMs: number
  /** The share of the services' reads whose answers were held back. */
  readonly share: number
  readonly webhooks: Webhooks
  readonly deployments: number
  readonly wallSeconds: number
  readonly admitted: number
  /** Writes refused or failed, plus those the deadline kept from starting. */
  readonly refused: number
  readonly failureSamples: string[]
  /** Latency of the admitted writes, ms. */
  readonly p50Ms: number
  readonly p99Ms: number
  /** What the proxy saw during the run: requests (client writes into a tunnel) and delayed. */
  readonly proxy: { readonly requests: number; readonly delayed: number }
  /** mcp-admission's live-read fallbacks during the run (its counter); absent for the others. */
  readonly fallbacks?: number
}

export interface ViewFacts {
  readonly service: ServiceName
  readonly servers: number
  readonly objects: number
  readonly readyMs: number
  readonly rssAtReadyMiB: number
  readonly startPeakMiB: number
  readonly heapUsedMiB: number
  readonly heapTotalMiB: number
  readonly externalMiB: number
  /** CPU seconds to ready: the service's and the API server's (serving its lists). */
  readonly serviceCpuSeconds: number
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
  const ours = <T extends { service: ServiceName }>(items: readonly T[]) =>
    items.filter((item) => item.service === 'mcp-admission')
  for (const cell of ours(latency).filter((c) => c.writers === 1)) {
    at(
      `${cell.operation} @1: mcp-admission CPU per write`,
      cell.serviceCpuMs,
      GOALS.cpuMsPerWriteAt1,
      'ms',
    )
    at(`${cell.operation} @1: added p50`, cell.addedP50, GOALS.addedP50MsAt1, 'ms')
  }
  for (const cell of ours(latency).filter((c) => c.writers === 32)) {
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
  for (const burst of ours(bursts))
    at(
      `burst of ${burst.deployments}, ${count(burst.servers)} servers: with ÷ without`,
      burst.ratio,
      GOALS.burstRatio,
      '×',
    )
  for (const view of ours(views)) {
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
  // Issue 39: beside the Go peer, measured in the same run.
  for (const { ours: cell, peer } of pairs(latency, (c) => `${c.operation}@${c.writers}`)) {
    const name = `${cell.operation} @${cell.writers}`
    at(`${name}: CPU per review ÷ peer's`, cell.cpuMsPerReview / peer.cpuMsPerReview, 1, '×')
    if (cell.writers === 1)
      at(
        `${name}: added p50 − peer's`,
        cell.addedP50 - peer.addedP50,
        GOALS.addedP50OverPeerMs,
        'ms',
      )
  }
  for (const { ours: view, peer } of pairs(views, (v) => String(v.servers)))
    if (GOALS.rssMiB[view.servers] !== undefined)
      at(
        `RSS at ready, ${count(view.servers)} servers ÷ peer's`,
        view.rssAtReadyMiB / peer.rssAtReadyMiB,
        GOALS.rssOverPeer,
        '×',
      )
  return checks
}

/** mcp-admission's item beside the peer's with the same key, where both were measured. */
export function pairs<T extends { service: ServiceName }>(
  items: readonly T[],
  key: (item: T) => string,
): { ours: T; peer: T }[] {
  const peers = new Map(items.filter((i) => i.service === PEER).map((i) => [key(i), i]))
  return items.flatMap((item) => {
    const peer = peers.get(key(item))
    return item.service === 'mcp-admission' && peer ? [{ ours: item, peer }] : []
  })
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
  /** The slow API server (slow-api.ts), when measured. */
  readonly slowApi?: {
    readonly runs: readonly SlowApiRun[]
    /** Warnings and errors in the services' logs over the measurement. */
    readonly warnings: readonly {
      readonly service: ServiceName
      readonly message: string
      readonly count: number
    }[]
    readonly writer: string
  }
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
    ...rows('service handling', split.handling, ([webhook = '']) => webhook),
    ...rows(
      'live read at API server',
      split.liveReads,
      ([verb = '', resource = '']) => `${verb} ${resource}`,
    ),
  ]
}

/** The slow-API-server section: each run's outcome, then its refusals grouped by message. */
function slowApiLines({ runs, warnings, writer }: NonNullable<ReportInput['slowApi']>): string[] {
  const first = runs[0]
  if (!first) return []
  const late = (run: SlowApiRun) => `${num(run.share * 100, 0)} %`
  const name = (run: SlowApiRun) => (run.webhooks ? run.webhooks : 'without')
  const refusedOurs = runs
    .filter((run) => run.webhooks === 'mcp-admission')
    .reduce((sum, run) => sum + run.refused, 0)
  return [
    `Slow API server (issue 49): ${count(first.deployments)} proxy Deployments re-applied as the operator (${writer}) with its stamps, ${count(first.servers)} servers;`,
    `the services' reads of the API server through a proxy holding back a share of its answers by ${count(first.delayMs)} ms (past the 2 s live-read deadline)`,
    table(
      [
        'reads late',
        'webhook',
        'seconds',
        'admitted',
        'refused',
        'p50 ms',
        'p99 ms',
        'fallbacks',
        'proxy requests',
        'delayed',
      ],
      runs.map((run) => [
        late(run),
        name(run),
        num(run.wallSeconds, 2),
        count(run.admitted),
        count(run.refused),
        num(run.p50Ms, 0),
        num(run.p99Ms, 0),
        run.fallbacks === undefined ? '-' : count(run.fallbacks),
        count(run.proxy.requests),
        count(run.proxy.delayed),
      ]),
      2,
    ),
    ...runs.flatMap((run) =>
      run.failureSamples.map((s) => `  refused, ${late(run)} late, ${name(run)}: ${s}`),
    ),
    ...warnings.map((w) => `  ${w.service} log: ${w.count}× ${w.message}`),
    `  operator writes refused through mcp-admission: ${count(refusedOurs)} (expected 0 once its live-read fallback admits the operator's stamped writes)`,
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

/** Ours ÷ the peer's, or the difference where a ratio means little (added latency near zero). */
function comparisonRows(input: ReportInput): string[][] {
  const row = (what: string, ours: number, peer: number, unit: string, digits = 2) => [
    what,
    `${num(ours, digits)} ${unit}`,
    `${num(peer, digits)} ${unit}`,
    num(ours / peer, 2),
    num(ours - peer, digits),
  ]
  const cells = pairs(input.latency, (c) => `${c.operation}@${c.writers}`)
  const bursts = pairs(input.bursts, (b) => String(b.servers))
  const views = pairs(input.views, (v) => String(v.servers))
  return [
    ...cells.flatMap(({ ours, peer }) => {
      const name = `${ours.operation} @${ours.writers}`
      return [
        row(`${name}: CPU per review`, ours.cpuMsPerReview, peer.cpuMsPerReview, 'ms'),
        row(`${name}: added p50`, ours.addedP50, peer.addedP50, 'ms'),
        row(`${name}: added p99`, ours.addedP99, peer.addedP99, 'ms'),
      ]
    }),
    ...bursts.flatMap(({ ours, peer }) => [
      row(
        `burst, ${count(ours.servers)}: CPU per review`,
        ours.cpuMsPerReview,
        peer.cpuMsPerReview,
        'ms',
      ),
      row(
        `burst, ${count(ours.servers)}: seconds with`,
        median(ours.withSeconds),
        median(peer.withSeconds),
        's',
      ),
    ]),
    ...views.flatMap(({ ours, peer }) => [
      row(`RSS at ready, ${count(ours.servers)}`, ours.rssAtReadyMiB, peer.rssAtReadyMiB, 'MiB', 0),
      row(`start → ready, ${count(ours.servers)}`, ours.readyMs / 1000, peer.readyMs / 1000, 's'),
    ]),
  ]
}

export function formatReport(input: ReportInput): string {
  const out: string[] = [...input.header, '']
  out.push(
    `mcp-admission beside the Go peer (controller-runtime, bench/cluster/peer/), same run, same API server: ours ÷ peer's`,
    table(['what', 'mcp-admission', PEER, 'ours ÷ peer', 'ours − peer'], comparisonRows(input)),
    '',
    'Goals (issues 19, 27 and 39)',
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
        'webhook',
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
        c.service,
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
      3,
    ),
    '',
    'CPU ms: kube-apiserver per write without and with the webhooks, and the webhook service (live reads included) per write and per review',
    table(
      ['webhook', 'write', 'writers', 'apiserver w/o', 'apiserver with', 'service', 'per review'],
      input.latency.map((c) => [
        c.service,
        c.operation,
        String(c.writers),
        num(c.apiServerCpuMs.without, 2),
        num(c.apiServerCpuMs.with, 2),
        num(c.serviceCpuMs, 2),
        num(c.cpuMsPerReview, 2),
      ]),
      3,
    ),
    '',
    "Where a 'with' write's time goes, ms, from the servers' own histograms over the 'with' runs: the API server's wait for the webhook",
    "(apiserver_admission_webhook_admission_duration_seconds), the service's handling (controller_runtime_webhook_latency_seconds), and the",
    "live reads it makes (apiserver_request_duration_seconds, GET); p50/p99 interpolated in the buckets (the API server's: 5, 25, 100 ms…)",
    table(
      ['runs', 'measured', 'what', 'count', 'mean', 'p50', 'p99'],
      [
        ...input.latency.flatMap((c) =>
          splitRows(`${c.service} ${c.operation} @${c.writers}`, c.split),
        ),
        ...input.bursts.flatMap((b) =>
          splitRows(`${b.service} burst, ${count(b.servers)}`, b.split),
        ),
      ],
      3,
    ),
    '',
    `Burst: proxy Deployments re-applied (PUT, new pod-template revision), ${input.bursts[0]?.deployments ?? 0} at a time, ${input.burstConcurrency} in flight; seconds per run`,
    table(
      [
        'webhook',
        'servers',
        'without',
        'with',
        'with ÷ without',
        'failed',
        'apiserver ms/write w/o',
        'with',
        'service ms/review',
        'RSS peak',
      ],
      input.bursts.map((b) => [
        b.service,
        count(b.servers),
        b.withoutSeconds.map((s) => num(s, 2)).join(' '),
        b.withSeconds.map((s) => num(s, 2)).join(' '),
        num(b.ratio, 2),
        String(b.failures),
        num(b.apiServerCpuMs.without, 2),
        num(b.apiServerCpuMs.with, 2),
        num(b.cpuMsPerReview, 2),
        num(b.peakRssMiB, 0),
      ]),
      2,
    ),
    ...input.bursts.flatMap((b) =>
      b.failureSamples.map((s) => `  failure at ${count(b.servers)}: ${s}`),
    ),
    ...(input.slowApi ? ['', ...slowApiLines(input.slowApi)] : []),
    '',
    'Each service against the view size: start → /readyz 200, memory (MiB; heap: V8 used/total, Go in use/reserved), CPU seconds to ready',
    table(
      [
        'service',
        'servers',
        'objects',
        'ready s',
        'RSS ready',
        'start peak',
        'heap used',
        'heap total',
        'external',
        'CPU s',
        'apiserver CPU s',
      ],
      input.views.map((v) => [
        v.service,
        count(v.servers),
        count(v.objects),
        num(v.readyMs / 1000, 2),
        num(v.rssAtReadyMiB, 0),
        num(v.startPeakMiB, 0),
        num(v.heapUsedMiB, 0),
        num(v.heapTotalMiB, 0),
        num(v.externalMiB, 0),
        num(v.serviceCpuSeconds, 1),
        num(v.apiServerCpuSeconds, 1),
      ]),
      2,
    ),
  )
  out.push(
    '',
    "The view's initial lists, from mcp-admission's log: seconds after start when each resource synced (objects)",
    ...input.views
      .filter((v) => v.service === 'mcp-admission')
      .map(
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
