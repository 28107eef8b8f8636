/**
 * The few raw reads the cluster view makes: GET an object or a list page, and stream a watch.
 *
 * Bodies are parsed with plain `JSON.parse` rather than the generated client's typed models: those
 * turn timestamps into Dates and copy maps by assignment, which would lose a (legal) ConfigMap key
 * named `__proto__` and change its checksum. The server, CA and authentication come from
 * ClusterCredentials (the pod's service account, or a kubeconfig); one keep-alive agent serves
 * every request so a live read at admission time does not pay for a new TLS handshake, through
 * the kubeconfig's proxy when it names one. Answers are read within bounds (response-body.ts), and
 * an error body is quoted only with the credentials sent taken out (redact.ts).
 */

import http from 'node:http'
import https from 'node:https'
import type { ClusterCredentials } from './cluster-credentials.ts'
import { proxyAgent } from './proxy-tunnel.ts'
import { redactCredentials, requestSecrets } from './redact.ts'
import { BODY_MAX_BYTES, WATCH_LINE_MAX_BYTES, boundedLines, readBody } from './response-body.ts'

/**
 * How long after the request limit the whole-request deadline fires: long enough for a step's own
 * timer of the limit's length, started a little later (once the request is sent), to fire first.
 */
const STEP_BOUNDS_FIRST_MS = 100

/**
 * The whole-request bound unless one is given: the API server's own default for a request
 * (kube-apiserver `--request-timeout`, one minute), past which it has ended a request itself. A
 * large list page over a slow link must still be read whole: the reflectors' lists (a page of
 * 500 proxy Deployments is some 10 MiB) are what readiness waits for.
 */
export const WHOLE_REQUEST_TIMEOUT_MS = 60_000

/** An API error with the HTTP status, or 0 when no response arrived. */
export class KubeApiError extends Error {
  override name = 'KubeApiError'
  readonly status: number
  /** How long the server asked the client to wait before trying again (a Status's details). */
  readonly retryAfterSeconds: number | undefined
  constructor(message: string, status: number, retryAfterSeconds?: number) {
    super(message)
    this.status = status
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** 401 or 403: the API server refuses this client, and will until someone changes RBAC. */
export function isRefusal(error: unknown): boolean {
  return error instanceof KubeApiError && (error.status === 401 || error.status === 403)
}

/**
 * The wait a metav1.Status asks for (`details.retryAfterSeconds`, sent with 429 and some 5xx), if
 * it names a usable one.
 */
export function retryAfterOf(status: unknown): number | undefined {
  const details = (status as { details?: { retryAfterSeconds?: unknown } } | null)?.details
  const seconds = details?.retryAfterSeconds
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0
    ? seconds
    : undefined
}

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'
  readonly object: Record<string, unknown>
}

interface KubeApiOptions {
  /**
   * How long a GET or a write may wait for its response, and then between two reads of its body;
   * for a watch, the stream's idle timeout is given with each watch instead.
   */
  readonly requestTimeoutMs?: number
  /**
   * The most a GET or a write may take as a whole, its body's last byte included (a body trickled
   * a byte at a time never trips the idle bound); at least `requestTimeoutMs`, and
   * WHOLE_REQUEST_TIMEOUT_MS unless given. Live reads have their own, shorter deadline.
   */
  readonly wholeRequestTimeoutMs?: number
  /** The most a body may hold; BODY_MAX_BYTES unless a test says otherwise. */
  readonly maxBodyBytes?: number
  /** The most a watch event may hold; WATCH_LINE_MAX_BYTES unless a test says otherwise. */
  readonly maxLineBytes?: number
  /** Each step of opening a proxy tunnel (proxy-tunnel.ts): kubectl's 10 s unless a test says otherwise. */
  readonly proxyStepTimeoutMs?: number | undefined
}

/** A response, with what was sent for it (to take the credentials out of an error body). */
interface Answer {
  readonly response: http.IncomingMessage
  readonly sent: https.RequestOptions
}

type Query = Readonly<Record<string, string | number | boolean | undefined>>

export class KubeApi {
  readonly #credentials: ClusterCredentials
  readonly #requestTimeoutMs: number
  readonly #wholeRequestTimeoutMs: number
  readonly #maxBodyBytes: number
  readonly #maxLineBytes: number
  readonly #proxyStepTimeoutMs: number | undefined
  #agent: http.Agent | undefined

  constructor(credentials: ClusterCredentials, options: KubeApiOptions = {}) {
    this.#credentials = credentials
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 5_000
    this.#wholeRequestTimeoutMs = Math.max(
      options.wholeRequestTimeoutMs ?? WHOLE_REQUEST_TIMEOUT_MS,
      this.#requestTimeoutMs,
    )
    this.#maxBodyBytes = options.maxBodyBytes ?? BODY_MAX_BYTES
    this.#maxLineBytes = options.maxLineBytes ?? WATCH_LINE_MAX_BYTES
    this.#proxyStepTimeoutMs = options.proxyStepTimeoutMs
  }

