/**
 * `node bench/perf-split.ts [scenario] [seconds]` (Linux, needs `perf` and root or
 * perf_event_paranoid <= 1): where the main thread's time goes per request, for the product and
 * the floor under the same saturated load, split by layer (kernel, OpenSSL, V8 JSON and strings,
 * V8 builtins and runtime, GC, JIT-compiled JavaScript, libc, Node native).
 *
 * V8's own profiler cannot give this split: it charges most native work done outside JavaScript
 * (socket reads and writes, TLS records) to the last API function called, `writeUtf8String`.
 * `perf` samples the thread whatever it runs, and `--perf-basic-prof-only-functions` names the
 * JIT-compiled functions. Expects `dist/` built (`npm run build`); uses a 10,000-server view.
 */

import { execFileSync, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CONFIG } from './config.ts'
import { scenarioJob } from './measure.ts'
import { writePopulation } from './population.ts'
import type { ServerProcess } from './processes.ts'
import { LoadWorker, startFloor, startProduct } from './processes.ts'
import type { ScenarioId } from './scenarios.ts'
import { buildScenarios } from './scenarios.ts'

const SAMPLES_PER_SECOND = 2000
const JIT_NAMES = '--perf-basic-prof-only-functions'

/** Which layer a `perf report` row (`dso`, `[k]` or `[.]`, symbol) belongs to. */
export function layerOf(dso: string, kernel: boolean, symbol: string): string {
  if (kernel) return 'kernel (syscalls, TCP, interrupts)'
  if (dso.startsWith('[JIT]') || symbol.startsWith('JS:')) return 'JIT-compiled JavaScript'
  if (/sha\d|aes|gcm|ghash|EVP_|ssl|tls|bn_|ecp_|x25519|chacha|poly1305/i.test(symbol))
    return 'OpenSSL (TLS records, hashes)'
  if (/Json|simdutf|[Uu]tf8|StringTable|String::|Factory.*String/.test(symbol))
    return 'V8 JSON and strings'
  if (
    /Heap|Scaveng|MarkCompact|Sweeper|Evacuat|Marking|RecordWrite|Remembered|Allocat/.test(symbol)
  )
    return 'V8 GC and allocation'
  if (symbol.startsWith('Builtins_')) return 'V8 builtins (property access, calls, promises)'
  if (/v8::|Runtime_|Transition/.test(symbol)) return 'V8 runtime (objects, shapes)'
  if (dso.startsWith('libc') || /malloc|free|memmove|memcpy|memset/.test(symbol))
    return 'libc (malloc, memcpy)'
  return 'Node, libuv, llhttp and other native'
}

/** µs of main-thread time per request by layer, from `perf report --sort dso,sym -n`. */
export function splitReport(report: string, requests: number): Map<string, number> {
  const layers = new Map<string, number>()
  for (const line of report.split('\n')) {
    const row = /^\s*[\d.]+%\s+(\d+)\s+(\[JIT\] tid \d+|\S+)\s+\[([k.])\]\s+(.*)$/.exec(line)
    if (row === null) continue
    const [, samples, dso, mode, symbol] = row as unknown as [
      string,
      string,
      string,
      string,
      string,
    ]
    const layer = layerOf(dso, mode === 'k', symbol)
    const us = (Number(samples) * 1e6) / SAMPLES_PER_SECOND / requests
    layers.set(layer, (layers.get(layer) ?? 0) + us)
  }
  return layers
}

async function record(
  server: ServerProcess,
  worker: LoadWorker,
  job: Parameters<LoadWorker['run']>[0],
  output: string,
): Promise<Map<string, number>> {
  await worker.run({ ...job, durationMs: CONFIG.primeMs })
  const perf = spawn(
    'perf',
    ['record', '-q', '-F', String(SAMPLES_PER_SECOND), '-t', String(server.pid), '-o', output],
    { stdio: 'inherit' },
  )
  const exited = new Promise((resolve) => perf.once('exit', resolve))
  const result = await worker.run({ ...job, warmupMs: 0 })
  perf.kill('SIGINT')
  await exited
  const report = execFileSync(
    'perf',
    ['report', '-i', output, '--no-children', '--sort', 'dso,sym', '-n', '--stdio', '-g', 'none'],
    { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] },
  ).toString()
  return splitReport(report, result.requests)
}

async function main(): Promise<void> {
  const [scenarioId = 's1', seconds = '5'] = process.argv.slice(2)
  const tmp = await mkdtemp(join(tmpdir(), 'mcp-admission-perf-'))
  const servers: ServerProcess[] = []
  const worker = LoadWorker.start()
  try {
    const view = join(tmp, 'view')
    await writePopulation(view, 10_000)
    const certDir = join(tmp, 'certs')
    const product = await startProduct({ objects: view, certDir, nodeFlags: [JIT_NAMES] })
    servers.push(product)
    const floor = await startFloor(certDir, [JIT_NAMES])
    servers.push(floor)
    const scenario = (await buildScenarios()).find((s) => s.id === (scenarioId as ScenarioId))
    if (scenario === undefined) throw new Error(`no scenario ${scenarioId} (s1 to s4)`)
    const ca = await readFile(join(certDir, 'ca.crt'), 'utf8')
    const job = (server: ServerProcess) => ({
      ...scenarioJob(server, ca, scenario),
      connections: CONFIG.saturated.connections,
      warmupMs: 0,
      durationMs: Number(seconds) * 1000,
    })
    const split = {
      product: await record(product, worker, job(product), join(tmp, 'product.data')),
      floor: await record(floor, worker, job(floor), join(tmp, 'floor.data')),
    }
    const layers = [...new Set([...split.product.keys(), ...split.floor.keys()])]
    const of = (side: Map<string, number>, layer: string) => side.get(layer) ?? 0
    layers.sort((a, b) => of(split.product, b) - of(split.product, a))
    const total = (side: Map<string, number>) => [...side.values()].reduce((a, b) => a + b, 0)
    console.log(`${scenario.title}: main-thread µs per request, saturated (${seconds} s each)`)
    console.log(`${'layer'.padEnd(48)} product   floor  difference`)
    for (const layer of [...layers, 'total']) {
      const [p, f] =
        layer === 'total'
          ? [total(split.product), total(split.floor)]
          : [of(split.product, layer), of(split.floor, layer)]
      console.log(
        `${layer.padEnd(48)} ${p.toFixed(1).padStart(7)} ${f.toFixed(1).padStart(7)} ${(p - f).toFixed(1).padStart(11)}`,
      )
    }
  } finally {
    await worker.stop()
    for (const server of servers) {
      await server.stop()
      await rm(`/tmp/perf-${server.pid}.map`, { force: true })
    }
    await rm(tmp, { recursive: true, force: true })
  }
}

if (import.meta.main) await main()
