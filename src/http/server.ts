/**
 * The running service: the admission app on HTTPS, the probe app on plain HTTP, certificate
 * reloading, readiness, and the graceful shutdown sequence (not ready → delay → drain → close).
 */

import { stat } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Server as HttpsServer } from 'node:https'
import type { SecureContextOptions } from 'node:tls'
import type { Logger } from 'pino'
import type { Admission } from '../admission/webhook.ts'
import type { ClusterView } from '../cluster/view.ts'
import { buildAdmissionApp } from './app.ts'
import { CertificateWatcher, presentPairProblem } from './certificates.ts'
import { readClientCa } from './client-ca.ts'
import type { ClientCaBundle } from './client-ca.ts'
import { createMetrics } from '../metrics/metrics.ts'
import type { Metrics } from '../metrics/metrics.ts'
import { buildProbeApp } from './probes.ts'
import { trackQuietConnections } from './quiet-connections.ts'
import { Readiness } from './readiness.ts'
import type { ServerConfig } from './server-config.ts'
import { errorCode, fileErrorReason } from '../files/file-errors.ts'
import { listenProblem, StartupProblem } from './startup-problem.ts'

/**
 * TLS 1.2 with forward-secret AEAD suites only (Mozilla "intermediate"); TLS 1.3 suites are
 * Node's defaults, all AEAD.
 */
export const TLS_OPTIONS = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: true,
} as const satisfies SecureContextOptions

/**
 * Slow-client limits. A TLS handshake must finish within 10 s (Node's default is 120 s), and the
 * header and request timeouts are checked every second (Node checks every 30 s by default, so a
 * connection that never finishes its headers would live up to 40 s instead of 10).
 */
const SOCKET_LIMITS = { handshakeTimeout: 10_000, connectionsCheckingInterval: 1_000 } as const
export const MAX_CONNECTIONS = 4096

export interface RunningServer {
  readonly admissionUrl: string
  readonly probeUrl: string
  readonly readiness: Readiness
  readonly metrics: Metrics
  /** Graceful shutdown; resolves when everything is closed. Safe to call more than once. */
  close(): Promise<void>
}

interface ServerDeps {
  /** Absent in reconciler-only mode: then only the probe port is served. */
  readonly admission: Admission | undefined
  readonly view: ClusterView
  readonly logger: Logger
  readonly metrics?: Metrics
}

/** What the admission listener reads from disk before it starts. */
interface ServerFiles {
  readonly clientCa: ClientCaBundle | undefined
}

/**
 * Checks the files the admission listener needs, before anything listens: a missing or invalid
 * client CA and a cert dir that is not a directory are StartupProblems. A missing cert dir is
 * not: in a cluster the Secret volume may be mounted late, and /readyz waits for it.
 */
export async function loadServerFiles(config: ServerConfig): Promise<ServerFiles> {
  const clientCa =
    config.clientCaFile === undefined ? undefined : await readClientCa(config.clientCaFile)
  await checkCertDir(config.certDir)
  return { clientCa }
}

async function checkCertDir(dir: string): Promise<void> {
  const found = await stat(dir).catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT') return undefined
    throw new StartupProblem('certDir', dir, fileErrorReason(error), { cause: error })
  })
  if (found && !found.isDirectory()) throw new StartupProblem('certDir', dir, 'not a directory')
  const problem = found ? await presentPairProblem(dir) : undefined
  if (problem !== undefined) throw new StartupProblem('certDir', dir, problem)
}

export async function startServer(config: ServerConfig, deps: ServerDeps): Promise<RunningServer> {
  const { logger, view } = deps
  // Every file is checked before anything listens (reconciler-only mode serves no TLS).
  const files = deps.admission ? await loadServerFiles(config) : { clientCa: undefined }
  if (files.clientCa) {
    logger.info(
      { clientCaFile: config.clientCaFile, authorities: files.clientCa.authorities },
      'client certificates required',
    )
  }
  const metrics = deps.metrics ?? createMetrics()
  const readiness = new Readiness()
  // Not "every cache synced": a kind the cluster does not serve is not waited for, and one whose
  // list keeps failing stops being waited for (cluster/kube-view.ts): the webhooks fail closed.
  readiness.require('cluster view ready', () => view.isReady())
  metrics.reportViewSynced(() => view.isSynced())
  // Probes first: /healthz answers and /readyz says what is missing while the rest starts.
  const probes = buildProbeApp({ logger, metrics, readiness })
  const probeUrl = await probes
    .listen({ host: config.probeHost, port: config.probePort })
    .catch(async (error: unknown) => {
      await probes.close()
      throw listenProblem(
        { host: 'probeHost', port: 'probePort' },
        { host: config.probeHost, port: config.probePort },
        error,
      )
    })
  let admission: AdmissionListener | undefined
  try {
    if (deps.admission) {
      admission = await startAdmissionListener(
        config,
        { admission: deps.admission, clientCa: files.clientCa?.pem },
        logger,
        metrics,
        readiness,
      )
    }
  } catch (error) {
    // Nothing half-started: the probe listener goes when the admission listener cannot start.
    await probes.close()
    throw error
  }
  logger.info({ admissionUrl: admission?.url, probeUrl }, 'mcp-admission serving')

  const close = async (): Promise<void> => {
    readiness.beginShutdown()
    // From now on every response tells its client to reconnect elsewhere, so by the time the
    // listener closes no keep-alive client is about to reuse a socket the server drops.
    admission?.beginDrain()
    logger.info(
      { delayMs: config.shutdownDelayMs },
      'shutting down: not ready, waiting before drain',
    )
    await sleep(config.shutdownDelayMs)
    await admission?.close()
    await probes.close()
    logger.info('shutdown complete')
  }
  let closing: Promise<void> | undefined
  return {
    admissionUrl: admission?.url ?? '',
    probeUrl,
    readiness,
    metrics,
    close: () => (closing ??= close()),
  }
}

