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
 */

import { createServer } from 'node:http'
import { connect } from 'node:net'
import type { Socket } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
  /** Connections forwarded so far for `namespace/name:port`. */
  connections(namespace: string, name: string, port: number): number
  /** CONNECT requests refused because nothing was routed to the address. */
  readonly refused: readonly string[]
  close(): Promise<void>
}

interface Route {
  readonly key: string
  readonly targetPort: number
}

export async function startServiceNetwork(): Promise<ServiceNetwork> {
  const routes = new Map<string, Route>()
  const counts = new Map<string, number>()
  const refused: string[] = []
  const open = new Set<Socket>()

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
    counts.set(route.key, (counts.get(route.key) ?? 0) + 1)
    const upstream = connect(route.targetPort, '127.0.0.1')
    open.add(upstream)
    upstream.once('close', () => open.delete(upstream))
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    // Either side failing ends the tunnel, as a reset connection would.
    upstream.once('error', () => client.destroy())
    client.once('error', () => upstream.destroy())
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
      routes.set(`${clusterIp}:${port}`, { key: `${namespace}/${name}:${port}`, targetPort })
    },
    connections: (namespace, name, port) => counts.get(`${namespace}/${name}:${port}`) ?? 0,
    refused,
    async close() {
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
