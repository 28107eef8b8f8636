/**
 * Where mcp-admission's time and memory go when a goal is missed: one more start of the service
 * under `node --cpu-prof` with the largest view, and one burst with the webhooks, summarised as two
 * windows of the same profile (start → ready, and the burst) with dist/ mapped back to src/; and,
 * at ready, its memory before and after a full garbage collection (how much of it is live).
 */

import { mkdir, copyFile } from 'node:fs/promises'
import { join } from 'node:path'
import { summariseProfile } from '../profile.ts'
import { memory } from '../proc.ts'
import { CLUSTER_CONFIG } from './config.ts'
import { collectGarbage } from './inspector.ts'
import type { Context } from './measure.ts'
import type { Profiles } from './report.ts'
import { profileIn, startService } from './service.ts'
import { runWrites } from './writers.ts'

export async function profileLargest(
  servers: number,
  base: Omit<Context, 'services'>,
  burst: { readonly indices: readonly number[]; readonly revision: number },
  dir: string,
  saveTo: string,
): Promise<Profiles | undefined> {
  const service = await startService(base.env, 'mcp-admission', CLUSTER_CONFIG.readyLimitMs, {
    nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--inspect=127.0.0.1:0'],
  })
  // Up to one poll (20 ms) after ready: the start-up window may hold a few idle samples more.
  const readyAt = performance.now()
  let window: { start: number; end: number; seconds: number }
  let memoryFacts: Profiles['memory']
  try {
    await collectGarbage(service.admission.process.logFile)
    memoryFacts = {
      rssAtReadyMiB: service.rssAtReadyMiB,
      heapUsedAtReadyMiB: service.heapUsedMiB,
      rssAfterGcMiB: memory(service.pid).rss / 2 ** 20,
      heapUsedAfterGcMiB: (await service.admission.metric('nodejs_heap_size_used_bytes')) / 2 ** 20,
    }
    await base.env.registerWebhooks(service.admission)
    const start = performance.now()
    const run = await runWrites(base.api, base.deployments, base.uids, {
      operation: 'UPDATE',
      writers: CLUSTER_CONFIG.burst.concurrency,
      webhooks: 'mcp-admission',
      indices: burst.indices,
      revision: burst.revision,
      deadlineMs: CLUSTER_CONFIG.burst.deadlineMs,
    })
    window = { start, end: performance.now(), seconds: run.wallMs / 1000 }
    await base.env.unregisterWebhooks()
  } finally {
    await service.admission.stop()
  }
  // The profile ends when the process exits, just before stop() returns.
  const endedAt = performance.now()
  const file = await profileIn(dir)
  if (!file) return undefined
  await mkdir(saveTo, { recursive: true })
  await copyFile(file, join(saveTo, 'mcp-admission.cpuprofile'))
  const us = (ms: number) => Math.max(0, ms * 1000)
  const top = CLUSTER_CONFIG.profileTop
  return {
    servers,
    memory: memoryFacts,
    startup: summariseProfile(file, top, { fromEndUs: Infinity, toEndUs: us(endedAt - readyAt) }),
    burst: summariseProfile(file, top, {
      fromEndUs: us(endedAt - window.start),
      toEndUs: us(endedAt - window.end),
    }),
    burstSeconds: window.seconds,
  }
}