interface AdmissionListener {
  readonly url: string
  /** Answer with `Connection: close` from now on. */
  beginDrain(): void
  /** Stop listening, let in-flight requests finish (up to the drain timeout), stop the watcher. */
  close(): Promise<void>
}

/** The HTTPS admission listener with its certificate watcher; `close` drains it. */
async function startAdmissionListener(
  config: ServerConfig,
  // The client CA is read once, checked, at start: a missing or invalid one is a start-up error.
  { admission, clientCa }: { readonly admission: Admission; readonly clientCa: string | undefined },
  logger: Logger,
  metrics: Metrics,
  readiness: Readiness,
): Promise<AdmissionListener> {
  const clientAuth =
    clientCa === undefined ? {} : { ca: clientCa, requestCert: true, rejectUnauthorized: true }
  const app = buildAdmissionApp({
    admission,
    logger,
    metrics,
    // No certificate yet: handshakes fail until the watcher installs one.
    https: { ...TLS_OPTIONS, ...clientAuth, ...SOCKET_LIMITS },
    server: {
      keepAliveTimeout: config.keepAliveTimeoutMs,
      requestTimeout: 30_000,
      maxRequestsPerSocket: 0,
    },
  })
  // Fastify types its server as http.Server whatever the options; with `https` it is an https.Server.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
  const tlsServer = app.server as HttpsServer
  tlsServer.headersTimeout = 10_000
  // Beyond this many sockets new connections are dropped: idle or trickling clients cannot
  // exhaust file descriptors and memory (the API server needs a handful per replica).
  tlsServer.maxConnections = MAX_CONNECTIONS

  // Just before the listener stops accepting: connections with nothing in flight go at once
  // (Node's own close keeps those that never sent a request until the drain timeout).
  const closeQuietConnections = trackQuietConnections(tlsServer)
  app.addHook('preClose', (done) => {
    closeQuietConnections()
    done()
  })

  let draining = false
  app.addHook('onSend', async (_request, reply) => {
    // Tell keep-alive clients to reconnect elsewhere once the drain has begun.
    if (draining) void reply.header('connection', 'close')
  })

  const certificates = new CertificateWatcher({
    dir: config.certDir,
    pollIntervalMs: config.certPollIntervalMs,
    logger,
    onPair: (pair) => {
      // The trusted client CA belongs to the secure context, so it is set again with each pair.
      const ca = clientCa === undefined ? {} : { ca: clientCa }
      tlsServer.setSecureContext({ ...TLS_OPTIONS, ...ca, cert: pair.cert, key: pair.key })
      metrics.certificateNotAfter.set(pair.notAfter.getTime() / 1000)
      metrics.certificateReloads.inc({ result: 'loaded' })
    },
    onRejected: () => {
      metrics.certificateReloads.inc({ result: 'rejected' })
    },
  })
  readiness.require('serving certificate loaded', () => certificates.current !== undefined)
  // Checked at each readiness check, so a certificate that expires while served turns it false.
  readiness.require(
    'serving certificate valid now',
    () => certificates.current === undefined || certificates.currentProblem() === undefined,
  )
  try {
    await certificates.start()
    const url = await app
      .listen({ host: config.host, port: config.port })
      .catch((error: unknown) => {
        throw listenProblem(
          { host: 'host', port: 'port' },
          { host: config.host, port: config.port },
          error,
        )
      })
    return {
      url,
      beginDrain: () => {
        draining = true
      },
      close: async () => {
        draining = true
        const cut = setTimeout(() => {
          logger.warn('drain timeout: closing remaining connections')
          tlsServer.closeAllConnections()
        }, config.drainTimeoutMs)
        await app.close()
        clearTimeout(cut)
        certificates.stop()
      },
    }
  } catch (error) {
    certificates.stop()
    await app.close()
    throw error
  }
}
