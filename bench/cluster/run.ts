/**
 * `npm run bench:cluster`: mcp-admission through a real kube-apiserver, beside a Go
 * controller-runtime webhook doing the same work (the peer, bench/cluster/peer/). Builds dist/
 * and the peer, starts etcd and kube-apiserver (the e2e suite's binaries and harness), stores
 * growing populations of MCPServers, their RunConfig ConfigMaps and the configs they name, and
 * at each size starts both services and measures their start-up and memory and a burst of proxy
 * Deployment re-applies without webhooks and through each's; at one size, the latency of single
 * writes at 1 and 32 writers. First, both must answer the same reviews with the same patches.
 * Prints the report and writes bench/results/cluster/ (cluster.json, report.txt, *.svg). See
 * bench/README.md.
 */

import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createEnvironment, ensureBinaries } from '../../test/e2e/harness/environment.ts'
import type { Environment } from '../../test/e2e/harness/environment.ts'
import { apiClient, must } from './client.ts'
import { writeConfigCrds } from './crds.ts'
import { CLUSTER_CONFIG } from './config.ts'
import { proxyDeployments } from './deployments.ts'
import type { Context } from './measure.ts'
import { measureBursts, measureLatency, webhookSwitch } from './measure.ts'
import { startMeter } from './meter.ts'
import type { CpuUse } from './meter.ts'
import { createNamespaces, growPopulation, serverUids } from './population.ts'
import type { PopulationStep } from './population.ts'
import { clusterCharts } from './plots.ts'
import { checkGoals, formatReport } from './report.ts'
import type { BurstSummary, LatencyCell, Profiles, ViewFacts } from './report.ts'
import { profileLargest } from './profiling.ts'
import { PEER, ensurePeer } from './peer.ts'
import { checkSamePatches } from './same-patches.ts'
import { OPERATOR_USER, measureSlowApi } from './slow-api.ts'
import type { SlowApiResult } from './slow-api.ts'
import { holdReconcilerLease, startService } from './service.ts'
import type { ServiceName, StartedService } from './service.ts'
import { summariseServiceLog } from './service-log.ts'
import { IndexRanges, runWrites } from './writers.ts'
import type { WriteRun } from './writers.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const RESULTS = join(ROOT, 'bench/results/cluster')
const config = CLUSTER_CONFIG
const began = performance.now()
const loadAtStart = loadavg()

function progress(message: string): void {
  const seconds = ((performance.now() - began) / 1000).toFixed(0).padStart(4)
  process.stderr.write(`[${seconds} s] ${message}\n`)
}

// Whatever happens, nothing outlives the run: exiting kills every child the harness started.
setTimeout(() => {
  progress(`watchdog: still running after ${config.watchdogMs / 60_000} min, giving up`)
  process.exit(2)
}, config.watchdogMs).unref()

function build(): void {
  progress('building dist/ (tsc -p tsconfig.build.json)')
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: ROOT, stdio: 'inherit' },
  )
}

/** Starts a service; also the API server's and its own CPU to ready. */
async function started(
  env: Environment,
  name: ServiceName,
): Promise<{ service: StartedService; cpu: CpuUse }> {
  const meter = startMeter()
  const service = await startService(env, name, config.readyLimitMs)
  return { service, cpu: meter() }
}

