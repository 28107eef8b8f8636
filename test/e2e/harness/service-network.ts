/**
 * Just enough cluster network for the API server to call a webhook by its Service, so the shipped
 * webhook configurations run unmodified (`clientConfig.service`, TLS verified against
 * `<service>.<namespace>.svc` with the configuration's own caBundle).
 *
 * kube-apiserver resolves a Service-referenced webhook to the Service's ClusterIP and port itself,
 * then dials that address through its `cluster` egress (EgressSelectorConfiguration). There is no
 * kube-proxy here, so the egress is an HTTP CONNECT proxy on loopback standing in for it: it
 * forwards a routed `ClusterIP:port` to the local process a test put behind that Service, and
 * refuses every other address. It listens on a Unix socket: kube-apiserver 1.37 dereferences a
 * nil TLS configuration for a plain `http://` TCP proxy (egress_selector.go, getTLSConfig). Webhooks registered by URL take the control-plane egress, which
 * stays direct, so the rest of the suite is unaffected.
 *
 * A Service port has one endpoint (`route`, always ready) or several (`endpoints`), kept the way
 * the kubelet, the endpoints controller and kube-proxy keep them: each endpoint's readiness probe
 * is polled at the probe's period, it becomes ready after `successThreshold` successes in a row
 * and stops being ready after `failureThreshold` failures in a row (a process killed with SIGKILL
 * stays an endpoint until then: the upper bound, since a kubelet also marks a container not ready
 * once it sees it exit, prober_manager.go UpdatePodStatus); a pod being deleted leaves the ready
 * endpoints at once, before its preStop hook runs. A new connection goes to the next ready endpoint, round-robin (kube-proxy
 * picks among them at random; round-robin spreads as evenly, and reproducibly); an open one stays
 * where it is, as conntrack keeps it, whatever happens to the endpoint. With no endpoint ready a
 * connection is refused. Not modelled: kube-proxy's fallback to terminating endpoints that still
 * pass their probe when no endpoint is ready, the delay of endpoint updates reaching the proxy,
 * and a restarted container (a replacement is a new endpoint).
 */

import { createServer, get } from 'node:http'
import { connect } from 'node:net'
import type { Socket } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { mustKubectl } from './kubectl.ts'
import type { Kubectl } from './kubectl.ts'

export interface ServiceNetwork {
  /** kube-apiserver flags sending the `cluster` egress through this network (for startControlPlane). */
  readonly apiServerArgs: (dir: string) => Promise<string[]>
  /**
   * Sends connections for Service `namespace/name` port `port` to 127.0.0.1:`targetPort`, the way
   * kube-proxy would to a ready endpoint. The Service must exist (its ClusterIP is read).
   */
  route(
    kubectl: Kubectl,
    namespace: string,
    name: string,
    port: number,
    targetPort: number,
  ): Promise<void>
  /**
   * Makes Service `namespace/name` port `port` a Service with endpoints added and removed as pods
   * come and go (replacing any route to it), probed as `probe` says. The Service must exist.
   */
  endpoints(
    kubectl: Kubectl,
    namespace: string,
    name: string,
    port: number,
    probe: ReadinessProbe,
  ): Promise<ServiceEndpoints>
  /** Connections forwarded so far for `namespace/name:port`. */
  connections(namespace: string, name: string, port: number): number
  /** CONNECT requests refused because nothing was routed to the address. */
  readonly refused: readonly string[]
  close(): Promise<void>
}

/** A pod's readiness probe, as the kubelet runs it (an HTTP GET; 200–399 is a success). */
export interface ReadinessProbe {
  /** The path asked on each endpoint's probe URL, e.g. `/readyz`. */
  readonly path: string
  readonly periodMs: number
  readonly timeoutMs: number
  readonly successThreshold: number
  readonly failureThreshold: number
}

/** A Service port's endpoints (`ServiceNetwork.endpoints`). */
export interface ServiceEndpoints {
  /**
   * A pod's endpoint: connections go to 127.0.0.1:`targetPort` once it is ready. It is probed at
   * once on `probeUrl` and then every period; not ready until its probe succeeds.
   */
  add(name: string, targetPort: number, probeUrl: string): Endpoint
  /** The names of the ready endpoints now. */
  ready(): string[]
  /** Connections refused because no endpoint was ready. */
  readonly unavailable: number
  /** What happened to the endpoints, in order (`at`: `Date.now()`, as the service logs time). */
  readonly events: readonly EndpointEvent[]
}

export interface EndpointEvent {
  readonly at: number
  readonly endpoint: string
  readonly event: 'added' | 'ready' | 'not ready' | 'terminating'
}

