/**
 * `npm run bench:check`: what `--crds` costs `check` (issue 28, item 5: within 2× of `check`
 * without it, over a directory of 1,000 objects). Writes 1,000 ToolHive objects (the first of
 * the benchmark's 1,000-server population: 100 of each of its nine config kinds, then 100
 * MCPServers; 10 YAML files of 100), builds dist/, then runs
 * `node dist/main.js check DIR` as a user would, with and without `--crds <ToolHive v0.63.0
 * CRDs>`, alternating, and prints the wall-clock and CPU time of each process (start-up and CRD
 * compilation included), the medians and their ratios. On a shared machine the CPU time is the
 * figure to compare: the wall clock also counts waiting for a CPU.
 *
 * The CRDs are the release's own files, from the Go module cache as the e2e suite gets them (Go
 * needed), or any directory given as BENCH_CRDS. BENCH_RUNS (default 7) runs of each; every run
 * is bounded at 120 s. Takes about a minute on an idle 2-core machine.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { releaseSources } from '../test/e2e/toolhive/releases.ts'
import type { KubeObject } from '../src/policy/kube/object.ts'
import { runChild } from './child-run.ts'
import { median } from './stats.ts'
import { populationObjects, toYaml } from './population.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const OBJECTS = 1_000
const PER_FILE = 100
const RUNS = Number(process.env['BENCH_RUNS'] ?? 7)
const RUN_TIMEOUT_MS = 120_000

interface Run {
  /** Wall-clock time of the whole process. */
  readonly ms: number
  /** Its CPU time (user + system, all threads), which other load on the machine barely changes. */
  readonly cpuMs: number
  readonly code: number
  readonly summary: string
}

async function main(): Promise<void> {
  const crds = process.env['BENCH_CRDS'] ?? (await releaseSources('v0.63.0')).crds
  const work = await mkdtemp(join(tmpdir(), 'mcp-admission-bench-check-'))
  try {
    const objects: KubeObject[] = []
    for (const object of populationObjects(OBJECTS)) {
      if (object.kind !== 'ConfigMap') objects.push(object)
      if (objects.length === OBJECTS) break
    }
    for (let f = 0; f * PER_FILE < objects.length; f++) {
      const docs = objects.slice(f * PER_FILE, (f + 1) * PER_FILE).map((o) => toYaml(o))
      await writeFile(join(work, `objects-${String(f).padStart(2, '0')}.yaml`), docs.join('---\n'))
    }
    const kinds = new Map<string, number>()
    for (const o of objects) kinds.set(String(o.kind), (kinds.get(String(o.kind)) ?? 0) + 1)
    log(`${objects.length} objects (${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')})`)
    log(`CRDs: ${crds}`)

    log('building dist/ (tsc -p tsconfig.build.json)')
    const built = await run([
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      'tsconfig.build.json',
    ])
    if (built.code !== 0) throw new Error('tsc failed')

    const check = (extra: string[]) =>
      run([
        '--import',
        join(ROOT, 'bench/cpu-at-exit.ts'),
        join(ROOT, 'dist/main.js'),
        'check',
        '--namespace',
        'bench',
        ...extra,
        work,
      ])
    // One unrecorded run of each warms the file cache.
    await check([])
    await check(['--crds', crds])
    const without: Run[] = []
    const withCrds: Run[] = []
    for (let i = 0; i < RUNS; i++) {
      without.push(await check([]))
      withCrds.push(await check(['--crds', crds]))
      const [a, b] = [without.at(-1)!, withCrds.at(-1)!]
      log(
        `run ${i + 1}/${RUNS}: without ${seconds(a.ms)} (CPU ${seconds(a.cpuMs)}), with --crds ${seconds(b.ms)} (CPU ${seconds(b.cpuMs)})`,
      )
    }
    for (const [name, runs] of [
      ['without --crds', without],
      ['with --crds   ', withCrds],
    ] as const) {
      const ms = runs.map((r) => r.ms)
      log(
        `${name}: wall median ${seconds(median(ms))} (min ${seconds(Math.min(...ms))}, max ${seconds(Math.max(...ms))}), CPU median ${seconds(median(runs.map((r) => r.cpuMs)))}; exit ${runs[0]!.code}: ${runs[0]!.summary}`,
      )
    }
    const ratio = (of: (r: Run) => number) =>
      (median(withCrds.map(of)) / median(without.map(of))).toFixed(2)
    log(
      `with/without --crds: wall ${ratio((r) => r.ms)}×, CPU ${ratio((r) => r.cpuMs)}× (goal: within 2×)`,
    )
    const load = loadavg()[0]!
    if (load > cpus().length)
      log(
        `note: load average ${load.toFixed(1)} on ${cpus().length} CPUs: wall times include waiting for a CPU; compare CPU times`,
      )
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/** Runs `node args…`, timing the whole process; its last stdout line is the report's summary. */
async function run(args: string[]): Promise<Run> {
  const child = await runChild(args, { cwd: ROOT, timeoutMs: RUN_TIMEOUT_MS })
  process.stderr.write(child.stderrTail)
  return {
    ms: child.ms,
    cpuMs: child.cpuMs,
    code: child.code,
    summary: child.stdout.trim().split('\n').at(-1) ?? '',
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

function log(line: string): void {
  process.stdout.write(`${line}\n`)
}

await main()