async function main(): Promise<void> {
  build()
  await ensurePeer(progress)
  const binaries = await ensureBinaries(undefined, progress)
  progress(`starting etcd ${binaries.etcdVersion} and kube-apiserver ${binaries.kubeVersion}`)
  // The e2e environment: the CRD fixtures and the service's identity and RBAC; the service is
  // started (as a pod reads the cluster: in-cluster config from its service account's files)
  // and its webhooks switched on and off by the measurements.
  const tmp = await mkdtemp(join(tmpdir(), 'mcp-admission-bench-cluster-'))
  // The fixtures define the four kinds the e2e suite tests; the table's ten others get CRDs of
  // the bench's own (crds.ts), so that the view lists every kind, as in a v0.63.0 cluster.
  const crds = await writeConfigCrds(join(tmp, 'crds'))
  const env = await createEnvironment({ binaries, service: false, crds: ['fixtures', crds] })
  const api = apiClient(env.plane, Math.max(config.burst.concurrency, config.populateConcurrency))
  // Only this run's results: a quick run's logs must not sit beside a full run's figures.
  await rm(RESULTS, { recursive: true, force: true })
  await mkdir(RESULTS, { recursive: true })
  try {
    const kubeVersion = (
      JSON.parse(must(await api.send('GET', '/version'), 'version').body) as { gitVersion: string }
    ).gitVersion
    await createNamespaces(api)
    await holdReconcilerLease(api)
    const deployments = proxyDeployments()

    const population: PopulationStep[] = []
    const views: ViewFacts[] = []
    const bursts: BurstSummary[] = []
    const burstRuns: WriteRun[] = []
    let latency: { runs: WriteRun[]; cells: LatencyCell[] } | undefined
    let patchesChecked: string[] = []
    let slowApi: SlowApiResult | undefined
    const measurementCpu: CpuUse[] = []
    const burstIndices = Array.from({ length: config.burst.deployments }, (_, i) => i)
    let revision = 2
    let uids = new Map<number, string>()
    let stored = 0
    for (const servers of config.viewSizes) {
      progress(`storing ${servers.toLocaleString('en')} MCPServers and their RunConfig ConfigMaps`)
      // The first size through the REST API; the rest in bulk (etcd.ts), unless asked otherwise.
      const via = stored === 0 || config.populateVia === 'api' ? 'api' : 'etcd'
      const step = await growPopulation(api, stored, servers, {
        concurrency: config.populateConcurrency,
        via,
      })
      population.push(step)
      progress(
        `  ${step.objects} objects ${via === 'api' ? 'through the API' : 'into etcd'} in ${step.seconds.toFixed(1)} s (${step.objectsPerSecond.toFixed(0)}/s)`,
      )
      // Stored servers keep their uids as the population grows: list them once, as far as needed.
      const needed = Math.min(servers, Math.max(config.burst.deployments, config.latencyAt))
      if (uids.size < needed) uids = await serverUids(api, needed)
      if (stored === 0) {
        // The burst's Deployments, as the operator wrote them before mcp-admission was installed.
        const created = await runWrites(api, deployments, uids, {
          operation: 'CREATE',
          writers: config.burst.concurrency,
          webhooks: false,
          indices: burstIndices,
          revision: 0,
          deadlineMs: config.burst.deadlineMs,
        })
        if (created.failures > 0 || created.writes !== burstIndices.length)
          throw new Error(
            `creating the burst's Deployments failed: ${created.failureSamples.join('; ')}`,
          )
      }
      stored = servers

      // Each started alone (its start-up and memory undisturbed), the first in turn alternating.
      const order: ServiceName[] =
        population.length % 2 === 1 ? ['mcp-admission', PEER] : [PEER, 'mcp-admission']
      const running = new Map<ServiceName, { service: StartedService; cpu: CpuUse }>()
      try {
        for (const name of order) {
          progress(`starting ${name} with ${servers.toLocaleString('en')} servers stored`)
          const one = await started(env, name)
          running.set(name, one)
          progress(
            `  ready in ${(one.service.readyMs / 1000).toFixed(2)} s, RSS ${one.service.rssAtReadyMiB.toFixed(0)} MiB`,
          )
        }
        const context: Context = {
          api,
          env,
          deployments,
          uids,
          services: new Map(
            [...running].map(([name, { service }]) => [
              name,
              { admission: service.admission, pid: service.pid },
            ]),
          ),
          progress,
        }
        if (patchesChecked.length === 0) {
          const admissionOf = (name: ServiceName) => running.get(name)!.service.admission
          patchesChecked = await checkSamePatches(context, [
            admissionOf('mcp-admission'),
            admissionOf(PEER),
          ])
          progress(`same answers from both on ${patchesChecked.length} reviews`)
        }
        const setWebhooks = webhookSwitch(context)
        const meter = startMeter()
        if (servers === config.latencyAt) {
          progress('latency: proxy Deployment CREATE and UPDATE, without and through each webhook')
          latency = await measureLatency(
            context,
            setWebhooks,
            new IndexRanges(config.burst.deployments, servers),
          )
        }
        progress(`burst: ${config.burst.deployments} proxy Deployments re-applied`)
        const burst = await measureBursts(context, setWebhooks, servers, burstIndices, revision)
        revision += 100
        measurementCpu.push(meter())
        await setWebhooks(false)
        bursts.push(...burst.summaries)
        burstRuns.push(...burst.runs)
        for (const [name, { service, cpu }] of running) {
          await service.admission.stop()
          const log = await summariseServiceLog(
            service.admission.process.logFile,
            service.startedAtMs,
            join(RESULTS, `${name}-${servers}.log`),
          )
          views.push({
            service: name,
            servers,
            objects: population.reduce((sum, p) => sum + p.objects, 0),
            readyMs: service.readyMs,
            rssAtReadyMiB: service.rssAtReadyMiB,
            startPeakMiB: service.startPeakMiB,
            heapUsedMiB: service.heapUsedMiB,
            heapTotalMiB: service.heapTotalMiB,
            externalMiB: service.externalMiB,
            serviceCpuSeconds: cpu.byProcess[name] ?? Number.NaN,
            apiServerCpuSeconds: cpu.byProcess['kube-apiserver'] ?? Number.NaN,
            log,
          })
        }
      } finally {
        for (const { service } of running.values()) await service.admission.stop()
      }
      if (servers === config.viewSizes[0]) {
        // After this size's own measurements, with fresh instances, so none of them is slowed.
        progress(
          `slow API server: the burst as the operator, reads ${config.slowApi.delayMs} ms late`,
        )
        slowApi = await measureSlowApi(
          { api, env, deployments, uids, progress },
          servers,
          burstIndices,
          revision,
          RESULTS,
        )
        revision += 100
      }
    }

    // Where the time goes, when a goal is missed (always when quick, to keep the path working).
    const goals = checkGoals(latency?.cells ?? [], bursts, views)
    let profiles: Profiles | undefined
    if (config.quick || goals.some((goal) => !goal.holds)) {
      const servers = views.at(-1)!.servers
      progress(
        `profiling mcp-admission: start-up and a burst with ${servers.toLocaleString('en')} servers`,
      )
      profiles = await profileLargest(
        servers,
        { api, env, deployments, uids, progress },
        { indices: burstIndices, revision: revision++ },
        join(tmp, 'profile'),
        RESULTS,
      )
    }

    const seconds = (performance.now() - began) / 1000
    const other = measurementCpu.map((c) => c.otherCores)
    const header = [
      `mcp-admission through a real API server, ${new Date().toISOString()}${config.quick ? ' (BENCH_QUICK: small views, rough numbers)' : ''}`,
      `Kubernetes ${kubeVersion} (kube-apiserver and etcd ${binaries.etcdVersion}, built with ${binaries.goVersion}), Node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? '?'}); ${seconds.toFixed(0)} s in all`,
      `Machine: load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} at start, ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} at end; ` +
        `other processes used ${other.map((o) => o.toFixed(2)).join(', ')} cores during the measurements at each size`,
      'Everything (etcd, kube-apiserver, mcp-admission, the writers) shares this machine: absolute times are its, ratios travel better.',
    ]
    const notes = [
      `before timing, both services answered the same ${patchesChecked.length} reviews with the same patch and warnings (same-patches.ts): ${patchesChecked.join('; ')}.`,
      `the Go peer (${PEER}) is controller-runtime's manager and webhook server with client-go's API reader for the two live reads and informer caches of the four ToolHive kinds, trimmed as mcp-admission trims its own; it reads the cluster through a kubeconfig with the same service account's token.`,
      'latencies are measured at the writer (keep-alive HTTPS, admin client certificate), closed loop; the rounds run without, then through each service, then the same backwards, so a drift of the machine falls on all alike.',
      "the measured mcp-admission is a follower: a stand-in replica holds the reconciler's Lease, so no status is written during the run (see service.ts); the peer has no reconciler.",
      "CPU per review is the process's CPU over the runs through it ÷ the reviews its own histogram counted; /proc counts CPU in 10 ms ticks, so short runs (BENCH_QUICK) are coarse.",
      "a 'with' UPDATE is re-mutated by the webhook (the operator's object lacks the stamps): each write is a real change in both phases.",
      `the slow API server runs write as the operator (impersonated, with system:masters) and carry its stamps (the RunConfig ConfigMap's checksum, the MCPServer's generation, read from the API server); both services are started once more for them, reading through a kubeconfig whose proxy-url names a delaying CONNECT proxy (test/e2e/harness/delaying-proxy.ts; the peer over HTTP/1.1, DISABLE_HTTP2, so each read is one draw), mcp-admission with --operator-service-account=toolhive-system/toolhive-operator. The delay is on only while a run writes. The proxy counts each client write into a tunnel as a request (TLS handshakes included).`,
    ]
    const text = formatReport({
      header,
      population,
      latency: latency?.cells ?? [],
      latencyServers: config.latencyAt,
      bursts,
      burstConcurrency: config.burst.concurrency,
      views,
      goals,
      ...(profiles ? { profiles } : {}),
      ...(slowApi
        ? {
            slowApi: { runs: slowApi.summaries, warnings: slowApi.warnings, writer: OPERATOR_USER },
          }
        : {}),
      notes,
    })
    await mkdir(RESULTS, { recursive: true })
    await writeFile(join(RESULTS, 'report.txt'), text)
    const json = {
      date: new Date().toISOString(),
      kubernetes: kubeVersion,
      etcd: binaries.etcdVersion,
      node: process.version,
      cpus: availableParallelism(),
      loadavg: { start: loadAtStart, end: loadavg() },
      durationSeconds: seconds,
      config,
      goals,
      population,
      latency: latency?.cells ?? [],
      patchesChecked,
      bursts,
      views,
      profiles,
      slowApi,
      measurementCpu,
      runs: [...(latency?.runs ?? []), ...burstRuns],
    }
    await writeFile(join(RESULTS, 'cluster.json'), JSON.stringify(json, null, 2) + '\n')
    for (const [name, svg] of Object.entries(
      clusterCharts(latency?.runs ?? [], config.latencyAt, views, bursts),
    ))
      await writeFile(join(RESULTS, name), svg)
    process.stdout.write(text)
    progress(`wrote ${RESULTS}/ (cluster.json, report.txt, *.svg)`)
  } finally {
    api.close()
    await env.stop()
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
