/**
 * Requests straight to the test API server as cluster admin (its client certificate), over
 * kept-alive HTTP/1.1 connections: for a file that writes tens of objects a second, which kubectl
 * (a process per write) cannot. It never throws on an HTTP status; a transport error rejects.
 */

import { Agent, request } from 'node:https'
import type { ControlPlane } from './control-plane.ts'

export interface ApiAnswer {
  readonly status: number
  readonly body: string
}

export interface ApiClient {
  /** One request with a JSON body (when given), answered within `timeoutMs` or rejected. */
  send(method: string, path: string, body?: unknown): Promise<ApiAnswer>
  /** Closes the kept-alive connections. */
  close(): void
}

export function adminClient(
  plane: ControlPlane,
  options: { readonly maxSockets: number; readonly timeoutMs: number },
): ApiClient {
  const url = new URL(plane.server)
  const agent = new Agent({
    keepAlive: true,
    maxSockets: options.maxSockets,
    ca: plane.pki.caPem,
    cert: plane.pki.adminCertPem,
    key: plane.pki.adminKeyPem,
  })
  return {
    send(method, path, body) {
      const payload = body === undefined ? undefined : JSON.stringify(body)
      return new Promise((resolve, reject) => {
        const req = request(
          {
            agent,
            host: url.hostname,
            port: url.port,
            method,
            path,
            timeout: options.timeoutMs,
            headers: {
              accept: 'application/json',
              ...(payload === undefined
                ? {}
                : {
                    'content-type': 'application/json',
                    'content-length': Buffer.byteLength(payload),
                  }),
            },
          },
          (response) => {
            const chunks: Buffer[] = []
            response.on('data', (chunk: Buffer) => chunks.push(chunk))
            response.once('end', () => {
              resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() })
            })
            response.once('error', reject)
          },
        )
        req.once('timeout', () => {
          req.destroy(new Error(`${method} ${path}: no answer in ${options.timeoutMs} ms`))
        })
        req.once('error', reject)
        req.end(payload)
      })
    },
    close() {
      agent.destroy()
    },
  }
}