  /**
   * GETs a JSON document; `undefined` for 404, a KubeApiError for anything else but 200. The whole
   * read, from waiting for a pooled socket to the body's last byte, is bounded by the request
   * limit and by `signal`.
   */
  async get(
    path: string,
    query: Query = {},
    signal?: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> {
    const { answer, body } = await this.#exchange('GET', path, query, signal, undefined)
    const status = answer.response.statusCode ?? 0
    if (status === 404) return undefined
    if (status !== 200) throw apiError(path, answer.response, body, answer.sent)
    return JSON.parse(body) as Record<string, unknown>
  }

  /**
   * Sends a write (`POST`, `PUT`, `PATCH`) with a JSON body; returns the status and the parsed
   * body (a Kubernetes Status on errors). Never throws on an HTTP status; only when no whole
   * response came within the request limit (bounded as a GET is) or before `signal`. `signal`
   * abandons the write (leadership lost, a deadline): the caller cannot know whether the server
   * applied it, and must not act as if it had.
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
    const exchanged = await this.#exchange(method, path, options.query ?? {}, options.signal, {
      method,
      payload,
      contentType: options.contentType ?? 'application/json',
    })
    const { answer } = exchanged
    let text = exchanged.body
    const status = answer.response.statusCode ?? 0
    // A refusal's message is logged by the caller: without the credentials it may echo.
    if (status >= 400) text = redactCredentials(text, requestSecrets(answer.sent))
    let parsed: Record<string, unknown> | undefined
    try {
      parsed = JSON.parse(text) as Record<string, unknown>
    } catch {
      parsed = undefined
    }
    return { status, body: parsed }
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
    const { response, sent } = await this.#request(
      path,
      { ...query, watch: true },
      options.idleTimeoutMs,
      options.signal,
    )
    if (response.statusCode !== 200) {
      const body = await this.#readBody(response, 'GET', path)
      throw apiError(path, response, body, sent)
    }
    try {
      for await (const line of boundedLines(response, this.#maxLineBytes)) {
        if (line === '') continue
        onEvent(JSON.parse(line) as WatchEvent)
      }
    } catch (error) {
      if (error instanceof Error && error.name === 'BodyTooLargeError')
        throw new KubeApiError(`watch ${path}: ${error.message}`, 0)
      throw error
    } finally {
      response.destroy()
    }
    // A stream cut by an error or an abort ends the loop as well; tell it from a clean end.
    if (options.signal.aborted) throw new KubeApiError(`watch ${path}: aborted`, 0)
    if (!response.complete) throw new KubeApiError(`watch ${path}: connection lost`, 0)
  }

  /**
   * One request and its whole body, within the whole-request limit from the first byte sent to
   * the last received: the socket's idle timeout alone lets a body trickled a byte at a time run
   * on for ever. Past the limit the request and its response are dropped, with an error naming
   * the request; `signal` (a caller's own deadline, or shutdown) ends it sooner.
   */
  async #exchange(
    method: string,
    path: string,
    query: Query,
    signal: AbortSignal | undefined,
    write: Write | undefined,
  ): Promise<{ answer: Answer; body: string }> {
    const limitMs = this.#wholeRequestTimeoutMs
    // One signal for both, without AbortSignal.any: the caller's signal may live as long as the
    // process (a reflector's), and every request would hang another dependant on it.
    const bounded = new AbortController()
    // A step's own bound of the same length (no response, the proxy's CONNECT) says better what
    // stalled, and reports first; this one ends what those cannot see, such as a trickle.
    const timer = setTimeout(() => {
      bounded.abort()
    }, limitMs + STEP_BOUNDS_FIRST_MS)
    const onAbort = () => {
      bounded.abort()
    }
    if (signal?.aborted) bounded.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const answer = await this.#request(
        path,
        query,
        this.#requestTimeoutMs,
        bounded.signal,
        write,
        {
          retryUnauthorized: write === undefined,
        },
      )
      return { answer, body: await this.#readBody(answer.response, method, path) }
    } catch (error) {
      if (signal?.aborted) throw new KubeApiError(`${method} ${path}: ${abortReason(signal)}`, 0)
      // Not aborted by the caller: by the limit.
      if (bounded.signal.aborted)
        throw new KubeApiError(`${method} ${path}: no whole answer within ${limitMs} ms`, 0)
      throw error
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
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
  ): Promise<Answer> {
    const url = new URL(this.#credentials.server.replace(/\/$/, '') + path)
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value))
    }
    const first = await this.#options(path, write, signal)
    const response = await this.#send(url, path, first, timeoutMs, signal, write)
    if (response.statusCode !== 401 || !this.#credentials.refresh) return { response, sent: first }
    await this.#credentials.refresh()
    if (!retryUnauthorized) return { response, sent: first }
    const second = await this.#options(path, write, signal)
    if (authorizationOf(second) === authorizationOf(first)) return { response, sent: first }
    response.resume()
    return { response: await this.#send(url, path, second, timeoutMs, signal, write), sent: second }
  }

  /** The body within its bound; a KubeApiError naming the request past it. */
  async #readBody(response: http.IncomingMessage, method: string, path: string): Promise<string> {
    try {
      return await readBody(response, this.#maxBodyBytes)
    } catch (error) {
      if (error instanceof Error && error.name === 'BodyTooLargeError')
        throw new KubeApiError(`${method} ${path}: ${error.message}`, 0)
      throw error
    }
  }

  async #options(
    path: string,
    write: Write | undefined,
    signal: AbortSignal | undefined,
  ): Promise<https.RequestOptions> {
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
    try {
      await this.#credentials.applyTo(options, signal)
    } catch (error) {
      // Credentials that cannot be had (an exec plugin that failed): the request's error.
      if (signal?.aborted) throw error
      const reason = error instanceof Error ? error.message : String(error)
      throw new KubeApiError(`${options.method ?? 'GET'} ${path}: ${reason}`, 0)
    }
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
    this.#agent ??= newAgent(
      url.protocol,
      options,
      this.#credentials.proxy,
      this.#proxyStepTimeoutMs,
    )
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

  /** Closes idle pooled connections and ends whatever obtains credentials (at shutdown). */
  close(): void {
    this.#agent?.destroy()
    this.#credentials.close?.()
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

/** Whether `signal` was aborted by a deadline (a TimeoutError, as AbortSignal.timeout aborts). */
export function isDeadline(signal: AbortSignal | undefined): boolean {
  const reason: unknown = signal?.aborted ? signal.reason : undefined
  return reason instanceof Error && reason.name === 'TimeoutError'
}

function abortReason(signal: AbortSignal): string {
  if (isDeadline(signal)) return 'no answer before the deadline'
  const reason: unknown = signal.reason
  return reason instanceof Error ? reason.message : 'aborted'
}

function newAgent(
  protocol: string,
  tls: https.RequestOptions,
  proxy: URL | undefined,
  proxyStepTimeoutMs: number | undefined,
): http.Agent {
  // Each review of a proxy Deployment makes two live reads, and the API server sends reviews
  // concurrently (a burst of operator writes: dozens); the watches hold a socket each for good.
  // A pool smaller than that queued reads behind one another, and keeping only 4 idle sockets
  // paid a TLS handshake again after every burst (bench:cluster, 32 writers: added p50 168 -> 126
  // ms, p99 367 -> 198 ms). Idle sockets cost the API server little.
  const common = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64 }
  // The cluster's side only: a client certificate comes with each request, since an exec
  // plugin's is replaced when it expires (the pool keys its sockets by it).
  const { ca, rejectUnauthorized, servername } = tls
  const cluster: https.AgentOptions = {
    ...common,
    ...(ca === undefined ? {} : { ca }),
    ...(servername === undefined ? {} : { servername }),
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
  }
  if (proxy !== undefined) {
    const steps = proxyStepTimeoutMs === undefined ? {} : { stepTimeoutMs: proxyStepTimeoutMs }
    return proxyAgent(protocol, proxy, cluster, { ca, ...steps })
  }
  if (protocol === 'http:') return new http.Agent(common)
  return new https.Agent(cluster)
}

