/**
 * `npm run bench`: builds dist/, starts the server as it ships with a 10,000-server in-memory
 * view, measures it against the floor from a separate load process, draws the cost curves,
 * profiles scenario 1, runs the micro-benchmark, then prints the tables and writes
 * bench/results/ (bench.json, report.txt, *.svg, *.cpuprofile). See bench/README.md.
 */

import { execFileSync, fork } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CONFIG } from './config.ts'
import type { Context, CurvePoint, ViewPoint } from './measure.ts'
import {
  checkScenarios,
  deploymentSizeCurve,
  measureScenarios,
  median,
  viewPoint,
} from './measure.ts'
import type { MicroResult } from './micro.ts'
import { lineChart } from './plot.ts'
import { memory } from './proc.ts'
import type { ServerProcess } from './processes.ts'
import { LoadWorker, startFloor, startProduct } from './processes.ts'
import { summariseProfile } from './profile.ts'
import type { ProfileSummary } from './profile.ts'
import { checkTargets, formatReport, summariseScenarios } from './report.ts'
import { writePopulation } from './population.ts'
import { buildScenarios } from './scenarios.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = join(ROOT, 'bench/results')
const began = performance.now()
const loadAtStart = loadavg()[0]!

function progress(message: string): void {
  const seconds = ((performance.now() - began) / 1000).toFixed(0).padStart(4)
  process.stderr.write(`[${seconds} s] ${message}\n`)
}

function build(): void {
  progress('building dist/ (tsc -p tsconfig.build.json)')
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: ROOT, stdio: 'inherit' },
  )
}

async function population(tmp: string, servers: number) {
  const dir = join(tmp, `view-${servers}`)
  const written = await writePopulation(dir, servers)
  progress(
    `population of ${servers} MCPServers: ${written.objects} objects, ${(written.bytes / 2 ** 20).toFixed(0)} MiB YAML`,
  )
  return { dir, ...written }
}

/** Saturated scenario 1 on a server started with `start(flags)` under --cpu-prof. */
async function profile(
  worker: LoadWorker,
  ca: string,
  bodies: readonly string[],
  dir: string,
  start: (flags: string[]) => Promise<ServerProcess>,
): Promise<{ summary: ProfileSummary; file: string }> {
  await mkdir(dir, { recursive: true })
  const server = await start(['--cpu-prof', `--cpu-prof-dir=${dir}`])
  const { warmupMs, durationMs, top } = CONFIG.profile
  const result = await worker.run({
    port: server.port,
    ca,
    path: '/mutate',
    bodies,
    serverPid: server.pid,
    connections: CONFIG.saturated.connections,
    warmupMs,
    durationMs,
  })
  const stopping = performance.now()
  await server.stop()
  const tailUs = (performance.now() - stopping) * 1000
  progress(`profiled ${Math.round(result.throughput)} req/s`)
  const [file] = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error(`no profile written in ${dir}`)
  const path = join(dir, file)
  const summary = summariseProfile(path, top, {
    fromEndUs: durationMs * 1000 + tailUs,
    toEndUs: tailUs,
  })
  return { summary, file: path }
}

function runMicro(): Promise<MicroResult[]> {
  return new Promise((resolve, reject) => {
    const child = fork(
      join(ROOT, 'bench/micro.ts'),
      [String(CONFIG.servers), String(CONFIG.micro.ms)],
      { stdio: 'inherit', execArgv: [...process.execArgv, '--expose-gc'] },
    )
    child.once('message', (results) => {
      resolve(results as MicroResult[])
    })
    child.once('exit', (code) => {
      reject(new Error(`micro-benchmark exited with ${code}`))
    })
  })
}

