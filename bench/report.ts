/** Medians, ratios to the floor, the issue's targets with pass/fail, and the printed tables. */

import { CONFIG } from './config.ts'
import type { CurvePoint, Measurement, TargetKind, ViewPoint } from './measure.ts'
import { median } from './measure.ts'
import type { MicroResult } from './micro.ts'
import type { ProfileSummary } from './profile.ts'
import type { Scenario, ScenarioId } from './scenarios.ts'

export interface LatencySummary {
  readonly fraction: number
  readonly rate: number
  readonly product: { p50: number; p99: number; p999: number; achieved: number; unsent: number }
  readonly floor: { p50: number; p99: number; p999: number; achieved: number; unsent: number }
}

export interface ScenarioSummary {
  readonly id: ScenarioId
  readonly title: string
  readonly bytes: number
  readonly productRps: number
  readonly floorRps: number
  /** Median over repeats of product ÷ floor measured back to back. */
  readonly ratio: number
  readonly productCpuUs: number
  readonly floorCpuUs: number
  readonly productRssMiB: number
  readonly floorRssMiB: number
  readonly latency: LatencySummary[]
}

export function summariseScenarios(
  scenarios: readonly Scenario[],
  measurements: readonly Measurement[],
): ScenarioSummary[] {
  return scenarios.map((scenario) => {
    const of = (target: TargetKind, mode: Measurement['mode'], fraction?: number) =>
      measurements.filter(
        (m) =>
          m.scenario === scenario.id &&
          m.target === target &&
          m.mode === mode &&
          (fraction === undefined || m.fraction === fraction),
      )
    const saturated = (target: TargetKind) => of(target, 'saturated').map((m) => m.result)
    const ratios = of('product', 'saturated').map((p) => {
      const f = of('floor', 'saturated').find((m) => m.repeat === p.repeat)!
      return p.result.throughput / f.result.throughput
    })
    const latency = (target: TargetKind, fraction: number) => {
      const runs = of(target, 'rate', fraction).map((m) => m.result)
      return {
        p50: median(runs.map((r) => r.latencyMs.p50)),
        p99: median(runs.map((r) => r.latencyMs.p99)),
        p999: median(runs.map((r) => r.latencyMs.p999)),
        achieved: median(runs.map((r) => r.throughput)),
        unsent: median(runs.map((r) => r.unsent)),
      }
    }
    return {
      id: scenario.id,
      title: scenario.title,
      bytes: scenario.bodies[0]!.length,
      productRps: median(saturated('product').map((r) => r.throughput)),
      floorRps: median(saturated('floor').map((r) => r.throughput)),
      ratio: median(ratios),
      productCpuUs: median(saturated('product').map((r) => r.cpuUsPerRequest)),
      floorCpuUs: median(saturated('floor').map((r) => r.cpuUsPerRequest)),
      productRssMiB: median(saturated('product').map((r) => r.rssBytes)) / 2 ** 20,
      floorRssMiB: median(saturated('floor').map((r) => r.rssBytes)) / 2 ** 20,
      latency: CONFIG.rate.fractions.map((fraction) => ({
        fraction,
        rate: median(of('floor', 'rate', fraction).map((m) => m.rate ?? 0)),
        product: latency('product', fraction),
        floor: latency('floor', fraction),
      })),
    }
  })
}

export interface TargetCheck {
  readonly target: string
  readonly measured: number
  readonly goal: number
  readonly unit: string
  /** `>=` or `<=` the goal passes. */
  readonly sense: '>=' | '<='
  readonly pass: boolean
  /** The floor's own value, where the target applies to it too: what the machine allows. */
  readonly floor?: number
}

function check(
  target: string,
  measured: number,
  sense: '>=' | '<=',
  goal: number,
  unit = '',
  floor?: number,
): TargetCheck {
  const pass = sense === '>=' ? measured >= goal : measured <= goal
  return { target, measured, goal, unit, sense, pass, ...(floor === undefined ? {} : { floor }) }
}

/**
 * Issue 18: the throughput and latency ratios against the floor are reported, not targets; what
 * is held is scenario 1's server CPU per request within this multiple of the floor's.
 */
