/**
 * A tiny forward proxy on 127.0.0.1 that only tunnels (HTTP CONNECT), over plain HTTP or TLS:
 * what kubectl users put in a kubeconfig's `proxy-url`. It records every CONNECT, may ask for
 * credentials (407) or refuse every tunnel, and answers anything else 405, recording that too.
 */

import http from 'node:http'
import https from 'node:https'
import { connect } from 'node:net'
import type { Socket } from 'node:net'
import type { Test } from 'tap'

export interface ConnectProxy {
  /** `http://127.0.0.1:PORT` (or https://), without credentials. */
  readonly url: string
  readonly port: number
  /** Each CONNECT: the authority asked for and its Proxy-Authorization. */
  readonly connects: { readonly authority: string; readonly authorization?: string }[]
  /** Requests that were not a CONNECT (`GET http://…`): none should come. */
  readonly plain: string[]
}

export interface ConnectProxyOptions {
  /** Serve TLS with this certificate and key. */
  readonly tls?: { readonly cert: string; readonly key: string }
  /** `user:password` the proxy asks for (407 without it). */
  readonly credentials?: string
  /** Answer every CONNECT with this status instead of a tunnel. */
  readonly refuse?: number
}

export async function startConnectProxy(
  t: Test,
  options: ConnectProxyOptions = {},
): Promise<ConnectProxy> {
  const connects: ConnectProxy['connects'] = []
  const plain: string[] = []
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  }
  const onRequest: http.RequestListener = (request, response) => {
    plain.push(`${request.method} ${request.url}`)
    response.writeHead(405).end()
  }
  const server = options.tls
    ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, onRequest)
    : http.createServer(onRequest)
  server.on('connect', (request: http.IncomingMessage, client: Socket, head: Buffer) => {
    track(client)
    const authority = request.url ?? ''
    const authorization = request.headers['proxy-authorization']
    connects.push({ authority, ...(authorization === undefined ? {} : { authorization }) })
    const expected =
      options.credentials && `Basic ${Buffer.from(options.credentials).toString('base64')}`
    if (expected && authorization !== expected) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n')
      return
    }
    if (options.refuse !== undefined) {
      client.end(`HTTP/1.1 ${options.refuse} ${http.STATUS_CODES[options.refuse] ?? ''}\r\n\r\n`)
      return
    }
    const colon = authority.lastIndexOf(':')
    const [host, port] = [authority.slice(0, colon), authority.slice(colon + 1)]
    const upstream = connect({ host: host.replace(/^\[(.*)\]$/, '$1'), port: Number(port) })
    track(upstream)
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    upstream.once('error', () => client.destroy())
    client.once('error', () => upstream.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  const { port } = server.address() as { port: number }
  return { url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`, port, connects, plain }
}
