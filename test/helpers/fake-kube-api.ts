/**
 * A fake API server for one collection, on plain-http loopback, with a real KubeApi pointed at it:
 * lists are served from `objects` in pages (`limit`/`continue`), and each watch request is handed
 * to the test, which decides what the stream says and how it ends. Going through the real KubeApi
 * means the reflector sees the same errors (HTTP statuses, ERROR events, stream ends) as in a pod.
 * Namespaces (`/api/v1/namespaces`, which a KubeView always watches) are a collection of their own,
 * with their own requests and watches, so a test of the other collection never sees them.
 */

import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { KubeConfig } from '@kubernetes/client-node'
import type { Test } from 'tap'
import { KubeApi } from '../../src/cluster/kube-api.ts'
import { kubeConfigCredentials } from '../../src/cluster/kubeconfig-credentials.ts'
import type { WatchEvent } from '../../src/cluster/kube-api.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { VIEW_RESOURCES } from '../../src/cluster/resources.ts'
import type { ViewResource } from '../../src/cluster/resources.ts'
import { discoveryAnswer } from './discovery-documents.ts'

export interface RecordedRequest {
  readonly path: string
  readonly watch: boolean
  /** The query without `watch`; absent parameters are absent keys. */
  readonly query: Readonly<Record<string, string>>
  /** The Authorization header it carried. */
  readonly authorization: string | undefined
}

/** One watch request, held open until the test ends it. */
export interface WatchStream {
  readonly query: Readonly<Record<string, string>>
  send(type: WatchEvent['type'], object: Record<string, unknown>): void
  /** Ends the stream cleanly, as the server does when `timeoutSeconds` runs out. */
  end(): void
  /** Answers the watch request itself with an error status instead of a stream. */
  refuse(status: number, message: string, retryAfterSeconds?: number): void
}

export interface FakeKubeApi {
  readonly api: KubeApi
  /** Its base URL, `http://127.0.0.1:PORT`, for a kubeconfig that points at it. */
  readonly server: string
  /** What the collection holds now; every list page is cut from it. */
  objects: KubeObject[]
  /** The collection's resourceVersion, sent with every list page. */
  resourceVersion: string
  readonly requests: RecordedRequest[]
  /**
   * Awaited before a list page is answered, with the page's `continue` token (`''` for the first
   * page): lets a test look at the reflector while a list is half done. Resolving to an HTTP
   * status refuses the page with it (a list that fails part-way).
   */
  beforePage: (continueToken: string) => Promise<number | undefined>
  /** The next watch request (already arrived or still to come). */
  nextWatch(): Promise<WatchStream>
  /** What `/api/v1/namespaces` lists, in pages as `objects` are. */
  namespaces: KubeObject[]
  /** As `beforePage`, for the pages of namespaces. */
  beforeNamespacesPage: (continueToken: string) => Promise<number | undefined>
  /** The requests for namespaces, which `requests` leaves out. */
  readonly namespaceRequests: RecordedRequest[]
  /** The next watch request of namespaces (already arrived or still to come). */
  nextNamespaceWatch(): Promise<WatchStream>
  /**
   * What API discovery says is served (`GET /apis/<group>` and `/apis/<group>/<version>`): by
   * default every ToolHive kind at the table's first version. Its order is the group's version
   * order; the first version is the preferred one. A status refuses discovery with it.
   */
  served: readonly ViewResource[] | number
}

