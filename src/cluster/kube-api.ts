/**
 * The few raw reads the cluster view makes: GET an object or a list page, and stream a watch.
 *
 * Bodies are parsed with plain `JSON.parse` rather than the generated client's typed models: those
 * turn timestamps into Dates and copy maps by assignment, which would lose a (legal) ConfigMap key
 * named `__proto__` and change its checksum. The server, CA and authentication come from
 * ClusterCredentials (the pod's service account, or a kubeconfig); one keep-alive agent serves
 * every request so a live read at admission time does not pay for a new TLS handshake.
 */

import http from 'node:http'
import https from 'node:https'
import { createInterface } from 'node:readline'
import type { ClusterCredentials } from './cluster-credentials.ts'

/** An API error with the HTTP status, or 0 when no response arrived. */
export class KubeApiError extends Error {
  override name = 'KubeApiError'
  readonly status: number
  constructor(message: string, status: number) {
    super(message)
    this.status = status
  }
}

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'
  readonly object: Record<string, unknown>
}

interface KubeApiOptions {
  /** Per-request limit for plain reads (live reads sit on the admission path). */
  readonly requestTimeoutMs?: number
}

type Query = Readonly<Record<string, string | number | boolean | undefined>>

export class KubeApi {
  readonly #credentials: ClusterCredentials
  readonly #requestTimeoutMs: number
  #agent: http.Agent | undefined

  constructor(credentials: ClusterCredentials, options: KubeApiOptions = {}) {
    this.#credentials = credentials
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 5_000
  }

  /**
   * GETs a JSON document; `undefined` for 404, a KubeApiError for anything else but 200. `signal`
   * bounds the whole read, including time spent waiting for a pooled socket.
   */
  async get(
    path: string,
    query: Query = {},
    signal?: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> {
    let response: http.IncomingMessage
    let body: string
    try {
      response = await this.#request(path, query, this.#requestTimeoutMs, signal, undefined, {
        retryUnauthorized: true,
      })
      body = await readBody(response)
    } catch (error) {
      if (signal?.aborted) throw new KubeApiError(`GET ${path}: ${abortReason(signal)}`, 0)
      throw error
    }
    if (response.statusCode === 404) return undefined
    if (response.statusCode !== 200) throw apiError(path, response.statusCode ?? 0, body)
    return JSON.parse(body) as Record<string, unknown>
  }

  /**
   * Sends a write (`POST`, `PUT`, `PATCH`) with a JSON body; returns the status and the parsed
   * body (a Kubernetes Status on errors). Never throws on an HTTP status; only when no response
   * came. `signal` abandons the write (leadership lost, a deadline): the caller cannot know
   * whether the server applied it, and must not act as if it had.
   */
  async write(
    method: 'POST' | 'PUT' | 'PATCH',
    path: string,
    body: unknown,
    options: {
      readonly contentType?: string
      readonly query?: Query
      readonly signal?: AbortSignal | undefined
    } = {},
  ): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
    const payload = Buffer.from(JSON.stringify(body), 'utf8')
    const { signal } = options
    let response: http.IncomingMessage
    let text: string
    try {
      response = await this.#request(path, options.query ?? {}, this.#requestTimeoutMs, signal, {
        method,
        payload,
        contentType: options.contentType ?? 'application/json',
      })
      text = await readBody(response)
    } catch (error) {
      if (signal?.aborted) throw new KubeApiError(`${method} ${path}: ${abortReason(signal)}`, 0)
      throw error
    }
    let parsed: Record<string, unknown> | undefined
    try {
      parsed = JSON.parse(text) as Record<string, unknown>
    } catch {
      parsed = undefined
    }
    return { status: response.statusCode ?? 0, body: parsed }
  }

  /**
   * Streams a watch until the server ends it (resolves) or it fails (rejects). `onEvent` is called
   * for every event in order. `signal` aborts it; an idle stream fails after `idleTimeoutMs`.
   */
  async watch(
    path: string,
    query: Query,
    onEvent: (event: WatchEvent) => void,
    options: { readonly signal: AbortSignal; readonly idleTimeoutMs: number },
  ): Promise<void> {
    const response = await this.#request(
      path,
      { ...query, watch: true },
      options.idleTimeoutMs,
      options.signal,
    )
    if (response.statusCode !== 200) {
      throw apiError(path, response.statusCode ?? 0, await readBody(response))
    }
    const lines = createInterface({ input: response, crlfDelay: Infinity })
    try {
      for await (const line of lines) {
        if (line === '') continue
        onEvent(JSON.parse(line) as WatchEvent)
      }
    } finally {
      lines.close()
      response.destroy()
    }
    // A stream cut by an error or an abort ends the loop as well; tell it from a clean end.
    if (options.signal.aborted) throw new KubeApiError(`watch ${path}: aborted`, 0)
    if (!response.complete) throw new KubeApiError(`watch ${path}: connection lost`, 0)
  }

  /**
   * Sends one request. A 401 has the credentials read again (a rotated or revoked token), so the
   * next request carries the new ones; with `retryUnauthorized` (plain reads, which change
   * nothing) this one is sent again once if they did change. A watch just fails and is
   * re-established by its reflector; a write is the caller's to retry.
   */
  async #request(
    path: string,
    query: Query,
    timeoutMs: number,
    signal?: AbortSignal,
    write?: Write,
    { retryUnauthorized = false }: { readonly retryUnauthorized?: boolean } = {},
  ): Promise<http.IncomingMessage> {
    const url = new URL(this.#credentials.server.replace(/\/$/, '') + path)
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value))
    }
    const first = await this.#options(write)
    const response = await this.#send(url, path, first, timeoutMs, signal, write)
    if (response.statusCode !== 401 || !this.#credentials.refresh) return response
    await this.#credentials.refresh()
    if (!retryUnauthorized) return response
    const second = await this.#options(write)
    if (authorizationOf(second) === authorizationOf(first)) return response
    response.resume()
    return this.#send(url, path, second, timeoutMs, signal, write)
  }

  async #options(write: Write | undefined): Promise<https.RequestOptions> {
    const options: https.RequestOptions = {
      method: write?.method ?? 'GET',
      headers: {
        accept: 'application/json',
        ...(write
          ? { 'content-type': write.contentType, 'content-length': write.payload.length }
          : {}),
      },
    }
    // Fills in the CA and credentials (a kubeconfig's client also adds an agent: ours replaces it).
    await this.#credentials.applyTo(options)
    return options
  }

  #send(
    url: URL,
    path: string,
    options: https.RequestOptions,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    write: Write | undefined,
  ): Promise<http.IncomingMessage> {
    this.#agent ??= newAgent(url.protocol, options)
    const transport = url.protocol === 'http:' ? http : https
    return new Promise((resolve, reject) => {
      const request = transport.request(url, {
        ...options,
        agent: this.#agent,
        signal,
        timeout: timeoutMs,
      })
      request.once('response', (response) => {
        // From here the timeout guards an idle response (a watch with no events or bookmarks).
        const { socket } = response
        const onIdle = () =>
          response.destroy(
            new KubeApiError(`${options.method ?? 'GET'} ${path}: idle for ${timeoutMs} ms`, 0),
          )
        socket.setTimeout(timeoutMs, onIdle)
        // The socket outlives the response in the keep-alive pool: without this, every request
        // on it would leave a listener (and its response) attached for the socket's lifetime.
        response.once('close', () => socket.removeListener('timeout', onIdle))
        resolve(response)
      })
      request.once('timeout', () =>
        request.destroy(
          new KubeApiError(
            `${options.method ?? 'GET'} ${path}: no response within ${timeoutMs} ms`,
            0,
          ),
        ),
      )
      request.once('error', (error) => {
        reject(
          error instanceof KubeApiError
            ? error
            : new KubeApiError(`${options.method ?? 'GET'} ${path}: ${error.message}`, 0),
        )
      })
      request.end(write?.payload)
    })
  }

  /** Closes idle pooled connections (at shutdown). */
  close(): void {
    this.#agent?.destroy()
  }
}