/**
 * An API error's message: the Status's, else the start of the body, without the credentials the
 * request carried or anything shaped like one (a proxy or server may echo them in a 401 or 403).
 * The wait it asks for is the Status's `details.retryAfterSeconds`, else the `Retry-After` header
 * in whole seconds (as client-go reads it; an HTTP date is not read).
 */
function apiError(
  path: string,
  response: http.IncomingMessage,
  body: string,
  sent: https.RequestOptions,
): KubeApiError {
  const status = response.statusCode ?? 0
  const secrets = requestSecrets(sent)
  let message: string | undefined
  let retryAfterSeconds = retryAfterHeader(response.headers['retry-after'])
  try {
    const parsed = JSON.parse(body) as { message?: unknown }
    if (typeof parsed.message === 'string') message = parsed.message
    retryAfterSeconds = retryAfterOf(parsed) ?? retryAfterSeconds
  } catch {
    // Not a Status object: keep the start of the body.
  }
  // Redacted before it is cut, so no part of a secret survives at the cut.
  message =
    message === undefined
      ? redactCredentials(body, secrets).slice(0, 300)
      : redactCredentials(message, secrets)
  return new KubeApiError(`GET ${path}: ${status} ${message}`, status, retryAfterSeconds)
}

/** `Retry-After: 7` as 7; anything else (absent, a date, 0) as no wait asked for. */
function retryAfterHeader(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined
  const seconds = Number(value.trim())
  return seconds > 0 ? seconds : undefined
}