const S1_CPU_LIMIT = 3.5

export interface StartupFacts {
  /** The embedded default's first start (it generates the development certificates). */
  readonly embeddedReadyMs: number
  /** Its second start, the certificates in place. */
  readonly embeddedRestartMs: number
  readonly viewReadyMs: number
  /** RSS with the view loaded, at ready: the issue's memory target. */
  readonly rssAtReadyMiB: number
}

/** The issue's targets, plus the two curve criteria made checkable (see bench/README.md). */
export function checkTargets(
  summaries: readonly ScenarioSummary[],
  startup: StartupFacts,
  sizeCurve: readonly CurvePoint[],
  views: readonly ViewPoint[],
): TargetCheck[] {
  const checks: TargetCheck[] = []
  const s1 = summaries.find((s) => s.id === 's1')
  if (s1)
    checks.push(
      check('s1 CPU per request ÷ floor', s1.productCpuUs / s1.floorCpuUs, '<=', S1_CPU_LIMIT, '×'),
    )
  // Under saturating load RSS also holds V8's young generation and TLS buffers, which the floor
  // needs as well: the throughput table shows both, side by side.
  checks.push(check('RSS, 10,000-server view loaded', startup.rssAtReadyMiB, '<=', 120, 'MiB'))
  checks.push(check('start → ready, embedded default', startup.embeddedReadyMs, '<=', 1000, 'ms'))
  checks.push(
    check('start → ready, embedded, certs exist', startup.embeddedRestartMs, '<=', 1000, 'ms'),
  )
  checks.push(check('start → ready, 10,000-server view', startup.viewReadyMs, '<=', 1000, 'ms'))
  const product = sizeCurve.filter((p) => p.target === 'product').sort((a, b) => a.x - b.x)
  const slopes = product
    .slice(1)
    .map((p, i) => Math.log(p.p50Ms / product[i]!.p50Ms) / Math.log(p.x / product[i]!.x))
  checks.push(check('latency vs size: max log-log slope', Math.max(...slopes), '<=', 1.15))
  const sortedViews = [...views].sort((a, b) => a.servers - b.servers)
  const small = sortedViews[0]
  const large = sortedViews.at(-1)
  if (small && large && large !== small)
    checks.push(
      check(
        `p50 at ${large.servers / 1000}k ÷ ${small.servers / 1000}k servers`,
        large.latency.p50Ms / small.latency.p50Ms,
        '<=',
        1.25,
        '×',
      ),
    )
  return checks
}

// --- text -------------------------------------------------------------------------------------

function table(header: string[], rows: string[][], leftColumns = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en') : '-')
const ms = (n: number): string =>
  !Number.isFinite(n) ? '-' : n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)
const fixed = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : '-')

export interface ReportInput {
  readonly header: string
  readonly summaries: readonly ScenarioSummary[]
  readonly checks: readonly TargetCheck[]
  readonly sizeCurve: readonly CurvePoint[]
  readonly views: readonly ViewPoint[]
  readonly micro: readonly MicroResult[]
  readonly profile: ProfileSummary
  readonly floorProfile: ProfileSummary
}