interface Write {
  readonly method: string
  readonly payload: Buffer
  readonly contentType: string
}

/** The Authorization header as sent (client-node capitalises it), to tell whether it changed. */
function authorizationOf(options: https.RequestOptions): unknown {
  const headers = options.headers as http.OutgoingHttpHeaders | undefined
  return headers?.['authorization'] ?? headers?.['Authorization']
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason
  if (reason instanceof Error && reason.name === 'TimeoutError')
    return 'no answer before the deadline'
  return reason instanceof Error ? reason.message : 'aborted'
}

function newAgent(protocol: string, tls: https.RequestOptions): http.Agent {
  // Each review of a proxy Deployment makes two live reads, and the API server sends reviews
  // concurrently (a burst of operator writes: dozens); the watches hold a socket each for good.
  // A pool smaller than that queued reads behind one another, and keeping only 4 idle sockets
  // paid a TLS handshake again after every burst (bench:cluster, 32 writers: added p50 168 -> 126
  // ms, p99 367 -> 198 ms). Idle sockets cost the API server little.
  const common = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64 }
  if (protocol === 'http:') return new http.Agent(common)
  const { ca, cert, key, pfx, passphrase, rejectUnauthorized, servername } = tls
  return new https.Agent({
    ...common,
    ca,
    cert,
    key,
    pfx,
    passphrase,
    servername,
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
  })
}

async function readBody(response: http.IncomingMessage): Promise<string> {
  response.setEncoding('utf8')
  let body = ''
  for await (const chunk of response) body += chunk as string
  return body
}

function apiError(path: string, status: number, body: string): KubeApiError {
  let message = body.slice(0, 300)
  try {
    const parsed = JSON.parse(body) as { message?: unknown }
    if (typeof parsed.message === 'string') message = parsed.message
  } catch {
    // Not a Status object: keep the start of the body.
  }
  return new KubeApiError(`GET ${path}: ${status} ${message}`, status)
}