export async function startFakeKubeApi(t: Test): Promise<FakeKubeApi> {
  const watches = watchQueue()
  const namespaceWatches = watchQueue()
  // No request arrives before `fake` is set below: only the KubeApi made there knows the port.
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake')
    const query = Object.fromEntries(url.searchParams)
    const watch = query.watch === 'true'
    delete query.watch
    const namespaces = url.pathname === '/api/v1/namespaces'
    const recorded = namespaces ? fake.namespaceRequests : fake.requests
    recorded.push({
      path: url.pathname,
      watch,
      query,
      authorization: request.headers.authorization,
    })
    if (answerDiscovery(fake, url.pathname, response)) return
    const collection: Collection = namespaces
      ? {
          watches: namespaceWatches,
          objects: () => fake.namespaces,
          beforePage: fake.beforeNamespacesPage,
        }
      : { watches, objects: () => fake.objects, beforePage: fake.beforePage }
    if (watch) collection.watches.arrive(watchStream(query, response))
    else void answerPage(fake, collection, query, request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  const api = loopbackKubeApi(port)
  const fake: FakeKubeApi = {
    api,
    server: `http://127.0.0.1:${port}`,
    objects: [],
    resourceVersion: '1',
    requests: [],
    beforePage: async () => undefined,
    served: VIEW_RESOURCES,
    nextWatch: watches.next,
    namespaces: [],
    beforeNamespacesPage: async () => undefined,
    namespaceRequests: [],
    nextNamespaceWatch: namespaceWatches.next,
  }

  t.teardown(() => {
    api.close()
    server.closeAllConnections()
    server.close()
  })
  return fake
}

/** One collection the fake serves: its watch requests, what it lists, and what a page waits for. */
interface Collection {
  readonly watches: ReturnType<typeof watchQueue>
  /** Read once the page may be answered, so a test can change the collection while it waits. */
  readonly objects: () => readonly KubeObject[]
  readonly beforePage: FakeKubeApi['beforePage']
}

/** Watch requests handed to the test in the order they arrive, whenever it asks. */
function watchQueue() {
  const arrived: WatchStream[] = []
  const waiting: ((stream: WatchStream) => void)[] = []
  return {
    arrive: (stream: WatchStream): void => {
      const waiter = waiting.shift()
      if (waiter) waiter(stream)
      else arrived.push(stream)
    },
    next: (): Promise<WatchStream> => {
      const stream = arrived.shift()
      if (stream) return Promise.resolve(stream)
      return new Promise((resolve) => waiting.push(resolve))
    },
  }
}

/** Answers a discovery request from `fake.served`; false for any other path. */
function answerDiscovery(fake: FakeKubeApi, path: string, response: ServerResponse): boolean {
  const served = fake.served
  const answer =
    typeof served === 'number'
      ? discoveryAnswer([], path) && { status: served, body: statusObject(served, 'refused') }
      : discoveryAnswer(served, path)
  if (answer === undefined) return false
  response.writeHead(answer.status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(answer.body))
  return true
}

/** The continue token is the offset of the next page, as opaque to the client as a real one. */
async function answerPage(
  fake: FakeKubeApi,
  collection: Collection,
  query: Record<string, string>,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  request.resume()
  const token = query.continue ?? ''
  const refused = await collection.beforePage(token)
  if (refused !== undefined) {
    response.writeHead(refused, { 'content-type': 'application/json' })
    response.end(JSON.stringify(statusObject(refused, `page ${token} refused`)))
    return
  }
  const start = token === '' ? 0 : Number(token.replace(/^offset-/, ''))
  const limit = query.limit === undefined ? Infinity : Number(query.limit)
  const objects = collection.objects()
  const items = objects.slice(start, start + limit)
  const next = start + items.length
  const body = {
    kind: 'List',
    apiVersion: 'v1',
    metadata: {
      resourceVersion: fake.resourceVersion,
      ...(next < objects.length ? { continue: `offset-${next}` } : {}),
    },
    // The API server leaves apiVersion and kind out of list items; so does the fake.
    items: items.map(withoutType),
  }
  response.setHeader('content-type', 'application/json')
  response.end(JSON.stringify(body))
}

function withoutType(object: KubeObject): KubeObject {
  const copy = { ...object }
  delete copy.apiVersion
  delete copy.kind
  return copy
}

function watchStream(query: Record<string, string>, response: ServerResponse): WatchStream {
  let started = false
  const start = () => {
    if (started) return
    started = true
    response.writeHead(200, { 'content-type': 'application/json' })
  }
  return {
    query,
    send(type, object) {
      start()
      response.write(`${JSON.stringify({ type, object })}\n`)
    },
    end() {
      start()
      response.end()
    },
    refuse(status, message, retryAfterSeconds) {
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(statusObject(status, message, retryAfterSeconds)))
    },
  }
}

/** A metav1.Status, as the API server sends in an error body or an ERROR watch event. */
export function statusObject(
  code: number,
  message: string,
  retryAfterSeconds?: number,
): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message,
    reason: STATUS_REASONS.get(code) ?? 'InternalError',
    ...(retryAfterSeconds === undefined ? {} : { details: { retryAfterSeconds } }),
    code,
  }
}

const STATUS_REASONS = new Map([
  [410, 'Expired'],
  [429, 'TooManyRequests'],
])

/** A real KubeApi for a plain-http server on 127.0.0.1:`port` (a test's fake API server). */
export function loopbackKubeApi(
  port: number,
  options?: ConstructorParameters<typeof KubeApi>[1],
): KubeApi {
  const config = new KubeConfig()
  config.loadFromOptions({
    // client-node accepts a plain-http server only with skipTLSVerify set.
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  })
  return new KubeApi(kubeConfigCredentials(config), options)
}
