/**
 * Connections to the API server through a kubeconfig's `proxy-url`, an HTTP or HTTPS proxy, as
 * client-go makes them for an https:// server: an HTTP CONNECT to the proxy (over TLS to an
 * https:// proxy), then TLS to the API server inside the tunnel. Every connection goes through the
 * proxy; one it refuses or cannot be reached is an error naming it, never a direct connection.
 *
 * The agents are Node's own, keep-alive pools and all, with only `createConnection` replaced (the
 * documented way to make sockets asynchronously), and the CONNECT is node:http's own client.
 * Node's built-in proxy support (the Agent's `proxyEnv`) was not used: it is still marked "active
 * development", checks an https:// proxy against Node's default CAs alone, and connects directly
 * when given a proxy URL it does not know (socks5, tried).
 *
 * Unlike Go, a plain-http API server is reached through a CONNECT tunnel too, where Go sends such
 * requests to the proxy in absolute form: one way for both keeps this small, and a plain-http API
 * server behind a proxy is rare.
 *
 * Each step of opening a tunnel has kubectl's bound, so a proxy that stalls fails in seconds with
 * one line naming it (docs/configuration.md, on `proxy-url`): client-go's transport sets Go's
 * `TLSHandshakeTimeout` to 10 s (k8s.io/client-go/transport/cache.go), which net/http's
 * transport.go applies to the TLS handshake with an https:// proxy and again to the API server's
 * inside the tunnel (`persistConn.addTLS`). Go waits up to a minute for the answer to the CONNECT
 * itself; here it gets the same 10 s, inside kubectl's bound, since an answer is one round trip
 * once the proxy has reached the API server. Reaching the proxy at all is left to the request's
 * own limit, as before.
 */

import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import tls from 'node:tls'

/** A connection to the proxy fails after this long unless the request says otherwise. */
const CONNECT_TIMEOUT_MS = 30_000

/** kubectl's bound on a TLS handshake (Go's TLSHandshakeTimeout as client-go sets it). */
export const PROXY_STEP_TIMEOUT_MS = 10_000

export interface ProxyTls {
  /**
   * The cluster's CA, trusted for an https:// proxy besides Node's default CAs (client-go trusts
   * only the cluster's, which would refuse a proxy with a publicly trusted certificate).
   */
  readonly ca?: https.AgentOptions['ca']
  /**
   * The most each step may take: the TLS handshake with an https:// proxy, its answer to the
   * CONNECT, the API server's TLS handshake through the tunnel. PROXY_STEP_TIMEOUT_MS unless a
   * test says otherwise.
   */
  readonly stepTimeoutMs?: number
}

/** A keep-alive agent whose every connection to the API server is tunnelled through `proxy`. */
export function proxyAgent(
  protocol: string,
  proxy: URL,
  options: https.AgentOptions,
  proxyTls: ProxyTls = {},
): http.Agent {
  const open = (target: http.ClientRequestArgs) => tunnel(proxy, target, proxyTls)
  if (protocol === 'http:') return new HttpTunnelAgent(open, options)
  const stepMs = proxyTls.stepTimeoutMs ?? PROXY_STEP_TIMEOUT_MS
  return new HttpsTunnelAgent(open, options, (socket, target) =>
    secureThroughTunnel(proxy, socket, target, stepMs),
  )
}

type Open = (target: http.ClientRequestArgs) => Promise<Socket>
type Created = (error: Error | null, stream: Duplex) => void

class HttpTunnelAgent extends http.Agent {
  readonly #open: Open
  constructor(open: Open, options: http.AgentOptions) {
    super(options)
    this.#open = open
  }
  override createConnection(options: http.ClientRequestArgs, callback?: Created): undefined {
    this.#open(options).then(
      (socket) => callback?.(null, socket),
      (error: unknown) => callback?.(error as Error, undefined as never),
    )
    return undefined
  }
}

type Secure = (socket: Socket, options: tls.ConnectionOptions) => tls.TLSSocket

class HttpsTunnelAgent extends https.Agent {
  readonly #open: Open
  readonly #secure: Secure
  constructor(open: Open, options: https.AgentOptions, secure: Secure) {
    super(options)
    this.#open = open
    this.#secure = secure
  }
  override createConnection(options: https.RequestOptions, callback?: Created): undefined {
    this.#open(options).then(
      // The request's TLS options (CA, client certificate, server name) apply inside the tunnel.
      (socket) => callback?.(null, this.#secure(socket, options as tls.ConnectionOptions)),
      (error: unknown) => callback?.(error as Error, undefined as never),
    )
    return undefined
  }
}