function charts(sizeCurve: readonly CurvePoint[], views: readonly ViewPoint[]) {
  const series = (target: 'product' | 'floor', key: 'p50Ms' | 'p99Ms') => ({
    name: `${target === 'product' ? 'mcp-admission' : 'floor'} ${key === 'p50Ms' ? 'p50' : 'p99'}`,
    points: sizeCurve.filter((p) => p.target === target).map((p) => [p.x / 1024, p[key]] as const),
    dashed: target === 'floor',
  })
  const bySize = [...views].sort((a, b) => a.servers - b.servers)
  return {
    'deployment-size.svg': lineChart({
      title: 'Scenario 1 latency against review size',
      xLabel: 'AdmissionReview size, KiB',
      yLabel: 'latency, ms',
      logY: true,
      series: [
        series('product', 'p50Ms'),
        series('product', 'p99Ms'),
        series('floor', 'p50Ms'),
        series('floor', 'p99Ms'),
      ],
    }),
    'view-size-latency.svg': lineChart({
      title: 'Scenario 1 latency against view size',
      xLabel: 'MCPServers in the view',
      yLabel: 'latency, ms',
      series: [
        { name: 'p50', points: bySize.map((v) => [v.servers, v.latency.p50Ms] as const) },
        { name: 'p99', points: bySize.map((v) => [v.servers, v.latency.p99Ms] as const) },
      ],
    }),
    'view-size-rss.svg': lineChart({
      title: 'Server memory against view size',
      xLabel: 'MCPServers in the view',
      yLabel: 'MiB',
      logY: true,
      series: [
        { name: 'RSS at ready', points: bySize.map((v) => [v.servers, v.rssAtReadyMiB] as const) },
        { name: 'RSS after load', points: bySize.map((v) => [v.servers, v.rssAfterMiB] as const) },
        { name: 'peak RSS', points: bySize.map((v) => [v.servers, v.peakMiB] as const) },
        {
          name: 'goal (10k: 120 MiB)',
          points: [[10_000, 120]] as const,
          dashed: true,
        },
      ],
    }),
    'view-size-startup.svg': lineChart({
      title: 'Start to ready against view size',
      xLabel: 'MCPServers in the view',
      yLabel: 'seconds',
      logY: true,
      series: [
        {
          name: 'start → ready',
          points: bySize.map((v) => [v.servers, v.readyMs / 1000] as const),
        },
      ],
    }),
  }
}

