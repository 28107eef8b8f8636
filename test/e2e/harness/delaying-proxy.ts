/**
 * A forward proxy on 127.0.0.1 that tunnels (HTTP CONNECT, what a kubeconfig's `proxy-url` names)
 * and makes the API server slow for whoever reads through it: the answers to a chosen share of
 * requests are held back by a fixed delay. It cannot see inside TLS, so a "request" is what the
 * client sends before the server answers: each time the client writes into a tunnel, a draw
 * decides whether the server's next bytes on that tunnel are delayed. One HTTP/1.1 request at a
 * time per connection (no pipelining, as Node's agents send them) makes that one draw per read;
 * a watch is one draw for its whole stream. Bytes keep their order on each tunnel. The draws come
 * from a seeded generator, so a run can be repeated.
 */

import http from 'node:http'
import { connect } from 'node:net'
import type { Socket } from 'node:net'

export interface Slowness {
  /** How long a delayed answer is held back, ms. */
  readonly delayMs: number
  /** The share of requests whose answers are delayed, 0..1 (1: every one). */
  readonly share: number
}

export interface DelayingProxy {
  /** `http://127.0.0.1:PORT`, for a kubeconfig's `proxy-url`. */
  readonly url: string
  /** Changes the slowness for every request from now on (tunnels already open included). */
  set(slowness: Slowness): void
  /** Requests seen and delayed since the start or the last `resetCounts`. */
  counts(): { readonly requests: number; readonly delayed: number }
  resetCounts(): void
  close(): Promise<void>
}

/** mulberry32: a small seeded generator, enough to spread the draws evenly and repeatably. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export async function startDelayingProxy(
  initial: Slowness = { delayMs: 0, share: 0 },
  seed = 49,
): Promise<DelayingProxy> {
  let slowness = initial
  let requests = 0
  let delayed = 0
  const random = seeded(seed)
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  }
  const server = http.createServer((_request, response) => response.writeHead(405).end())
  server.on('connect', (request: http.IncomingMessage, client: Socket, head: Buffer) => {
    track(client)
    const authority = request.url ?? ''
    const colon = authority.lastIndexOf(':')
    const host = authority.slice(0, colon).replace(/^\[(.*)\]$/, '$1')
    const upstream = connect({ host, port: Number(authority.slice(colon + 1)) })
    track(upstream)
    // The delay of the answer now being sent, drawn when the client last wrote; and when the
    // last byte handed on leaves, so later bytes never overtake it.
    let currentDelay = 0
    let lastDelivery = 0
    const draw = () => {
      requests++
      const slow = slowness.share > 0 && random() < slowness.share
      if (slow) delayed++
      currentDelay = slow ? slowness.delayMs : 0
    }
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n')
      if (head.length > 0) {
        draw()
        upstream.write(head)
      }
      client.on('data', (chunk: Buffer) => {
        draw()
        upstream.write(chunk)
      })
      upstream.on('data', (chunk: Buffer) => {
        const at = Math.max(Date.now() + currentDelay, lastDelivery)
        lastDelivery = at
        const wait = at - Date.now()
        if (wait <= 0) client.write(chunk)
        else setTimeout(() => client.destroyed || client.write(chunk), wait)
      })
      // An end is delivered after the bytes before it.
      upstream.once('end', () => {
        const wait = lastDelivery - Date.now()
        setTimeout(() => client.end(), Math.max(0, wait))
      })
      client.once('end', () => upstream.end())
    })
    upstream.once('error', () => client.destroy())
    client.once('error', () => upstream.destroy())
    // A close comes after the bytes still held back, like an end.
    upstream.once('close', () =>
      setTimeout(() => client.destroy(), Math.max(0, lastDelivery - Date.now())),
    )
    client.once('close', () => upstream.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    set(next) {
      slowness = next
    },
    counts: () => ({ requests, delayed }),
    resetCounts() {
      requests = 0
      delayed = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => {
          resolve()
        })
      }),
  }
}