/** TLS to the API server inside the tunnel, given up when its handshake does not end in time. */
function secureThroughTunnel(
  proxy: URL,
  socket: Socket,
  options: tls.ConnectionOptions,
  stepMs: number,
): tls.TLSSocket {
  const secure = tls.connect({ ...options, socket })
  const authority = `${options.host ?? options.servername ?? ''}:${String(options.port)}`
  const timer = setTimeout(() => {
    secure.destroy(
      new Error(
        `proxy ${proxyName(proxy)}: no TLS handshake with ${authority} through the tunnel within ${stepMs} ms`,
      ),
    )
  }, stepMs)
  const stop = () => {
    clearTimeout(timer)
  }
  secure.once('secureConnect', stop)
  secure.once('close', stop)
  return secure
}

/** The proxy without any user and password, for messages. */
export function proxyName(proxy: URL): string {
  return `${proxy.protocol}//${proxy.host}`
}

/** A socket to the proxy on which it has answered `200` to `CONNECT host:port`. */
function tunnel(proxy: URL, target: http.ClientRequestArgs, proxyTls: ProxyTls): Promise<Socket> {
  const host = target.host ?? target.hostname ?? 'localhost'
  const authority = `${isIP(host) === 6 ? `[${host}]` : host}:${String(target.port)}`
  const timeoutMs = target.timeout ?? CONNECT_TIMEOUT_MS
  const failure = (reason: string) => new Error(`proxy ${proxyName(proxy)}: ${reason}`)
  const proxyHost = proxy.hostname.replace(/^\[(.*)\]$/, '$1')
  const headers: http.OutgoingHttpHeaders = { host: authority }
  if (proxy.username !== '' || proxy.password !== '') {
    const user = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`
    headers['proxy-authorization'] = `Basic ${Buffer.from(user).toString('base64')}`
  }
  const options: https.RequestOptions = {
    host: proxyHost,
    port: proxy.port === '' ? (proxy.protocol === 'https:' ? 443 : 80) : Number(proxy.port),
    method: 'CONNECT',
    path: authority,
    headers,
    agent: false,
  }
  if (proxy.protocol === 'https:') {
    if (isIP(proxyHost) === 0) options.servername = proxyHost
    const { ca } = proxyTls
    if (ca !== undefined)
      options.ca = [...tls.getCACertificates('default'), ...(Array.isArray(ca) ? ca : [ca])]
  }
  const transport = proxy.protocol === 'https:' ? https : http
  const stepMs = Math.min(proxyTls.stepTimeoutMs ?? PROXY_STEP_TIMEOUT_MS, timeoutMs)
  return new Promise((resolve, reject) => {
    const request = transport.request(options)
    // One deadline at a time, each step's own: a stalled step cannot borrow a later one's time.
    let timer: NodeJS.Timeout | undefined
    const within = (ms: number, reason: string) => {
      clearTimeout(timer)
      timer = setTimeout(() => request.destroy(failure(`${reason} within ${ms} ms`)), ms)
    }
    within(timeoutMs, 'no connection')
    const awaitAnswer = () => {
      within(stepMs, `no answer to CONNECT ${authority}`)
    }
    request.once('socket', (socket: Socket) => {
      socket.once('connect', () => {
        if (proxy.protocol !== 'https:') awaitAnswer()
        else within(stepMs, 'no TLS handshake (is it a plain-http proxy?)')
      })
      socket.once('secureConnect', awaitAnswer)
    })
    request.once('close', () => {
      clearTimeout(timer)
    })
    request.once('error', (error) => {
      clearTimeout(timer)
      reject(error.message.startsWith('proxy ') ? error : failure(describe(error)))
    })
    // Any answer to a CONNECT comes here, whatever its status (Node treats it as an upgrade).
    request.once('connect', (response, socket, head) => {
      clearTimeout(timer)
      if (response.statusCode !== 200) {
        socket.destroy()
        const status = `${response.statusCode ?? 0} ${response.statusMessage ?? ''}`.trim()
        reject(failure(`refused CONNECT ${authority}: ${status.replace(/[^\x20-\x7e]/g, '?')}`))
        return
      }
      if (head.length > 0) {
        // Neither TLS nor HTTP has the server speak first: bytes here are not the API server's.
        socket.destroy()
        reject(failure(`sent data through the tunnel to ${authority} before it was used`))
        return
      }
      resolve(socket)
    })
    request.end()
  })
}

/**
 * A TLS error from a proxy that answered in plain text says so, not in OpenSSL's words (which
 * Node gives as `EPROTO` and a line of library internals).
 */
function describe(error: Error): string {
  const plainText = /wrong version number|packet length too long/
  if ((error as NodeJS.ErrnoException).code === 'EPROTO' && plainText.test(error.message))
    return 'no TLS handshake: it answered in plain text (is it a plain-http proxy?)'
  return error.message
}
