/**
 * The measurements: every scenario against the product and the floor (saturated, then at fixed
 * fractions of the floor's rate), and the cost curves against Deployment size and view size.
 * Product and floor runs alternate within each repeat, so drift on a shared machine hits both.
 */

import { CONFIG } from './config.ts'
import type { LoadResult } from './load.ts'
import { memory } from './proc.ts'
import type { LoadWorker, ServerProcess } from './processes.ts'
import { postReview } from './processes.ts'
import { deploymentReview } from './scenarios.ts'
import { withToken } from './token.ts'
import type { Scenario, ScenarioId } from './scenarios.ts'
import { median } from './stats.ts'

export { median }

export type TargetKind = 'product' | 'floor'

export interface Context {
  readonly worker: LoadWorker
  /** PEM of the CA both servers' certificate chains to. */
  readonly ca: string
  readonly product: ServerProcess
  readonly floor: ServerProcess
  readonly scenarios: readonly Scenario[]
  readonly progress: (message: string) => void
}

export interface Measurement {
  readonly scenario: ScenarioId
  readonly target: TargetKind
  readonly repeat: number
  readonly mode: 'saturated' | 'rate'
  /** Fraction of the floor's median saturated rate (rate mode). */
  readonly fraction?: number
  /** Offered requests per second (rate mode). */
  readonly rate?: number
  readonly result: LoadResult
}

/** The part of a load job that names the server and the reviews to send it. */
export function scenarioJob(server: ServerProcess, ca: string, scenario: Scenario) {
  return {
    port: server.port,
    ca,
    path: `/${scenario.webhook}`,
    bodies: scenario.bodies,
    serverPid: server.pid,
  }
}

function serverOf(context: Context, target: TargetKind): ServerProcess {
  return target === 'product' ? context.product : context.floor
}

/** The product's answer to the first and last body of every scenario is right; the floor answers. */
export async function checkScenarios(context: Context): Promise<void> {
  for (const scenario of context.scenarios) {
    const path = `/${scenario.webhook}`
    for (const template of [scenario.bodies[0]!, scenario.bodies.at(-1)!]) {
      const body = withToken(template, 0x5eed)
      const answer = await postReview(context.product.port, context.ca, path, body)
      const problem =
        answer.status === 200 ? scenario.check(answer.json as never) : `HTTP ${answer.status}`
      if (problem !== undefined) throw new Error(`scenario ${scenario.id} (product): ${problem}`)
      const floor = await postReview(context.floor.port, context.ca, path, body)
      if (floor.status !== 200) throw new Error(`scenario ${scenario.id} (floor): ${floor.status}`)
    }
  }
}

/**
 * Saturated runs of every scenario on both servers, then the fixed-rate runs. Each server first
 * serves every scenario for a while unrecorded: V8 needs some thousands of requests to optimise
 * the hot paths, and without it the first repeat is markedly slower than the others.
 */
export async function measureScenarios(context: Context): Promise<Measurement[]> {
  const measurements: Measurement[] = []
  const order = (repeat: number): TargetKind[] =>
    repeat % 2 === 0 ? ['floor', 'product'] : ['product', 'floor']
  // The parts of a load job every run shares: where to send which reviews, whose CPU to read.
  const jobFor = (scenario: Scenario, kind: TargetKind) =>
    scenarioJob(serverOf(context, kind), context.ca, scenario)
  for (const scenario of context.scenarios) {
    for (const kind of order(0)) {
      await context.worker.run({
        ...jobFor(scenario, kind),
        connections: CONFIG.saturated.connections,
        warmupMs: 0,
        durationMs: CONFIG.primeMs,
      })
    }
  }
  context.progress('primed both servers with every scenario')
  for (let repeat = 0; repeat < CONFIG.repeats; repeat++) {
    for (const scenario of context.scenarios) {
      for (const kind of order(repeat)) {
        const result = await context.worker.run({ ...jobFor(scenario, kind), ...CONFIG.saturated })
        measurements.push({
          scenario: scenario.id,
          target: kind,
          repeat,
          mode: 'saturated',
          result,
        })
        context.progress(
          `saturated ${scenario.id} ${kind} #${repeat + 1}: ${Math.round(result.throughput)} req/s`,
        )
      }
    }
  }
  for (let repeat = 0; repeat < CONFIG.repeats; repeat++) {
    for (const scenario of context.scenarios) {
      const floorRate = median(
        measurements
          .filter(
            (m) => m.scenario === scenario.id && m.target === 'floor' && m.mode === 'saturated',
          )
          .map((m) => m.result.throughput),
      )
      for (const fraction of CONFIG.rate.fractions) {
        for (const kind of order(repeat)) {
          const rate = Math.round(floorRate * fraction)
          const result = await context.worker.run({
            ...jobFor(scenario, kind),
            rate,
            connections: CONFIG.rate.connections,
            warmupMs: CONFIG.rate.warmupMs,
            durationMs: CONFIG.rate.durationMs,
          })
          measurements.push({
            scenario: scenario.id,
            target: kind,
            repeat,
            mode: 'rate',
            fraction,
            rate,
            result,
          })
          context.progress(
            `${fraction * 100} % rate ${scenario.id} ${kind} #${repeat + 1}: p99 ${result.latencyMs.p99.toFixed(2)} ms`,
          )
        }
      }
    }
  }
  return measurements
}

