/**
 * The slow API server (issue 49): the burst written as the operator while the services' own reads
 * of the API server are slow. Both services are started once more, each reading the cluster
 * through a kubeconfig whose `proxy-url` names a delaying CONNECT proxy (the e2e harness's), and
 * mcp-admission told the operator's exact account (`--operator-service-account=namespace/name`),
 * which is what lets it admit the operator's own writes when its live reads miss their deadline.
 * The writes carry the stamps the operator writes (the RunConfig ConfigMap's checksum and the
 * owner's generation, read from the API server), since the fallback keeps only stamps a write
 * already carries. Per share of delayed reads, one run without the webhooks and one through each
 * service; the delay is on only while a run writes, so registering and removing the webhooks (and
 * every other measurement) see the API server as it is.
 */

import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import {
  OPERATOR_ACCOUNT,
  adminClient,
  startDelayingProxy,
} from '../../test/e2e/harness/environment.ts'
import type { DelayingProxy, Environment } from '../../test/e2e/harness/environment.ts'
import type { ApiClient } from './client.ts'
import { must, runPool } from './client.ts'
import { CLUSTER_CONFIG } from './config.ts'
import { REVISION_ANNOTATION } from './deployments.ts'
import type { ProxyDeployments } from './deployments.ts'
import type { Context } from './measure.ts'
import { webhookSwitch } from './measure.ts'
import { PEER } from './peer.ts'
import { namespaceOf, serverName } from './population.ts'
import { percentile } from './report.ts'
import type { SlowApiRun } from './report.ts'
import { startService } from './service.ts'
import { summariseServiceLog } from './service-log.ts'
import type { ServiceName, StartedService } from './service.ts'
import { runWrites } from './writers.ts'
import type { Webhooks, WriteRun } from './writers.ts'

export type { SlowApiRun }

/** The operator's service account, as the API server names it to webhooks. */
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_ACCOUNT.namespace}:${OPERATOR_ACCOUNT.name}`
const FALLBACKS_METRIC = 'mcp_admission_live_read_fallbacks_total'

/** The owner's generation and its RunConfig ConfigMap's checksum, per server index. */
interface Stamps {
  readonly checksum: string
  readonly generation: number
}

async function readStamps(
  api: ApiClient,
  indices: readonly number[],
  concurrency: number,
): Promise<Map<number, Stamps>> {
  const stamps = new Map<number, Stamps>()
  const get = async (path: string): Promise<KubeObject> =>
    JSON.parse(must(await api.send('GET', path), path).body) as KubeObject
  const { samples } = await runPool(indices.length, concurrency, 120_000, async (n) => {
    const i = indices[n]!
    const [name, namespace] = [serverName(i), namespaceOf(i)]
    const [server, configMap] = await Promise.all([
      get(`/apis/toolhive.stacklok.dev/v1beta1/namespaces/${namespace}/mcpservers/${name}`),
      get(`/api/v1/namespaces/${namespace}/configmaps/${name}-runconfig`),
    ])
    const checksum = effectiveContentChecksum(configMap)
    const generation = Number(server.metadata?.generation)
    if (checksum === undefined || !(generation > 0))
      throw new Error(`server ${i}: no checksum or generation to stamp`)
    stamps.set(i, { checksum, generation })
    return { status: 200, body: '' }
  })
  const failed = samples.find((sample) => !sample.ok)
  if (failed || stamps.size !== indices.length)
    throw new Error(`reading the operator's stamps failed: ${failed?.message ?? 'stopped'}`)
  return stamps
}

/** The proxy Deployments with the stamps in their pod template, as the operator writes them. */
function stampedDeployments(
  deployments: ProxyDeployments,
  stamps: ReadonlyMap<number, Stamps>,
): ProxyDeployments {
  const key = `"${REVISION_ANNOTATION}":`
  return {
    collection: (i) => deployments.collection(i),
    body(i, uid, revision) {
      const body = deployments.body(i, uid, revision)
      const { checksum, generation } = stamps.get(i)!
      if (body.split(key).length !== 2)
        throw new Error('the Deployment template holds its revision annotation more than once')
      return body.replace(
        key,
        `"${ANNOTATIONS.runConfigChecksum}":"${checksum}","${ANNOTATIONS.mcpServerGeneration}":"${generation}",${key}`,
      )
    },
  }
}

/** mcp-admission's service-account kubeconfig with `proxy-url` on its cluster. */
async function proxiedKubeconfig(env: Environment, proxy: DelayingProxy): Promise<string> {
  const config = JSON.parse(await readFile(await env.serviceAccountKubeconfig(), 'utf8')) as {
    clusters: { cluster: Record<string, unknown> }[]
  }
  for (const { cluster } of config.clusters) cluster['proxy-url'] = proxy.url
  const file = join(env.plane.dir, 'slow-api.kubeconfig')
  await writeFile(file, JSON.stringify(config), { mode: 0o600 })
  return file
}

/** The stored pod-template annotations of server i's Deployment. */
async function storedStamps(
  api: ApiClient,
  deployments: ProxyDeployments,
  i: number,
): Promise<Record<string, string>> {
  const stored = JSON.parse(
    must(await api.send('GET', `${deployments.collection(i)}/${serverName(i)}`), 'GET').body,
  ) as { spec: { template: { metadata: { annotations?: Record<string, string> } } } }
  return stored.spec.template.metadata.annotations ?? {}
}

/** The runs, and the warnings in each service's log (kept in `logsTo` as `<service>-slow-api.log`). */
export interface SlowApiResult {
  readonly summaries: SlowApiRun[]
  readonly runs: WriteRun[]
  readonly warnings: {
    readonly service: ServiceName
    readonly message: string
    readonly count: number
  }[]
}

