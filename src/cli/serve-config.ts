/**
 * `serve` configuration: flags and environment merged by commander, then checked here all at
 * once, before anything listens, so a misconfigured pod fails fast with every problem listed.
 */

import { isIP } from 'node:net'
import { parseDuration } from '../policy/duration.ts'
import type { ServerConfig } from '../http/server.ts'
import { LOG_LEVELS } from './logger.ts'

/** Raw option values as commander hands them over (strings from flags or environment). */
export interface ServeOptions {
  host?: string
  port?: string
  probeHost?: string
  probePort?: string
  certDir?: string
  certPollInterval?: string
  shutdownDelay?: string
  drainTimeout?: string
  keepAliveTimeout?: string
  objects?: string[]
  kubeconfig?: string
  logLevel?: string
  /** `false` from `--no-reconciler`. */
  reconciler?: boolean
  reconcilerOnly?: boolean
  leaderElectionNamespace?: string
  clientCa?: string
}

/** What runs: both (the default in a cluster), admission only, or the status reconciler only. */
type RunMode = 'all' | 'admission' | 'reconciler'

type ViewSource =
  /** No cluster configured: the embedded default (sample objects, development certificates). */
  | { readonly kind: 'embedded'; readonly objects: readonly string[] }
  /** Objects from files, even next to a cluster. */
  | { readonly kind: 'files'; readonly objects: readonly string[] }
  /** A cluster, from in-pod credentials or a kubeconfig. */
  | {
      readonly kind: 'cluster'
      readonly kubeconfig: string | undefined
      /** Where the kubeconfig path came from, to name it in a start-up error. */
      readonly kubeconfigSetting: KubeconfigSetting | undefined
    }

export type KubeconfigSetting = '--kubeconfig' | 'KUBECONFIG'

export interface ServeConfig {
  readonly server: ServerConfig
  readonly view: ViewSource
  readonly logLevel: (typeof LOG_LEVELS)[number]
  /** Generate development certificates in the cert dir when it has none. */
  readonly generateDevCertificates: boolean
  readonly mode: RunMode
  /** Where the reconciler's Lease lives (the service's own namespace). */
  readonly leaderElectionNamespace: string
}

export const IN_CLUSTER_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs'

/** Resolves and validates; returns every problem found rather than the first. */
export function resolveServeConfig(
  options: ServeOptions,
  env: Readonly<Record<string, string | undefined>>,
  defaults: { readonly samplesDir: string; readonly devCertDir: string },
): { config: ServeConfig } | { errors: string[] } {
  const errors: string[] = []
  const kubeconfig = options.kubeconfig ?? nonEmpty(env.KUBECONFIG)
  const kubeconfigSetting: KubeconfigSetting | undefined =
    options.kubeconfig !== undefined
      ? '--kubeconfig'
      : kubeconfig !== undefined
        ? 'KUBECONFIG'
        : undefined
  const inPod = nonEmpty(env.KUBERNETES_SERVICE_HOST) !== undefined
  const embedded = !inPod && kubeconfig === undefined
  const objects = options.objects ?? []

  const view: ViewSource = embedded
    ? { kind: 'embedded', objects: objects.length > 0 ? objects : [defaults.samplesDir] }
    : objects.length > 0
      ? { kind: 'files', objects }
      : { kind: 'cluster', kubeconfig, kubeconfigSetting }

  const localOnly = embedded ? '127.0.0.1' : '0.0.0.0'
  const host = address('--host', options.host ?? localOnly, errors)
  const probeHost = address('--probe-host', options.probeHost ?? localOnly, errors)
  const port = portNumber('--port', options.port ?? '9443', errors)
  const probePort = portNumber('--probe-port', options.probePort ?? '8081', errors)
  if (port !== 0 && port === probePort && host === probeHost) {
    errors.push(`--probe-port: must differ from --port (both are ${port})`)
  }
  const certDir = options.certDir ?? (embedded ? defaults.devCertDir : IN_CLUSTER_CERT_DIR)
  if (certDir === '') errors.push('--cert-dir: must not be empty')

  const certPollIntervalMs = duration(
    '--cert-poll-interval',
    options.certPollInterval ?? '5s',
    100,
    errors,
  )
  // The delay lets the API server's endpoints stop routing here before the listener closes. With
  // no cluster configured nothing routes here, so by default Ctrl-C stops at once (in-flight
  // requests still finish); a delay asked for explicitly is kept.
  const shutdownDelayMs = duration(
    '--shutdown-delay',
    options.shutdownDelay ?? (embedded ? '0s' : '5s'),
    0,
    errors,
  )
  const drainTimeoutMs = duration('--drain-timeout', options.drainTimeout ?? '20s', 0, errors)
  const keepAliveTimeoutMs = duration(
    '--keep-alive-timeout',
    options.keepAliveTimeout ?? '100s',
    90_000,
    errors,
  )

  // The reconciler writes status in a cluster; with files or the embedded default there is none.
  const cluster = view.kind === 'cluster'
  if (options.reconcilerOnly === true && options.reconciler === false) {
    errors.push('--reconciler-only and --no-reconciler exclude each other')
  }
  if (options.reconcilerOnly === true && !cluster) {
    errors.push('--reconciler-only: needs a cluster (in a pod or --kubeconfig) and no --objects')
  }
  const mode: RunMode =
    options.reconcilerOnly === true
      ? 'reconciler'
      : cluster && options.reconciler !== false
        ? 'all'
        : 'admission'
  const leaderElectionNamespace =
    options.leaderElectionNamespace ?? nonEmpty(env.POD_NAMESPACE) ?? 'mcp-admission'

  if (options.clientCa === '') errors.push('--client-ca: must name a PEM file, or be left unset')

  const logLevel = options.logLevel ?? 'info'
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    errors.push(`--log-level: must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`)
  }
  if (errors.length > 0) return { errors }
  return {
    config: {
      server: {
        host,
        port,
        probeHost,
        probePort,
        certDir,
        certPollIntervalMs,
        shutdownDelayMs,
        drainTimeoutMs,
        keepAliveTimeoutMs,
        clientCaFile: options.clientCa,
      },
      view,
      logLevel: logLevel as ServeConfig['logLevel'],
      generateDevCertificates: embedded,
      mode,
      leaderElectionNamespace,
    },
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

function portNumber(flag: string, raw: string, errors: string[]): number {
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value > 65535) {
    errors.push(`${flag}: must be a port number from 0 to 65535, got "${raw}"`)
    return 0
  }
  return value
}

function address(flag: string, raw: string, errors: string[]): string {
  if (isIP(raw) === 0 && raw !== 'localhost') {
    errors.push(`${flag}: must be an IP address to listen on (or localhost), got "${raw}"`)
  }
  return raw
}

function duration(flag: string, raw: string, minimumMs: number, errors: string[]): number {
  const parsed = parseDuration(raw)
  if (parsed === undefined) {
    errors.push(`${flag}: must be a duration such as 500ms, 5s or 1m30s, got "${raw}"`)
    return 0
  }
  if (parsed < minimumMs) {
    errors.push(`${flag}: must be at least ${minimumMs} ms, got "${raw}"`)
  }
  return parsed
}