export interface CurvePoint {
  readonly target: TargetKind
  /** Review bytes (Deployment curve) or MCPServers in the view (view curve). */
  readonly x: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly cpuUsPerRequest: number
  readonly requests: number
}

/**
 * A curve point from repeated runs: the median of each figure (single-connection windows of a
 * second or two swing with whatever else the machine does; one run made the slopes noisy).
 */
function point(target: TargetKind, x: number, results: readonly LoadResult[]): CurvePoint {
  return {
    target,
    x,
    p50Ms: median(results.map((result) => result.latencyMs.p50)),
    p99Ms: median(results.map((result) => result.latencyMs.p99)),
    cpuUsPerRequest: median(results.map((result) => result.cpuUsPerRequest)),
    requests: results.reduce((sum, result) => sum + result.requests, 0),
  }
}

/**
 * One connection, closed loop: the service time of one request, without queueing. Large reviews
 * take tens of milliseconds each, so their window grows with the size (4 ms per KiB) to keep a
 * hundred or so samples.
 */
function serial(
  context: Pick<Context, 'worker' | 'ca'>,
  server: ServerProcess,
  bodies: readonly string[],
) {
  const kib = bodies[0]!.length / 1024
  return context.worker.run({
    port: server.port,
    ca: context.ca,
    path: '/mutate',
    bodies,
    serverPid: server.pid,
    connections: 1,
    warmupMs: CONFIG.curve.warmupMs,
    durationMs: Math.max(CONFIG.curve.durationMs, Math.round(kib * 4)),
  })
}

/** Scenario 1 latency against the review's size, on the product and on the floor. */
export async function deploymentSizeCurve(context: Context): Promise<CurvePoint[]> {
  const points: CurvePoint[] = []
  for (const bytes of CONFIG.deploymentSizes) {
    const body = JSON.stringify(deploymentReview(bytes))
    const answer = await postReview(context.product.port, context.ca, '/mutate', withToken(body, 1))
    const problem = context.scenarios[0]!.check(answer.json as never)
    if (problem !== undefined) throw new Error(`Deployment of ${bytes} bytes: ${problem}`)
    const runs = { product: [] as LoadResult[], floor: [] as LoadResult[] }
    for (let repeat = 0; repeat < CONFIG.repeats; repeat++) {
      for (const target of ['product', 'floor'] as const) {
        runs[target].push(await serial(context, serverOf(context, target), [body]))
      }
    }
    for (const target of ['product', 'floor'] as const) {
      const curvePoint = point(target, body.length, runs[target])
      points.push(curvePoint)
      context.progress(`size ${body.length} B ${target}: p50 ${curvePoint.p50Ms.toFixed(2)} ms`)
    }
  }
  return points
}

export interface ViewPoint {
  readonly servers: number
  readonly objects: number
  readonly readyMs: number
  readonly rssAtReadyMiB: number
  readonly rssAfterMiB: number
  readonly peakMiB: number
  readonly latency: CurvePoint
}

/** Scenario 1 latency and the server's memory with a view of `servers` MCPServers. */
export async function viewPoint(
  context: Pick<Context, 'worker' | 'ca' | 'scenarios'>,
  server: ServerProcess,
  servers: number,
  objects: number,
  rssAtReady: number,
): Promise<ViewPoint> {
  const results: LoadResult[] = []
  for (let repeat = 0; repeat < CONFIG.repeats; repeat++) {
    results.push(await serial(context, server, context.scenarios[0]!.bodies))
  }
  const after = memory(server.pid)
  return {
    servers,
    objects,
    readyMs: server.readyMs,
    rssAtReadyMiB: rssAtReady / 2 ** 20,
    rssAfterMiB: after.rss / 2 ** 20,
    peakMiB: after.peak / 2 ** 20,
    latency: point('product', servers, results),
  }
}
