/**
 * `npm run soak`: mcp-admission against a real API server for SOAK_SECONDS (default 600) at a
 * steady half load, with MCPServers and RunConfig ConfigMaps churning (created, updated, deleted)
 * so the cache, the reconciler and the webhook all work; RSS and heap are sampled every 10 s and
 * their growth reported. Bounded in time, loopback only, stops by itself. Not part of `npm test`.
 */

import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createEnvironment, ensureBinaries } from '../e2e/harness/environment.ts'
import { runLoad } from '../faults/load.ts'
import { review, runConfigMap } from '../helpers/objects.ts'

const seconds = Number(process.env['SOAK_SECONDS'] ?? '600')
const rate = Number(process.env['SOAK_RATE'] ?? '1000')
const log = (line: string) => process.stdout.write(`soak: ${line}\n`)

const started = Date.now()
const env = await createEnvironment({ binaries: await ensureBinaries() })
log(`environment up in ${((Date.now() - started) / 1000).toFixed(1)} s`)
try {
  const ns = await env.namespace('soak')
  const reviewFile = join(env.plane.dir, 'soak-review.json')
  await writeFile(reviewFile, JSON.stringify(review(runConfigMap(), { uid: 'soak-uid' })))
  const caFile = join(env.plane.dir, 'soak-ca.crt')
  await writeFile(caFile, env.admission.caPem)
  log(`${seconds} s at ${rate} reviews/s with churn in namespace ${ns}`)

  const deadline = Date.now() + seconds * 1000
  const load = runLoad({
    url: `${env.admission.admissionUrl}/mutate`,
    caFile,
    reviewFile,
    concurrency: 4,
    durationMs: seconds * 1000,
    rate,
  })
  const churn = (async () => {
    let round = 0
    while (Date.now() < deadline) {
      const name = `churn-${round % 50}`
      const server = {
        apiVersion: 'toolhive.stacklok.dev/v1beta1',
        kind: 'MCPServer',
        metadata: { name, namespace: ns },
        spec: { transport: round % 2 ? 'stdio' : 'sse', replicas: (round % 3) + 1 },
      }
      const map = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: `${name}-runconfig`,
          namespace: ns,
          labels: { 'toolhive.stacklok.io/component': 'run-config' },
        },
        data: { 'runconfig.json': `{"round":${round}}` },
      }
      await env.kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [server, map] }),
      )
      if (round % 7 === 6)
        await env.kubectl([
          'delete',
          'mcpserver.toolhive.stacklok.dev,configmap',
          name,
          `${name}-runconfig`,
          '-n',
          ns,
          '--ignore-not-found',
        ])
      round++
      await sleep(250)
    }
    return round
  })()

  const samples: { t: number; rss: number; heap: number }[] = []
  while (Date.now() < deadline) {
    await sleep(10_000)
    const [rss, heap] = await Promise.all([
      env.admission.metric('process_resident_memory_bytes'),
      env.admission.metric('nodejs_heap_size_used_bytes'),
    ])
    samples.push({ t: Math.round((seconds * 1000 - (deadline - Date.now())) / 1000), rss, heap })
    log(
      `t=${samples.at(-1)!.t}s rss=${(rss / 2 ** 20).toFixed(1)} MiB heap=${(heap / 2 ** 20).toFixed(1)} MiB`,
    )
  }
  const [summary, rounds] = await Promise.all([load, churn])
  // Growth from the first sample after warm-up to the mean of the last three.
  const first = samples[Math.min(1, samples.length - 1)]!
  const tail = samples.slice(-3)
  const mean = (key: 'rss' | 'heap') => tail.reduce((sum, s) => sum + s[key], 0) / tail.length
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
  log(`load ${JSON.stringify(summary)}; churn rounds ${rounds}`)
  log(
    `rss ${mib(first.rss)} → ${mib(mean('rss'))} MiB (${mib(mean('rss') - first.rss)} MiB), heap ${mib(first.heap)} → ${mib(mean('heap'))} MiB (${mib(mean('heap') - first.heap)} MiB), max rss ${mib(Math.max(...samples.map((s) => s.rss)))} MiB, ${summary.failed} failed of ${summary.ok + summary.failed}`,
  )
  process.exitCode = summary.failed === 0 ? 0 : 1
} finally {
  await env.stop()
}
