/**
 * The connections of a TLS server with no request in flight, so a drain can close them at once.
 *
 * Node's `closeIdleConnections` (which `server.close()` calls) leaves alone a connection that has
 * not sent its first request: Node counts it as waiting for headers, not idle. The API server's
 * HTTP client opens such spare connections when several reviews are queued, and each one held
 * the drain until `--drain-timeout` (20 s) although nothing was in flight on it.
 */

import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Server as HttpsServer } from 'node:https'
import type { TLSSocket } from 'node:tls'

/** Starts tracking `server`'s connections; the function returned closes the quiet ones. */
export function trackQuietConnections(server: HttpsServer): () => void {
  const open = new Set<TLSSocket>()
  const inFlight = new WeakMap<object, number>()
  server.on('secureConnection', (socket: TLSSocket) => {
    open.add(socket)
    socket.once('close', () => open.delete(socket))
  })
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1)
    // 'close' follows both a finished response and a connection lost mid-request.
    response.once('close', () => inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1))
  })
  return () => {
    for (const socket of open) if ((inFlight.get(socket) ?? 0) === 0) socket.destroy()
  }
}