export interface Endpoint {
  readonly name: string
  readonly ready: boolean
  readonly terminating: boolean
  /** Connections routed to it so far. */
  readonly connections: number
  /** Its connections open now, at its end (a refused one never was). */
  readonly open: number
  /** When its end of each connection closed (`Date.now()`), in order. */
  readonly closes: readonly number[]
  /**
   * Its pod is being deleted: no longer a ready endpoint from now on and no longer probed. Open
   * connections stay.
   */
  terminate(): void
}

/** What a readiness probe's results have made of an endpoint: the kubelet's result runs. */
export interface ProbeState {
  readonly ready: boolean
  /** The last result and how many times in a row it came. */
  readonly last: 'success' | 'failure' | undefined
  readonly run: number
}

export const NOT_PROBED: ProbeState = { ready: false, last: undefined, run: 0 }

/**
 * The state after one probe result, as the kubelet's prober worker has it: the readiness flips
 * only once the new result has come `successThreshold` (to ready) or `failureThreshold` (to not
 * ready) times in a row. It starts not ready.
 */
export function afterProbe(
  state: ProbeState,
  succeeded: boolean,
  probe: Pick<ReadinessProbe, 'successThreshold' | 'failureThreshold'>,
): ProbeState {
  const result = succeeded ? 'success' : 'failure'
  const run = state.last === result ? state.run + 1 : 1
  const threshold = succeeded ? probe.successThreshold : probe.failureThreshold
  return { ready: run >= threshold ? succeeded : state.ready, last: result, run }
}

/**
 * The endpoint a new connection goes to: the first ready one after index `cursor`, round-robin,
 * with the cursor to pass next time; undefined when none is ready.
 */
export function nextReady<T extends { readonly ready: boolean }>(
  endpoints: readonly T[],
  cursor: number,
): { readonly endpoint: T; readonly cursor: number } | undefined {
  for (let step = 1; step <= endpoints.length; step++) {
    const index = (cursor + step) % endpoints.length
    const endpoint = endpoints[index]
    if (endpoint?.ready) return { endpoint, cursor: index }
  }
  return undefined
}

interface Backend {
  readonly name: string
  readonly targetPort: number
  ready: boolean
  connections: number
  open: number
  readonly closes: number[]
}

interface Route {
  readonly key: string
  readonly backends: Backend[]
  cursor: number
  unavailable: number
}