export async function measureSlowApi(
  base: Omit<Context, 'services'>,
  servers: number,
  indices: readonly number[],
  firstRevision: number,
  logsTo: string,
): Promise<SlowApiResult> {
  const { slowApi, burst, readyLimitMs } = CLUSTER_CONFIG
  const { env, progress } = base
  const proxy = await startDelayingProxy()
  const started = new Map<ServiceName, StartedService>()
  let setWebhooks: ((wanted: Webhooks) => Promise<void>) | undefined
  const operator = adminClient(env.plane, {
    maxSockets: burst.concurrency,
    timeoutMs: 60_000,
    impersonate: { user: OPERATOR_USER, groups: ['system:masters'] },
  })
  try {
    const kubeconfig = await proxiedKubeconfig(env, proxy)
    progress(`slow API server: starting both services reading through ${proxy.url}`)
    started.set(
      'mcp-admission',
      await startService(env, 'mcp-admission', readyLimitMs, {
        kubeconfig,
        args: [`--operator-service-account=${OPERATOR_ACCOUNT.namespace}/${OPERATOR_ACCOUNT.name}`],
      }),
    )
    // HTTP/1.1, as mcp-admission reads: the proxy decides per request only when a connection
    // carries one at a time (over HTTP/2 one draw would delay every stream of the connection).
    started.set(
      PEER,
      await startService(env, PEER, readyLimitMs, { kubeconfig, env: { DISABLE_HTTP2: '1' } }),
    )
    const context: Context = {
      ...base,
      services: new Map(
        [...started].map(([name, s]) => [name, { admission: s.admission, pid: s.pid }]),
      ),
    }
    const switchTo = webhookSwitch(context)
    setWebhooks = switchTo
    const deployments = stampedDeployments(
      base.deployments,
      await readStamps(base.api, indices, burst.concurrency),
    )
    let revision = firstRevision
    // The stamps must be the operator's own: mcp-admission, reading in time, keeps them as written.
    await switchTo('mcp-admission')
    const first = indices[0]!
    const body = deployments.body(first, base.uids.get(first)!, revision++)
    const path = `${deployments.collection(first)}/${serverName(first)}`
    must(await operator.send('PUT', path, body), "the operator's stamped Deployment")
    const written = (
      JSON.parse(body) as {
        spec: { template: { metadata: { annotations: Record<string, string> } } }
      }
    ).spec.template.metadata.annotations
    const stored = await storedStamps(base.api, deployments, first)
    for (const key of [ANNOTATIONS.runConfigChecksum, ANNOTATIONS.mcpServerGeneration])
      if (stored[key] !== written[key])
        throw new Error(
          `the bench's ${key} is not the one mcp-admission stamps (${written[key]} written, ${stored[key]} stored)`,
        )

    const summaries: SlowApiRun[] = []
    const runs: WriteRun[] = []
    for (const share of slowApi.shares) {
      for (const webhooks of [false, 'mcp-admission', PEER] as const) {
        await switchTo(webhooks)
        const ours = webhooks === 'mcp-admission' ? started.get('mcp-admission') : undefined
        const fallbacksBefore = ours ? await ours.admission.metric(FALLBACKS_METRIC) : 0
        proxy.set({ delayMs: slowApi.delayMs, share })
        proxy.resetCounts()
        const run = await runWrites(operator, deployments, base.uids, {
          operation: 'UPDATE',
          writers: burst.concurrency,
          webhooks,
          indices,
          revision: revision++,
          deadlineMs: slowApi.deadlineMs,
        })
        const counts = proxy.counts()
        proxy.set({ delayMs: 0, share: 0 })
        // Answers already held back still arrive: let them, before the webhooks are switched.
        await sleep(slowApi.delayMs)
        const fallbacks = ours
          ? (await ours.admission.metric(FALLBACKS_METRIC)) - fallbacksBefore
          : undefined
        runs.push(run)
        const summary: SlowApiRun = {
          servers,
          delayMs: slowApi.delayMs,
          share,
          webhooks,
          deployments: indices.length,
          wallSeconds: run.wallMs / 1000,
          admitted: run.latenciesMs.length,
          refused: run.failures + indices.length - run.writes,
          failureSamples: run.failureSamples,
          p50Ms: percentile(run.latenciesMs, 0.5),
          p99Ms: percentile(run.latenciesMs, 0.99),
          proxy: counts,
          ...(fallbacks === undefined ? {} : { fallbacks }),
        }
        summaries.push(summary)
        progress(
          `  ${Math.round(share * 100)} % of reads ${slowApi.delayMs} ms late, ${webhooks ? `with ${webhooks}` : 'without'}: ${summary.admitted} admitted, ${summary.refused} refused in ${summary.wallSeconds.toFixed(1)} s; proxy ${counts.delayed}/${counts.requests} delayed`,
        )
      }
    }
    await switchTo(false)
    const warnings: SlowApiResult['warnings'][number][] = []
    for (const [name, service] of started) {
      await service.admission.stop()
      const log = await summariseServiceLog(
        service.admission.process.logFile,
        service.startedAtMs,
        join(logsTo, `${name}-slow-api.log`),
      )
      warnings.push(...log.warnings.map((w) => ({ service: name, ...w })))
    }
    return { summaries, runs, warnings }
  } finally {
    proxy.set({ delayMs: 0, share: 0 })
    // Nothing of this measurement stays in front of the API server for the ones after it.
    await setWebhooks?.(false)
    operator.close()
    for (const service of started.values()) await service.admission.stop()
    await proxy.close()
  }
}
