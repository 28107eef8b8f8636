/**
 * A plain-HTTP reverse proxy on loopback in front of the test API server that can hold back the
 * events of every watch stream through it, while lists and reads pass: the deterministic way to
 * make a client's cache lag behind the API server (freshness tests,
 * docs/enforcement.md#read-live-not-from-the-cache); or stall every request, as an API server that
 * accepts connections but does not answer. The client's bearer token passes through; the proxy
 * speaks TLS to the API server with the plane's CA.
 */

import http from 'node:http'
import https from 'node:https'
import type { ControlPlane } from './control-plane.ts'

export interface HoldingProxy {
  readonly url: string
  /** Stops forwarding watch events (they are queued, not dropped). */
  hold(): void
  /** Forwards the queued events and every later one, and lets stalled requests through. */
  release(): void
  /** Stalls every other request too: nothing reaches the API server until `release()`. */
  stall(): void
  /** Resolves once a watch stream has forwarded `text` (e.g. an object's resourceVersion). */
  forwarded(text: string, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

export async function startHoldingProxy(plane: ControlPlane): Promise<HoldingProxy> {
  let holding = false
  let stalling = false
  const stalled: (() => void)[] = []
  // The tail of what each watch forwarded, enough to find a resourceVersion split across chunks.
  let forwardedText = ''
  const forward = (response: http.ServerResponse, chunk: Buffer) => {
    response.write(chunk)
    forwardedText = (forwardedText + chunk.toString('utf8')).slice(-1 << 20)
  }
  const watches = new Set<{ queue: Buffer[]; response: http.ServerResponse }>()
  const upstream = new URL(plane.server)
  const server = http.createServer((request, response) => {
    if (stalling) {
      stalled.push(() => server.emit('request', request, response))
      return
    }
    const path = request.url ?? '/'
    const query = new URL(path, 'http://proxy').searchParams.get('watch')
    const isWatch = query === 'true' || query === '1'
    const upstreamRequest = https.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path,
        method: request.method,
        headers: { ...request.headers, host: upstream.host },
        ca: plane.pki.caPem,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        if (!isWatch) {
          answer.pipe(response)
          return
        }
        const watch = { queue: [] as Buffer[], response }
        watches.add(watch)
        answer.on('data', (chunk: Buffer) => {
          if (holding) watch.queue.push(chunk)
          else forward(response, chunk)
        })
        answer.once('end', () => {
          for (const chunk of watch.queue.splice(0)) forward(response, chunk)
          response.end()
        })
        answer.on('error', () => response.destroy())
        response.once('close', () => {
          watches.delete(watch)
          answer.destroy()
        })
      },
    )
    upstreamRequest.on('error', () => response.destroy())
    request.pipe(upstreamRequest)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    hold() {
      holding = true
    },
    stall() {
      stalling = true
    },
    release() {
      holding = false
      stalling = false
      for (const resume of stalled.splice(0)) resume()
      for (const watch of watches)
        for (const chunk of watch.queue.splice(0)) forward(watch.response, chunk)
    },
    async forwarded(text, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (!forwardedText.includes(text)) {
        if (Date.now() > deadline) throw new Error(`no watch forwarded ${text} in ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}