export async function startServiceNetwork(): Promise<ServiceNetwork> {
  const routes = new Map<string, Route>()
  const counts = new Map<string, number>()
  const refused: string[] = []
  const open = new Set<Socket>()
  const probes = new AbortController()

  const proxy = createServer((_request, response) => {
    response.writeHead(405).end('CONNECT only\n')
  })
  proxy.on('connect', (request, client: Socket, head: Buffer) => {
    open.add(client)
    client.once('close', () => open.delete(client))
    const address = request.url ?? ''
    const route = routes.get(address)
    if (route === undefined) {
      refused.push(address)
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')
      return
    }
    const next = nextReady(route.backends, route.cursor)
    if (next === undefined) {
      // kube-proxy rejects a connection to a Service with no ready endpoint.
      route.unavailable++
      client.end('HTTP/1.1 503 Service Unavailable\r\n\r\n')
      return
    }
    route.cursor = next.cursor
    const backend = next.endpoint
    counts.set(route.key, (counts.get(route.key) ?? 0) + 1)
    backend.connections++
    backend.open++
    const upstream = connect(backend.targetPort, '127.0.0.1')
    open.add(upstream)
    upstream.once('close', () => {
      open.delete(upstream)
      backend.open--
      backend.closes.push(Date.now())
      // What the endpoint sent has been passed on (and ended, by the pipe). The pipe from the
      // client is undone with the endpoint gone, which would leave the client's socket paused,
      // its end never read and the tunnel open: keep reading it, and answer anything it still
      // sends with a reset, as a closed TCP socket does.
      client.on('data', () => client.destroy())
      client.resume()
    })
    client.once('close', () => upstream.destroy())
    let established = false
    upstream.once('connect', () => {
      established = true
      client.write('HTTP/1.1 200 Connection established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    // Either side failing ends the tunnel, as a reset connection would; an endpoint that refuses
    // the connection (its process gone) refuses the dial.
    upstream.on('error', () => {
      if (established) client.destroy()
      else client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')
    })
    client.on('error', () => upstream.destroy())
  })
  // Socket paths are limited to ~100 bytes: a short directory of its own.
  const socketDir = await mkdtemp(join(tmpdir(), 'egress-'))
  const socket = join(socketDir, 'cluster.sock')
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject)
    proxy.listen(socket, () => {
      resolve()
    })
  })

  /** The `ClusterIP:port` address the API server dials for the Service's port. */
  const serviceAddress = async (
    kubectl: Kubectl,
    namespace: string,
    name: string,
    port: number,
  ) => {
    const clusterIp = (
      await mustKubectl(kubectl, [
        'get',
        'service',
        name,
        '-n',
        namespace,
        '-o',
        'jsonpath={.spec.clusterIP}',
      ])
    ).trim()
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(clusterIp))
      throw new Error(`service ${namespace}/${name} has no IPv4 ClusterIP (${clusterIp})`)
    return `${clusterIp}:${port}`
  }

  return {
    apiServerArgs: async (dir) => {
      const file = join(dir, 'egress-selector.json')
      const configuration = {
        apiVersion: 'apiserver.k8s.io/v1beta1',
        kind: 'EgressSelectorConfiguration',
        egressSelections: [
          {
            name: 'cluster',
            connection: {
              proxyProtocol: 'HTTPConnect',
              transport: { uds: { udsName: socket } },
            },
          },
        ],
      }
      await writeFile(file, JSON.stringify(configuration))
      return [`--egress-selector-config-file=${file}`]
    },
    async route(kubectl, namespace, name, port, targetPort) {
      const backend = {
        name: 'static',
        targetPort,
        ready: true,
        connections: 0,
        open: 0,
        closes: [],
      }
      routes.set(await serviceAddress(kubectl, namespace, name, port), {
        key: `${namespace}/${name}:${port}`,
        backends: [backend],
        cursor: -1,
        unavailable: 0,
      })
    },
    async endpoints(kubectl, namespace, name, port, probe) {
      const route: Route = {
        key: `${namespace}/${name}:${port}`,
        backends: [],
        cursor: -1,
        unavailable: 0,
      }
      routes.set(await serviceAddress(kubectl, namespace, name, port), route)
      const events: EndpointEvent[] = []
      const note = (endpoint: string, event: EndpointEvent['event']) =>
        events.push({ at: Date.now(), endpoint, event })
      return {
        add(name, targetPort, probeUrl) {
          const backend: Backend = {
            name,
            targetPort,
            ready: false,
            connections: 0,
            open: 0,
            closes: [],
          }
          route.backends.push(backend)
          note(name, 'added')
          let state = NOT_PROBED
          let terminating = false
          // Probing ends when the pod is deleted or the network closes.
          const ended = new AbortController()
          const probing = AbortSignal.any([probes.signal, ended.signal])
          const stopped = () => probing.aborted
          void (async () => {
            // The kubelet's prober ticks every period whatever a probe takes (its timeout is
            // shorter than the period).
            const url = `${probeUrl}${probe.path}`
            for (let tick = performance.now(); !stopped(); tick += probe.periodMs) {
              const succeeded = await probeOnce(url, probe.timeoutMs)
              // A result that comes after the pod's deletion is not recorded.
              if (stopped()) break
              state = afterProbe(state, succeeded, probe)
              if (state.ready !== backend.ready) {
                backend.ready = state.ready
                note(name, state.ready ? 'ready' : 'not ready')
              }
              await sleep(Math.max(0, tick + probe.periodMs - performance.now()), undefined, {
                signal: probing,
              }).catch(() => undefined)
            }
          })()
          return {
            name,
            get ready() {
              return backend.ready
            },
            get terminating() {
              return terminating
            },
            get connections() {
              return backend.connections
            },
            get open() {
              return backend.open
            },
            closes: backend.closes,
            terminate() {
              if (terminating) return
              terminating = true
              ended.abort()
              backend.ready = false
              note(name, 'terminating')
            },
          }
        },
        ready: () => route.backends.filter((backend) => backend.ready).map((b) => b.name),
        get unavailable() {
          return route.unavailable
        },
        events,
      }
    },
    connections: (namespace, name, port) => counts.get(`${namespace}/${name}:${port}`) ?? 0,
    refused,
    async close() {
      probes.abort()
      for (const socket of open) socket.destroy()
      await new Promise<void>((resolve) =>
        proxy.close(() => {
          resolve()
        }),
      )
      await rm(socketDir, { recursive: true, force: true })
    },
  }
}

/** One probe as the kubelet's HTTP prober makes it: a GET on a fresh connection, 200–399 passes. */
function probeOnce(url: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume()
      const status = response.statusCode ?? 0
      resolve(status >= 200 && status < 400)
    })
    request.once('timeout', () => request.destroy(new Error('probe timed out')))
    request.once('error', () => {
      resolve(false)
    })
  })
}