export function formatReport(input: ReportInput): string {
  const { summaries } = input
  const out: string[] = [input.header, '']
  out.push(
    'Saturated throughput (closed loop, 16 keep-alive connections); medians; ratio = product ÷ floor, paired per run',
    table(
      [
        'scenario',
        'bytes',
        'req/s',
        'floor req/s',
        'ratio',
        'CPU µs/req',
        'floor CPU',
        'RSS MiB',
        'floor RSS',
      ],
      summaries.map((s) => [
        `${s.id.slice(1)} ${s.title}`,
        int(s.bytes),
        int(s.productRps),
        int(s.floorRps),
        fixed(s.ratio, 2),
        int(s.productCpuUs),
        int(s.floorCpuUs),
        int(s.productRssMiB),
        int(s.floorRssMiB),
      ]),
    ),
    '',
    "Latency at fixed rates (open loop) of 50 % and 90 % of the floor's saturated rate; ms; 'sent' = answered ÷ offered",
    table(
      ['scenario', 'rate', 'p50', 'p99', 'p99.9', 'sent', 'floor p50', 'p99', 'p99.9'],
      summaries.flatMap((s) =>
        s.latency.map((l) => [
          `${s.id.slice(1)} ${s.title} @${l.fraction * 100}%`,
          int(l.rate),
          ms(l.product.p50),
          ms(l.product.p99),
          ms(l.product.p999),
          fixed(l.product.achieved / l.rate, 2),
          ms(l.floor.p50),
          ms(l.floor.p99),
          ms(l.floor.p999),
        ]),
      ),
    ),
    '',
    'Targets (issues 8 and 18)',
    table(
      ['target', 'measured', 'goal', 'result'],
      input.checks.map((c) => {
        const off = c.sense === '>=' ? c.measured / c.goal : c.goal / c.measured
        const verdict = c.pass ? 'PASS' : `FAIL (${fixed(off, 2)}× of the goal)`
        const value = c.unit === 'ms' || c.unit === 'MiB' ? ms(c.measured) : fixed(c.measured, 2)
        return [
          c.target,
          `${value} ${c.unit}`.trim(),
          `${c.sense} ${c.goal} ${c.unit}`.trim(),
          verdict,
        ]
      }),
    ),
    '',
    'Cost curve: scenario 1 against review size (one connection, closed loop); ms',
    table(
      ['bytes', 'p50', 'p99', 'CPU µs/req', 'floor p50', 'floor p99', 'floor CPU'],
      input.sizeCurve
        .filter((p) => p.target === 'product')
        .map((p) => {
          const f = input.sizeCurve.find((q) => q.target === 'floor' && q.x === p.x)
          return [
            int(p.x),
            ms(p.p50Ms),
            ms(p.p99Ms),
            int(p.cpuUsPerRequest),
            ms(f?.p50Ms ?? Number.NaN),
            ms(f?.p99Ms ?? Number.NaN),
            int(f?.cpuUsPerRequest ?? Number.NaN),
          ]
        }),
    ),
    '',
    'Cost curve: against view size (scenario 1, one connection); start → ready; RSS',
    table(
      ['servers', 'objects', 'ready ms', 'p50 ms', 'p99 ms', 'RSS ready', 'RSS after', 'peak MiB'],
      input.views.map((v) => [
        int(v.servers),
        int(v.objects),
        int(v.readyMs),
        ms(v.latency.p50Ms),
        ms(v.latency.p99Ms),
        int(v.rssAtReadyMiB),
        int(v.rssAfterMiB),
        int(v.peakMiB),
      ]),
    ),
    '',
    'Micro-benchmark: the in-process pipeline (thread CPU µs per op; share of parse + review + encode)',
  )
  for (const m of input.micro) {
    out.push(
      `${m.id.slice(1)} ${m.title} (${int(m.bytes)} bytes): ${fixed(m.totalNs / 1000, 1)} µs`,
      ...m.phases.map(
        (p) =>
          `    ${p.phase.padEnd(30)} ${fixed(p.nsPerOp / 1000, 1).padStart(8)} µs ${fixed(p.share * 100, 0).padStart(4)} %`,
      ),
    )
  }
  const profileLines = (p: ProfileSummary) => [
    ...p.top.map(
      (f) =>
        `  ${fixed(f.share * 100, 1).padStart(5)} %  ${f.name} ${f.where}${f.via ? `  (called in ${f.via})` : ''}`,
    ),
    `  by origin: ${p.byOrigin
      .filter((o) => o.share >= 0.01)
      .map((o) => `${o.origin} ${fixed(o.share * 100, 0)} %`)
      .join(', ')}`,
  ]
  out.push(
    '',
    `CPU profile of the product, saturated scenario 1 (self time, ${int(input.profile.busyMs)} ms busy)`,
    ...profileLines(input.profile),
    '',
    `CPU profile of the floor, same load (${int(input.floorProfile.busyMs)} ms busy)`,
    ...profileLines(input.floorProfile),
  )
  return out.join('\n') + '\n'
}
