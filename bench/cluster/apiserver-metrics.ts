/**
 * Where a webhook-admitted write's time goes, from the two servers' own histograms (Prometheus
 * text, scraped before and after each "with" run; the difference is that run's):
 *  - the API server's `apiserver_admission_webhook_admission_duration_seconds`: how long it
 *    waited for each webhook (read from its /metrics with the admin certificate);
 *  - its `apiserver_request_duration_seconds` for GET of MCPServers and ConfigMaps: the webhook's
 *    live reads (the writers read nothing during a run);
 *  - mcp-admission's `controller_runtime_webhook_latency_seconds`: its handling, live reads
 *    included.
 * Means are exact; percentiles are interpolated within the buckets (the API server's webhook
 * buckets are 5, 25, 100 ms…), so read them as coarse.
 */

import type { RunningAdmission } from '../../test/e2e/harness/environment.ts'
import type { ApiClient } from './client.ts'
import { must } from './client.ts'

interface Histogram {
  /** Cumulative counts by upper bound (seconds), +Inf included. */
  readonly buckets: Map<number, number>
  sum: number
  count: number
}

/** Histograms keyed by their chosen labels' values joined with `|`. */
export type Histograms = Map<string, Histogram>

interface Query {
  readonly metric: string
  /** Labels that make the key; series differing only in others are added together. */
  readonly keyLabels: readonly string[]
  readonly filter?: (labels: Readonly<Record<string, string>>) => boolean
}

export const WEBHOOK_CALLS: Query = {
  metric: 'apiserver_admission_webhook_admission_duration_seconds',
  keyLabels: ['name', 'operation', 'rejected'],
}

const LIVE_READ_RESOURCES = new Set(['mcpservers', 'configmaps'])
export const LIVE_READS: Query = {
  metric: 'apiserver_request_duration_seconds',
  keyLabels: ['verb', 'resource'],
  filter: (labels) =>
    labels['verb'] === 'GET' &&
    LIVE_READ_RESOURCES.has(labels['resource'] ?? '') &&
    (labels['subresource'] ?? '') === '',
}

export const ADMISSION_HANDLING: Query = {
  metric: 'controller_runtime_webhook_latency_seconds',
  keyLabels: ['webhook'],
}

function labelsOf(text: string): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const match of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[match[1]!] = match[2]!
  return labels
}

export function parseHistograms(text: string, query: Query): Histograms {
  const { metric } = query
  const histograms: Histograms = new Map()
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric)) continue
    const match = /^(\w+)\{([^}]*)\}\s+(\S+)/.exec(line)
    if (!match) continue
    const [, series, rawLabels, rawValue] = match
    const labels = labelsOf(rawLabels!)
    if (query.filter && !query.filter(labels)) continue
    const key = query.keyLabels.map((label) => labels[label] ?? '').join('|')
    const histogram = histograms.get(key) ?? {
      buckets: new Map<number, number>(),
      sum: 0,
      count: 0,
    }
    histograms.set(key, histogram)
    const value = Number(rawValue)
    if (series === `${metric}_bucket`) {
      const le = labels['le'] === '+Inf' ? Infinity : Number(labels['le'])
      histogram.buckets.set(le, (histogram.buckets.get(le) ?? 0) + value)
    } else if (series === `${metric}_sum`) histogram.sum += value
    else if (series === `${metric}_count`) histogram.count += value
  }
  return histograms
}

/** Both servers' metrics text at one moment. */
export interface Scrape {
  readonly apiServer: string
  readonly admission: string
}

export async function scrape(api: ApiClient, admission: RunningAdmission): Promise<Scrape> {
  const [apiServer, own] = await Promise.all([
    api.send('GET', '/metrics'),
    admission.probe('/metrics'),
  ])
  return { apiServer: must(apiServer, 'GET /metrics').body, admission: own.body }
}

/** What was observed between two parses of the same query. */
function delta(before: Histograms, after: Histograms): Histograms {
  const result: Histograms = new Map()
  for (const [key, end] of after) {
    const start = before.get(key)
    const count = end.count - (start?.count ?? 0)
    if (count <= 0) continue
    const buckets = new Map<number, number>()
    for (const [le, n] of end.buckets) buckets.set(le, n - (start?.buckets.get(le) ?? 0))
    result.set(key, { buckets, count, sum: end.sum - (start?.sum ?? 0) })
  }
  return result
}

/** The three histograms of one stretch, accumulated over several runs. */
export interface RunHistograms {
  readonly webhookCalls: Histograms
  readonly liveReads: Histograms
  readonly handling: Histograms
}

export function emptyRunHistograms(): RunHistograms {
  return { webhookCalls: new Map(), liveReads: new Map(), handling: new Map() }
}

function add(into: Histograms, more: Histograms): void {
  for (const [key, histogram] of more) {
    const total = into.get(key) ?? { buckets: new Map<number, number>(), sum: 0, count: 0 }
    for (const [le, n] of histogram.buckets) total.buckets.set(le, (total.buckets.get(le) ?? 0) + n)
    total.sum += histogram.sum
    total.count += histogram.count
    into.set(key, total)
  }
}

/** Adds what happened between `before` and `after` into `into`. */
export function accumulate(into: RunHistograms, before: Scrape, after: Scrape): void {
  const between = (text: (s: Scrape) => string, query: Query) =>
    delta(parseHistograms(text(before), query), parseHistograms(text(after), query))
  add(
    into.webhookCalls,
    between((s) => s.apiServer, WEBHOOK_CALLS),
  )
  add(
    into.liveReads,
    between((s) => s.apiServer, LIVE_READS),
  )
  add(
    into.handling,
    between((s) => s.admission, ADMISSION_HANDLING),
  )
}

/** Prometheus' histogram_quantile: linear within the bucket that holds the quantile. */
function quantile(histogram: Histogram, q: number): number {
  const bounds = [...histogram.buckets.keys()].sort((a, b) => a - b)
  const rank = q * histogram.count
  let lower = 0
  let below = 0
  for (const bound of bounds) {
    const cumulative = histogram.buckets.get(bound) ?? 0
    if (cumulative >= rank) {
      if (bound === Infinity) return lower
      const inBucket = cumulative - below
      return inBucket === 0 ? bound : lower + ((bound - lower) * (rank - below)) / inBucket
    }
    lower = bound
    below = cumulative
  }
  return lower
}

export interface HistogramSummary {
  /** The key labels' values, e.g. webhook name, operation, rejected. */
  readonly labels: string[]
  readonly count: number
  readonly meanMs: number
  readonly p50Ms: number
  readonly p99Ms: number
}

export function summarise(histograms: Histograms): HistogramSummary[] {
  return [...histograms]
    .map(([key, histogram]) => ({
      labels: key.split('|'),
      count: histogram.count,
      meanMs: (histogram.sum / histogram.count) * 1000,
      p50Ms: quantile(histogram, 0.5) * 1000,
      p99Ms: quantile(histogram, 0.99) * 1000,
    }))
    .sort((a, b) => a.labels.join('|').localeCompare(b.labels.join('|')))
}

export interface TimeSplit {
  readonly webhookCalls: HistogramSummary[]
  readonly liveReads: HistogramSummary[]
  readonly handling: HistogramSummary[]
}

export function summariseRun(histograms: RunHistograms): TimeSplit {
  return {
    webhookCalls: summarise(histograms.webhookCalls),
    liveReads: summarise(histograms.liveReads),
    handling: summarise(histograms.handling),
  }
}
