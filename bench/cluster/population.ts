/**
 * Stores a cluster's worth of ToolHive objects in the API server: MCPServers, their RunConfig
 * ConfigMaps and the configs of the nine config kinds they name, shaped by the in-process
 * benchmark's builders (bench/population.ts). It grows: each size adds the servers and configs
 * the previous one lacks; the servers a size adds name configs among those of that size (so the
 * servers of the smaller sizes name the first configs of their namespaces, where bench/view-peak.ts
 * spreads every server over all of its size's). The first size is created through the REST API
 * (its rate is reported); larger ones are written into the API server's etcd in bulk (etcd.ts
 * says why), unless `BENCH_POPULATE=api`.
 *
 * No status conditions are stored: the measured mcp-admission is a follower whose reconciler
 * stays idle (service.ts), so nothing would read or write them during the run.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import { entryOf } from '../../src/policy/kinds.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { CONFIG_KINDS, NAMESPACES, configCount, configObject } from '../population.ts'
import { configsPerNamespace, namespaceOf, serverReferences } from '../population.ts'
import { mcpServer, runConfigJson, runConfigMap } from '../population.ts'
import type { ApiClient } from './client.ts'
import { must, runPool } from './client.ts'
import { asCreated, etcdUrlOfApiServer, putAll, storageKey, waitUntilCached } from './etcd.ts'

/** The population's namespaces (team-00 … team-99), as bench/population.ts spreads it. */
export { NAMESPACES, namespaceOf }
const GROUP = 'toolhive.stacklok.dev'

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
  for (const kind of CONFIG_KINDS) {
    const { versions, plural } = entryOf(kind.kind)
    for (let c = from === 0 ? 0 : configCount(from); c < configCount(to); c++) {
      const object = configObject(kind, c)
      const { name, namespace } = object.metadata as { name: string; namespace: string }
      yield { group: GROUP, version: versions[0]!, resource: plural, namespace, name, object }
    }
  }
  // References name configs of this size, stored above, in the server's namespace.
  const perNamespace = configsPerNamespace(to)
  for (let i = from; i < to; i++) {
    const [name, namespace] = [serverName(i), namespaceOf(i)]
    const server = mcpServer(name, namespace, i, {
      uid: '',
      generation: 1,
      stdio: isStdio(i),
      overrides: i % 4 === 0,
      references: serverReferences(i, perNamespace),
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
  for (const { kind } of CONFIG_KINDS) {
    const { versions, plural } = entryOf(kind)
    await waitUntilCached(api, `/apis/${GROUP}/${versions[0]}/${plural}`, revision, 0, limitMs)
  }
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
