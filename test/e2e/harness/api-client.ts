/**
 * Requests straight to the test API server as cluster admin (its client certificate), over
 * kept-alive HTTP/1.1 connections: for a file that writes tens of objects a second, which kubectl
 * (a process per write) cannot, and for the cluster benchmark's own writes (bench/cluster/client.ts).
 * It never throws on an HTTP status; a transport error or the deadline rejects.
 */

import { Agent, request } from 'node:https'
import type { ControlPlane } from './control-plane.ts'

export interface ApiAnswer {
  readonly status: number
  readonly body: string
}

export interface ApiClient {
  /**
   * One request, answered within `timeoutMs` or rejected. A string body is sent as it is (already
   * serialised), anything else as JSON.
   */
  send(method: string, path: string, body?: unknown, contentType?: string): Promise<ApiAnswer>
  /** Closes the kept-alive connections. */
  close(): void
}

export interface AdminClientOptions {
  readonly maxSockets: number
  readonly timeoutMs: number
  /**
   * Act as this user (Impersonate-User, Impersonate-Group): the API server authorizes the
   * groups and tells webhooks the user, e.g. the operator's service account with
   * `system:masters`, so a test writes as the operator without granting it RBAC.
   */
  readonly impersonate?: { readonly user: string; readonly groups: readonly string[] }
}

export function adminClient(plane: ControlPlane, options: AdminClientOptions): ApiClient {
  const impersonation = options.impersonate
    ? {
        'impersonate-user': options.impersonate.user,
        'impersonate-group': [...options.impersonate.groups],
      }
    : {}
  const url = new URL(plane.server)
  const agent = new Agent({
    keepAlive: true,
    maxSockets: options.maxSockets,
    maxFreeSockets: options.maxSockets,
    ca: plane.pki.caPem,
    cert: plane.pki.adminCertPem,
    key: plane.pki.adminKeyPem,
  })
  return {
    send(method, path, body, contentType = 'application/json') {
      const payload =
        body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
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
              ...impersonation,
              ...(payload === undefined
                ? {}
                : { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }),
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