async function main(): Promise<void> {
  build()
  const tmp = await mkdtemp(join(tmpdir(), 'mcp-admission-bench-'))
  const worker = LoadWorker.start()
  // Every stop() is idempotent: whatever is still running when this ends is stopped here.
  const cleanup: (() => Promise<void>)[] = [() => worker.stop()]
  try {
    const embedded = await startProduct({ certDir: join(tmp, 'certs-embedded') })
    await embedded.stop()
    const restarted = await startProduct({ certDir: join(tmp, 'certs-embedded') })
    await restarted.stop()
    progress(
      `embedded default ready in ${Math.round(embedded.readyMs)} ms (certificates in place: ${Math.round(restarted.readyMs)} ms)`,
    )

    const main = await population(tmp, CONFIG.servers)
    const certDir = join(tmp, 'certs')
    const product = await startProduct({ objects: main.dir, certDir })
    cleanup.unshift(() => product.stop())
    const rssAtReady = memory(product.pid).rss
    progress(`server with ${CONFIG.servers} MCPServers ready in ${Math.round(product.readyMs)} ms`)
    const floor = await startFloor(certDir)
    cleanup.unshift(() => floor.stop())
    const ca = await readFile(join(certDir, 'ca.crt'), 'utf8')
    const context: Context = {
      worker,
      ca,
      product,
      floor,
      scenarios: await buildScenarios(),
      progress,
    }
    await checkScenarios(context)
    const views: ViewPoint[] = []
    const failedViews: { servers: number; error: string }[] = []
    views.push(await viewPoint(context, product, CONFIG.servers, main.objects, rssAtReady))

    const measurements = await measureScenarios(context)
    const rssAfter = memory(product.pid)
    const sizeCurve = await deploymentSizeCurve(context)
    await product.stop()

    const s1 = context.scenarios[0]!.bodies
    progress('profiling the product under saturated scenario 1')
    const profiled = await profile(worker, ca, s1, join(tmp, 'profile'), (nodeFlags) =>
      startProduct({ objects: main.dir, certDir, nodeFlags }),
    )
    const floorProfiled = await profile(worker, ca, s1, join(tmp, 'floor-profile'), (flags) =>
      startFloor(certDir, flags),
    )
    await rm(main.dir, { recursive: true })

    for (const servers of CONFIG.viewSizes.filter((n) => n !== CONFIG.servers)) {
      const view = await population(tmp, servers)
      try {
        const server = await startProduct({ objects: view.dir, certDir })
        cleanup.push(() => server.stop())
        progress(`server with ${servers} MCPServers ready in ${Math.round(server.readyMs)} ms`)
        views.push(await viewPoint(context, server, servers, view.objects, memory(server.pid).rss))
        await server.stop()
      } catch (error) {
        // A view too large for this machine is a finding, not a reason to lose the rest.
        failedViews.push({ servers, error: String(error).slice(0, 2000) })
        progress(`view of ${servers} MCPServers failed: ${String(error).slice(0, 300)}`)
      }
      await rm(view.dir, { recursive: true })
    }
    await floor.stop()

    progress('micro-benchmark')
    const micro = await runMicro()

    const summaries = summariseScenarios(context.scenarios, measurements)
    views.sort((a, b) => a.servers - b.servers)
    const checks = checkTargets(
      summaries,
      {
        embeddedReadyMs: embedded.readyMs,
        embeddedRestartMs: restarted.readyMs,
        viewReadyMs: product.readyMs,
        rssAtReadyMiB: rssAtReady / 2 ** 20,
      },
      sizeCurve,
      views,
    )
    const seconds = (performance.now() - began) / 1000
    const other = measurements.map((m) => m.result.otherCpuCores)
    const header = [
      `mcp-admission benchmark, ${new Date().toISOString()}${CONFIG.quick ? ' (BENCH_QUICK: rough numbers)' : ''}`,
      `Node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? '?'}), ` +
        `view of ${CONFIG.servers.toLocaleString('en')} MCPServers (${main.objects.toLocaleString('en')} objects), ` +
        `${CONFIG.repeats} runs per figure (medians), ${seconds.toFixed(0)} s in all`,
      `Noise: other processes used ${median(other).toFixed(2)} cores (median; max ${Math.max(...other).toFixed(2)}) ` +
        `during the scenario runs; load average ${loadAtStart.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end`,
      ...failedViews.map(
        (f) => `View of ${f.servers} MCPServers FAILED: ${f.error.split('\n')[0]}`,
      ),
    ].join('\n')
    const text = formatReport({
      header,
      summaries,
      checks,
      sizeCurve,
      views,
      micro,
      profile: profiled.summary,
      floorProfile: floorProfiled.summary,
    })
    await mkdir(RESULTS, { recursive: true })
    await writeFile(join(RESULTS, 'report.txt'), text)
    const json = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: availableParallelism(),
      config: CONFIG,
      durationSeconds: seconds,
      startup: {
        embeddedReadyMs: embedded.readyMs,
        embeddedRestartMs: restarted.readyMs,
        viewReadyMs: product.readyMs,
      },
      memory: {
        rssAtReadyMiB: rssAtReady / 2 ** 20,
        rssAfterMiB: rssAfter.rss / 2 ** 20,
        peakMiB: rssAfter.peak / 2 ** 20,
      },
      scenarios: summaries,
      targets: checks,
      deploymentSizeCurve: sizeCurve,
      viewSizeCurve: views,
      failedViews,
      micro,
      profile: { product: profiled.summary, floor: floorProfiled.summary },
      measurements,
    }
    await writeFile(join(RESULTS, 'bench.json'), JSON.stringify(json, null, 2) + '\n')
    for (const [name, svg] of Object.entries(charts(sizeCurve, views)))
      await writeFile(join(RESULTS, name), svg)
    await copyFile(profiled.file, join(RESULTS, 'product-s1.cpuprofile'))
    await copyFile(floorProfiled.file, join(RESULTS, 'floor-s1.cpuprofile'))
    process.stdout.write(text)
    progress(`wrote ${RESULTS}/ (bench.json, report.txt, *.svg, *.cpuprofile)`)
  } finally {
    for (const stop of cleanup) await stop().catch(() => undefined)
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
