/**
 * Stores a cluster's worth of ToolHive objects in the API server: MCPServers, their RunConfig
 * ConfigMaps and MCPWebhookConfigs, shaped by the in-process benchmark's builders
 * (bench/population.ts). It grows: each size adds the servers the previous one lacks. The first
 * size is created through the REST API (its rate is reported); larger ones are written into the
 * API server's etcd in bulk (etcd.ts says why), unless `BENCH_POPULATE=api`.
 *
 * No status conditions are stored: the measured mcp-admission is a follower whose reconciler
 * stays idle (service.ts), so nothing would read or write them during the run.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import { mcpServer, runConfigJson, runConfigMap, webhookConfig } from '../population.ts'
import { webhookConfigCount } from '../population.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import type { ApiClient } from './client.ts'
import { must, runPool } from './client.ts'
import { asCreated, etcdUrlOfApiServer, putAll, storageKey, waitUntilCached } from './etcd.ts'

/** Namespaces the population spreads over (as bench/population.ts: team-00 … team-49). */
export const NAMESPACES = 50
const GROUP = 'toolhive.stacklok.dev'

export function namespaceOf(i: number): string {
  return `team-${String(i % NAMESPACES).padStart(2, '0')}`
}

export function serverName(i: number): string {
  return `mcp-${String(i).padStart(6, '0')}`
}

/** A stdio server (60 % of them, as in bench/population.ts): its proxy is capped at 1 replica. */
export function isStdio(i: number): boolean {
  return i % 5 < 3
}

export async function createNamespaces(api: ApiClient): Promise<void> {
  for (let n = 0; n < NAMESPACES; n++) {
    const response = await api.send('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespaceOf(n) },
    })
    if (response.status !== 409) must(response, `namespace ${namespaceOf(n)}`)
  }
}

/** One object to store: where it goes, through the API or in etcd. */
interface Placed {
  readonly group: string
  readonly version: string
  readonly resource: string
  readonly namespace: string
  readonly name: string
  readonly object: KubeObject
}

function collectionOf(placed: Placed): string {
  const base = placed.group === '' ? '/api/v1' : `/apis/${placed.group}/${placed.version}`
  return `${base}/namespaces/${placed.namespace}/${placed.resource}`
}

/** The objects that grow a population from `from` to `to` servers. */
function* growth(from: number, to: number): Generator<Placed> {
  const configsBefore = from === 0 ? 0 : webhookConfigCount(from)
  for (let c = configsBefore; c < webhookConfigCount(to); c++) {
    const [name, namespace] = [`hooks-${c}`, namespaceOf(c)]
    const object = webhookConfig(name, namespace, 2 + (c % 4))
    yield {
      group: GROUP,
      version: 'v1alpha1',
      resource: 'mcpwebhookconfigs',
      namespace,
      name,
      object,
    }
  }
  // References point at configs that exist from the first size on, in the server's namespace.
  const referable = webhookConfigCount(Math.max(from, 1))
  for (let i = from; i < to; i++) {
    const [name, namespace] = [serverName(i), namespaceOf(i)]
    const r = i % referable
    const server = mcpServer(name, namespace, i, {
      uid: '',
      generation: 1,
      stdio: isStdio(i),
      overrides: i % 4 === 0,
      ...(i % 7 === 0 && namespaceOf(r) === namespace ? { ref: `hooks-${r}` } : {}),
    })
    // uid and generation are the API server's to assign.
    const metadata = { ...server.metadata, uid: undefined, generation: undefined }
    yield {
      group: GROUP,
      version: 'v1beta1',
      resource: 'mcpservers',
      namespace,
      name,
      object: { ...server, metadata },
    }
    const configMap = runConfigMap(name, namespace, runConfigJson(name, i, isStdio(i)))
    yield {
      group: '',
      version: 'v1',
      resource: 'configmaps',
      namespace,
      name: `${name}-runconfig`,
      object: configMap,
    }
  }
}

export interface PopulationStep {
  readonly servers: number
  readonly objects: number
  /** Through the REST API, or written into etcd and then listed by the API server. */
  readonly via: 'api' | 'etcd'
  readonly seconds: number
  readonly objectsPerSecond: number
}

async function throughApi(
  api: ApiClient,
  objects: readonly Placed[],
  concurrency: number,
): Promise<void> {
  const { samples } = await runPool(objects.length, concurrency, 30 * 60_000, (n) =>
    api.send('POST', collectionOf(objects[n]!), objects[n]!.object),
  )
  const failed = samples.find((sample) => !sample.ok)
  if (failed) throw new Error(`populating failed: ${failed.message ?? String(failed.status)}`)
  if (samples.length !== objects.length)
    throw new Error(`populating stopped after ${samples.length} of ${objects.length}`)
}

async function intoEtcd(
  api: ApiClient,
  objects: Iterable<Placed>,
  servers: number,
): Promise<number> {
  const time = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
  function* stored() {
    for (const placed of objects)
      yield {
        key: storageKey(placed.group, placed.resource, placed.namespace, placed.name),
        object: asCreated(placed.object, time, placed.group !== ''),
      }
  }
  const { count, revision } = await putAll(etcdUrlOfApiServer(), stored())
  // Done when the API server's cache holds them all, as after writes through it.
  const limitMs = 10 * 60_000
  await waitUntilCached(api, `/apis/${GROUP}/v1alpha1/mcpwebhookconfigs`, revision, 0, limitMs)
  await waitUntilCached(api, `/apis/${GROUP}/v1beta1/mcpservers`, revision, servers, limitMs)
  await waitUntilCached(api, '/api/v1/configmaps', revision, servers, limitMs)
  return count
}

/** Grows the stored population from `from` to `to` MCPServers. */
export async function growPopulation(
  api: ApiClient,
  from: number,
  to: number,
  options: { readonly concurrency: number; readonly via: 'api' | 'etcd' },
): Promise<PopulationStep> {
  const started = performance.now()
  let objects: number
  if (options.via === 'api') {
    const all = [...growth(from, to)]
    await throughApi(api, all, options.concurrency)
    objects = all.length
  } else objects = await intoEtcd(api, growth(from, to), to)
  const seconds = (performance.now() - started) / 1000
  return { servers: to, objects, via: options.via, seconds, objectsPerSecond: objects / seconds }
}

/** The stored uid of every MCPServer in [0, count), listed page by page. */
export async function serverUids(api: ApiClient, count: number): Promise<Map<number, string>> {
  const uids = new Map<number, string>()
  let next = ''
  do {
    const query = `limit=5000${next === '' ? '' : `&continue=${encodeURIComponent(next)}`}`
    const path = `/apis/${GROUP}/v1beta1/mcpservers?${query}`
    let response = await api.send('GET', path)
    // A page the cache cannot serve yet ("Too large resource version") is asked for again.
    for (let retry = 0; response.status === 504 && retry < 20; retry++) {
      await sleep(1000)
      response = await api.send('GET', path)
    }
    const page = JSON.parse(must(response, 'list').body) as {
      items: { metadata: { name: string; uid: string } }[]
      metadata: { continue?: string }
    }
    for (const { metadata } of page.items) {
      const match = /^mcp-(\d{6})$/.exec(metadata.name)
      const i = match ? Number(match[1]) : -1
      if (i >= 0 && i < count) uids.set(i, metadata.uid)
    }
    next = page.metadata.continue ?? ''
  } while (next !== '')
  return uids
}
