/**
 * A stand-in API server for the benchmarks that read a cluster (bench/view-peak.ts,
 * bench/audit.ts): HTTPS on loopback, serving the collections it is given as list pages shaped
 * like kube-apiserver's (managedFields, uid, creationTimestamp, resourceVersion; no apiVersion or
 * kind on items), filtered by `labelSelector` as the API server filters them, with API discovery
 * for the ToolHive group, and holding every watch open without events until told to expire them
 * (410 Gone, after which a reflector lists everything again). Each page is built when asked for,
 * from the object's index, so the stand-in holds no population of its own and its memory does
 * not compete with the measured process. With `cachePages` each page's bytes are kept once built
 * and served again as they are: building a page of 500 proxy Deployments costs about as much CPU
 * as parsing it, which a client timed against the stand-in on the same cores would pay twice.
 */

import type { ServerResponse } from 'node:http'
import { createServer } from 'node:https'
import type { Server } from 'node:https'
import { VIEW_RESOURCES, resourcePath } from '../src/cluster/resources.ts'
import type { KubeObject } from '../src/policy/kube/object.ts'
import { stringMap } from '../src/policy/kube/object.ts'
import { discoveryAnswer } from '../test/helpers/discovery-documents.ts'
import { asCreated } from './cluster/etcd.ts'
import { isStdio, namespaceOf, serverName } from './cluster/population.ts'
import { parseLabelSelector } from './label-selector.ts'
import {
  CONFIG_KINDS,
  configCount,
  configObject,
  configsPerNamespace,
  mcpServer,
  serverReferences,
  uid,
} from './population.ts'

export const CREATED = '2026-01-01T00:00:00Z'
/** The list's resourceVersion; every object's is below it. */
const LIST_VERSION = '9000000'

/** One listed collection: `count` objects, each built from its index when a page is asked for. */
export interface Collection {
  readonly count: number
  item(i: number): KubeObject
}

/**
 * MCPServer i of the bench:cluster population of `servers` as stored: its uid, a generation of 1
 * to 9, its three references among the configs of its namespace.
 */
export function storedServer(i: number, servers: number): KubeObject {
  const server = mcpServer(serverName(i), namespaceOf(i), i, {
    uid: '',
    generation: 1,
    stdio: isStdio(i),
    overrides: i % 4 === 0,
    references: serverReferences(i, configsPerNamespace(servers)),
  })
  const created = asCreated(server, CREATED, true)
  // Fixed, not asCreated's random uid: a proxy Deployment's ownerReference names it.
  created.metadata = { ...created.metadata, uid: serverUid(i), generation: 1 + (i % 9) }
  return created
}

export function serverUid(i: number): string {
  return uid(i, 0x5e7)
}

/** What the view lists of a population of `servers`: MCPServers and the nine config kinds. */
export function viewCollections(servers: number): Map<string, Collection> {
  const byKind: Record<string, Collection> = {
    MCPServer: { count: servers, item: (i) => storedServer(i, servers) },
  }
  for (const kind of CONFIG_KINDS)
    byKind[kind.kind] = {
      count: configCount(servers),
      item: (c) => asCreated(configObject(kind, c), CREATED, true),
    }
  return new Map(
    VIEW_RESOURCES.map((resource) => [
      resourcePath(resource),
      byKind[resource.kind] ?? { count: 0, item: () => ({}) },
    ]),
  )
}

/**
 * Starts the stand-in on a free loopback port with the serving pair `tls` (a pod trusts its CA);
 * `unknown` hears of any path it does not serve. Credentials are not checked.
 */
export async function startListServer(
  served: ReadonlyMap<string, Collection>,
  tls: { readonly key: string; readonly cert: string },
  unknown: (path: string) => void,
  options: { readonly cachePages?: boolean } = {},
): Promise<{
  readonly url: string
  readonly objects: number
  /** Ends every open watch with 410 Gone; resolves once each collection is watched again. */
  expireWatches(): Promise<void>
  close(): void
}> {
  const watches = new Set<ServerResponse>()
  const pages = options.cachePages === true ? new Map<string, Buffer>() : undefined
  let watchArrived = () => {}
  /** Resolves once every collection has a watch open. */
  const allWatched = () =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (watches.size >= served.size) resolve()
        else watchArrived = check
      }
      check()
    })
  const server: Server = createServer(tls, (request, response) => {
    const url = new URL(request.url ?? '/', 'http://stand-in')
    // The service asks which kinds are served first: all of them, at the table's versions.
    const discovery = discoveryAnswer(VIEW_RESOURCES, url.pathname)
    if (discovery) {
      answer(response, discovery.status, discovery.body)
      return
    }
    const collection = served.get(url.pathname)
    if (!collection) {
      unknown(`${request.method} ${url.pathname}`)
      answer(response, 404, { kind: 'Status', apiVersion: 'v1', code: 404, reason: 'NotFound' })
      return
    }
    // Held open without events, as a quiet cluster's watch is (bookmarks aside).
    if (url.searchParams.get('watch') === 'true') {
      response.writeHead(200, { 'content-type': 'application/json' })
      watches.add(response)
      watchArrived()
      return
    }
    const key = request.url ?? ''
    const cached = pages?.get(key)
    if (cached) {
      answer(response, 200, cached)
      return
    }
    let selected: ReturnType<typeof parseLabelSelector>
    try {
      selected = parseLabelSelector(url.searchParams.get('labelSelector') ?? '')
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      answer(response, 400, { kind: 'Status', apiVersion: 'v1', code: 400, message })
      return
    }
    // A page holds up to `limit` objects the selector keeps, as the API server's does.
    let end = Number(url.searchParams.get('continue') ?? '0')
    const limit = Number(url.searchParams.get('limit') ?? '500')
    const items: KubeObject[] = []
    for (; end < collection.count && items.length < limit; end++) {
      const object = collection.item(end)
      if (selected(stringMap(object.metadata?.labels) ?? {})) items.push(listItem(object, end))
    }
    const metadata = {
      resourceVersion: LIST_VERSION,
      ...(end < collection.count ? { continue: String(end) } : {}),
    }
    const page = Buffer.from(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata, items }))
    pages?.set(key, page)
    answer(response, 200, page)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  let objects = 0
  for (const collection of served.values()) objects += collection.count
  return {
    url: `https://127.0.0.1:${port}`,
    objects,
    expireWatches: async () => {
      await allWatched()
      const gone = { kind: 'Status', apiVersion: 'v1', code: 410, message: 'too old' }
      for (const watch of watches) watch.end(`${JSON.stringify({ type: 'ERROR', object: gone })}\n`)
      watches.clear()
      // A reflector watches again only once its relist is stored.
      await allWatched()
    },
    close: () => {
      server.closeAllConnections()
      server.close()
    },
  }
}

/** As the API server lists it: no apiVersion or kind, a resourceVersion of its own. */
function listItem(object: KubeObject, i: number): KubeObject {
  const item: KubeObject = {
    ...object,
    metadata: { ...object.metadata, resourceVersion: String(1000 + i) },
  }
  delete item.apiVersion
  delete item.kind
  return item
}

/** Answers with `body`: bytes as they are, anything else as JSON. */
function answer(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(Buffer.isBuffer(body) ? body : JSON.stringify(body))
}
