/**
 * `serve` configuration: flags from commander and the environment (read here, from the
 * environment the CLI is given, not by commander from the process's), merged and checked all at
 * once, before anything listens, so a misconfigured pod fails fast with every problem listed.
 */

import { isIP } from 'node:net'
import { parseDuration } from '../policy/go/duration.ts'
import type { ServerConfig } from '../http/server-config.ts'
import { DEFAULT_OPERATOR_SERVICE_ACCOUNT } from '../admission/writer.ts'
import { MUTATION_MODES, parseValidationActions } from '../admission/enforcement.ts'
import type { Enforcement, MutationMode } from '../admission/enforcement.ts'
import { LOG_LEVELS } from './logger.ts'
import { booleanVariable, environmentValue, pathList } from './environment.ts'
import type { Environment } from './environment.ts'

/** Raw option values as commander hands them over (strings from flags; the environment is read here). */
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
  operatorServiceAccount?: string
  validationActions?: string
  mutationMode?: string
}

/** A default: one value, or one in a cluster and another with no cluster configured. */
type SettingDefault = string | { readonly cluster: string; readonly local: string }

export const IN_CLUSTER_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs'
/** Stands for the package's own `certs/` (known at run time) in the cert dir's default. */
const PACKAGE_CERT_DIR = 'certs/ of the package'

/**
 * The flag, environment variable and default of each option of `serve` that has a value: the
 * one place a default is stated (the help text is written from it).
 */
export const SERVE_SETTINGS = {
  host: {
    flag: '--host',
    env: 'MCP_ADMISSION_HOST',
    default: { cluster: '0.0.0.0', local: '127.0.0.1' },
  },
  port: { flag: '--port', env: 'MCP_ADMISSION_PORT', default: '9443' },
  probeHost: {
    flag: '--probe-host',
    env: 'MCP_ADMISSION_PROBE_HOST',
    default: { cluster: '0.0.0.0', local: '127.0.0.1' },
  },
  probePort: { flag: '--probe-port', env: 'MCP_ADMISSION_PROBE_PORT', default: '8081' },
  certDir: {
    flag: '--cert-dir',
    env: 'MCP_ADMISSION_CERT_DIR',
    default: { cluster: IN_CLUSTER_CERT_DIR, local: PACKAGE_CERT_DIR },
  },
  certPollInterval: {
    flag: '--cert-poll-interval',
    env: 'MCP_ADMISSION_CERT_POLL_INTERVAL',
    default: '5s',
  },
  clientCa: { flag: '--client-ca', env: 'MCP_ADMISSION_CLIENT_CA' },
  // The delay lets the API server's endpoints stop routing here before the listener closes. With
  // no cluster configured nothing routes here, so by default Ctrl-C stops at once (in-flight
  // requests still finish); a delay asked for explicitly is kept.
  shutdownDelay: {
    flag: '--shutdown-delay',
    env: 'MCP_ADMISSION_SHUTDOWN_DELAY',
    default: { cluster: '5s', local: '0s' },
  },
  drainTimeout: { flag: '--drain-timeout', env: 'MCP_ADMISSION_DRAIN_TIMEOUT', default: '20s' },
  keepAliveTimeout: {
    flag: '--keep-alive-timeout',
    env: 'MCP_ADMISSION_KEEP_ALIVE_TIMEOUT',
    default: '100s',
  },
  kubeconfig: { flag: '--kubeconfig', env: 'KUBECONFIG' },
  logLevel: { flag: '--log-level', env: 'MCP_ADMISSION_LOG_LEVEL', default: 'info' },
  reconcilerOnly: { flag: '--reconciler-only', env: 'MCP_ADMISSION_RECONCILER_ONLY' },
  leaderElectionNamespace: {
    flag: '--leader-election-namespace',
    env: 'POD_NAMESPACE',
    default: 'mcp-admission',
  },
  operatorServiceAccount: {
    flag: '--operator-service-account',
    env: 'MCP_ADMISSION_OPERATOR_SERVICE_ACCOUNT',
    default: DEFAULT_OPERATOR_SERVICE_ACCOUNT,
  },
  validationActions: {
    flag: '--validation-actions',
    env: 'MCP_ADMISSION_VALIDATION_ACTIONS',
    default: 'Deny',
  },
  mutationMode: { flag: '--mutation-mode', env: 'MCP_ADMISSION_MUTATION_MODE', default: 'apply' },
} as const satisfies Partial<
  Record<keyof ServeOptions, { flag: string; env: string; default?: SettingDefault }>
>

type SettingKey = keyof typeof SERVE_SETTINGS
type DefaultedSetting = {
  [K in SettingKey]: (typeof SERVE_SETTINGS)[K] extends { default: SettingDefault } ? K : never
}[SettingKey]

/** `(default 9443)`, or `(default 5s; 0s with no cluster)`, for the help text. */
export function defaultHelp(key: SettingKey): string {
  const entry: { readonly default?: SettingDefault } = SERVE_SETTINGS[key] as {
    readonly default?: SettingDefault
  }
  const value = entry.default
  if (value === undefined) return ''
  if (typeof value === 'string') return ` (default ${value})`
  return ` (default ${value.cluster}; ${value.local} with no cluster)`
}

type TextSetting = Exclude<keyof typeof SERVE_SETTINGS, 'reconcilerOnly'>

/** A setting's value and what set it: the flag, or the variable when the flag was not given. */
interface Given {
  readonly raw: string
  /** `--port` or `MCP_ADMISSION_PORT`: errors name what the user wrote. */
  readonly name: string
}

/** What runs: both (the default in a cluster), admission only, or the status reconciler only. */
type RunMode = 'all' | 'admission' | 'reconciler'

/** How the cluster is reached. */
export type Credentials =
  /** One kubeconfig (`--kubeconfig`), or the files of KUBECONFIG merged as kubectl merges them. */
  | {
      readonly kind: 'kubeconfig'
      readonly files: readonly string[]
      /** `--kubeconfig` or `KUBECONFIG`, and its value as given: errors name them. */
      readonly setting: KubeconfigSetting
      readonly value: string
    }
  /** In a pod: the service's address from the environment, the service account's files. */
  | { readonly kind: 'in-cluster'; readonly host: string; readonly port: number }

type ViewSource =
  /** No cluster configured: the embedded default (sample objects, development certificates). */
  | { readonly kind: 'embedded'; readonly objects: readonly string[] }
  /** Objects from files, even next to a cluster. */
  | { readonly kind: 'files'; readonly objects: readonly string[] }
  /** A cluster, from in-pod credentials or a kubeconfig. */
  | { readonly kind: 'cluster'; readonly credentials: Credentials }

export type KubeconfigSetting = '--kubeconfig' | 'KUBECONFIG'

/** For each server setting, the flag or variable that set it (start-up errors name it). */
export type ServerSettingNames = Readonly<Record<keyof ServerConfig, string>>

export interface ServeConfig {
  readonly server: ServerConfig
  readonly serverNames: ServerSettingNames
  readonly view: ViewSource
  readonly logLevel: (typeof LOG_LEVELS)[number]
  /** Generate development certificates in the cert dir when it has none. */
  readonly generateDevCertificates: boolean
  readonly mode: RunMode
  /** Where the reconciler's Lease lives (the service's own namespace). */
  readonly leaderElectionNamespace: string
  /** The ToolHive operator's service account, `name` (any namespace) or `namespace/name`. */
  readonly operatorServiceAccount: string
  /** What violations and patches become (deny or warn or audit; apply or observe). */
  readonly enforcement: Enforcement
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** `name` or `namespace/name`: a namespace is a DNS-1123 label, a service account a subdomain. */
function isServiceAccountReference(value: string): boolean {
  const parts = value.split('/')
  if (parts.length > 2) return false
  const name = parts.at(-1) ?? ''
  const namespace = parts.length === 2 ? parts[0] : undefined
  return (
    name.length <= 253 &&
    DNS1123_SUBDOMAIN.test(name) &&
    (namespace === undefined || (namespace.length <= 63 && DNS1123_LABEL.test(namespace)))
  )
}

/**
 * Resolves flags and environment (a flag wins over its variable; an empty variable is unset)
 * and validates them; returns every problem found rather than the first, each naming the flag
 * or variable it came from.
 */
export function resolveServeConfig(
  options: ServeOptions,
  env: Environment,
  defaults: { readonly samplesDir: string; readonly devCertDir: string },
): { config: ServeConfig } | { errors: string[] } {
  const errors: string[] = []
  const given = (key: TextSetting): Given | undefined => {
    const { flag, env: variable } = SERVE_SETTINGS[key]
    const fromFlag = options[key]
    if (fromFlag !== undefined) return { raw: fromFlag, name: flag }
    const fromEnv = environmentValue(env, variable)
    return fromEnv === undefined ? undefined : { raw: fromEnv, name: variable }
  }
  /** The value given, or the setting's default for where the service runs. */
  const setting = (key: TextSetting & DefaultedSetting): Given => {
    const fallback: SettingDefault = SERVE_SETTINGS[key].default
    const raw =
      typeof fallback === 'string' ? fallback : embedded ? fallback.local : fallback.cluster
    return (
      given(key) ?? {
        raw: raw === PACKAGE_CERT_DIR ? defaults.devCertDir : raw,
        name: SERVE_SETTINGS[key].flag,
      }
    )
  }

  const kubeconfig = kubeconfigFiles(given('kubeconfig'), errors)
  const inPod = environmentValue(env, 'KUBERNETES_SERVICE_HOST') !== undefined
  const embedded = !inPod && given('kubeconfig') === undefined
  const objects = options.objects ?? []

  const view: ViewSource = embedded
    ? { kind: 'embedded', objects: objects.length > 0 ? objects : [defaults.samplesDir] }
    : objects.length > 0
      ? { kind: 'files', objects }
      : { kind: 'cluster', credentials: kubeconfig ?? inClusterCredentials(env, errors) }

  const hostSetting = setting('host')
  const probeHostSetting = setting('probeHost')
  const portSetting = setting('port')
  const probePortSetting = setting('probePort')
  const host = address(hostSetting, errors)
  const probeHost = address(probeHostSetting, errors)
  const port = portNumber(portSetting, errors)
  const probePort = portNumber(probePortSetting, errors)
  if (port !== 0 && port === probePort && host === probeHost) {
    errors.push(`${probePortSetting.name}: must differ from ${portSetting.name} (both are ${port})`)
  }
  const certDirSetting = setting('certDir')
  if (certDirSetting.raw === '') errors.push(`${certDirSetting.name}: must not be empty`)

  const certPollSetting = setting('certPollInterval')
  const certPollIntervalMs = duration(certPollSetting, 100, errors)
  const shutdownDelaySetting = setting('shutdownDelay')
  const shutdownDelayMs = duration(shutdownDelaySetting, 0, errors)
  const drainTimeoutSetting = setting('drainTimeout')
  const drainTimeoutMs = duration(drainTimeoutSetting, 0, errors)
  const keepAliveSetting = setting('keepAliveTimeout')
  const keepAliveTimeoutMs = duration(keepAliveSetting, 90_000, errors)

  // A flag wins over its variable, so `--reconciler-only` is on whatever the variable says.
  const reconcilerOnly =
    options.reconcilerOnly ??
    booleanVariable(env, SERVE_SETTINGS.reconcilerOnly.env, errors) ??
    false
  const reconcilerOnlyName =
    options.reconcilerOnly === undefined
      ? SERVE_SETTINGS.reconcilerOnly.env
      : SERVE_SETTINGS.reconcilerOnly.flag
  // The reconciler writes status in a cluster; with files or the embedded default there is none.
  const cluster = view.kind === 'cluster'
  if (reconcilerOnly && options.reconciler === false) {
    errors.push(`${reconcilerOnlyName} and --no-reconciler exclude each other`)
  }
  if (reconcilerOnly && !cluster) {
    errors.push(
      `${reconcilerOnlyName}: needs a cluster (in a pod or --kubeconfig) and no --objects`,
    )
  }
  const mode: RunMode = reconcilerOnly
    ? 'reconciler'
    : cluster && options.reconciler !== false
      ? 'all'
      : 'admission'
  const namespaceSetting = setting('leaderElectionNamespace')
  if (!DNS1123_LABEL.test(namespaceSetting.raw) || namespaceSetting.raw.length > 63) {
    errors.push(
      `${namespaceSetting.name}: must be a namespace name (a DNS-1123 label), got ${JSON.stringify(namespaceSetting.raw)}`,
    )
  }

  const accountSetting = setting('operatorServiceAccount')
  if (!isServiceAccountReference(accountSetting.raw)) {
    errors.push(
      `${accountSetting.name}: must be a service account name or namespace/name, got ${JSON.stringify(accountSetting.raw)}`,
    )
  }

  const clientCaSetting = given('clientCa')
  if (clientCaSetting?.raw === '') {
    errors.push(`${clientCaSetting.name}: must name a PEM file, or be left unset`)
  }

  const enforcement = enforcementOf(setting('validationActions'), setting('mutationMode'), errors)

  const logLevelSetting = setting('logLevel')
  const logLevel = logLevelSetting.raw
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    errors.push(
      `${logLevelSetting.name}: must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`,
    )
  }
  if (errors.length > 0) return { errors }
  return {
    config: {
      server: {
        host,
        port,
        probeHost,
        probePort,
        certDir: certDirSetting.raw,
        certPollIntervalMs,
        shutdownDelayMs,
        drainTimeoutMs,
        keepAliveTimeoutMs,
        clientCaFile: clientCaSetting?.raw,
      },
      serverNames: {
        host: hostSetting.name,
        port: portSetting.name,
        probeHost: probeHostSetting.name,
        probePort: probePortSetting.name,
        certDir: certDirSetting.name,
        certPollIntervalMs: certPollSetting.name,
        shutdownDelayMs: shutdownDelaySetting.name,
        drainTimeoutMs: drainTimeoutSetting.name,
        keepAliveTimeoutMs: keepAliveSetting.name,
        clientCaFile: clientCaSetting?.name ?? SERVE_SETTINGS.clientCa.flag,
      },
      view,
      logLevel: logLevel as ServeConfig['logLevel'],
      generateDevCertificates: embedded,
      mode,
      leaderElectionNamespace: namespaceSetting.raw,
      operatorServiceAccount: accountSetting.raw,
      enforcement,
    },
  }
}

function enforcementOf(actions: Given, mode: Given, errors: string[]): Enforcement {
  const parsed = parseValidationActions(actions.raw)
  if ('problem' in parsed) errors.push(`${actions.name}: ${parsed.problem}`)
  const mutationMode = MUTATION_MODES.find((known) => known === mode.raw)
  if (mutationMode === undefined)
    errors.push(
      `${mode.name}: must be one of ${MUTATION_MODES.join(', ')}, got ${JSON.stringify(mode.raw)}`,
    )
  return {
    validationActions: 'actions' in parsed ? parsed.actions : ['Deny'],
    mutationMode: mutationMode ?? ('apply' satisfies MutationMode),
  }
}

/**
 * The cluster a one-shot command (`audit`) reads, as `serve` finds it: `--kubeconfig`, else
 * KUBECONFIG, else the pod's own service account; with none of them, undefined.
 */
export function commandCredentials(
  kubeconfig: string | undefined,
  env: Environment,
): { readonly credentials?: Credentials; readonly errors: string[] } {
  const errors: string[] = []
  const fromEnv = environmentValue(env, SERVE_SETTINGS.kubeconfig.env)
  const given: Given | undefined =
    kubeconfig !== undefined
      ? { raw: kubeconfig, name: SERVE_SETTINGS.kubeconfig.flag }
      : fromEnv === undefined
        ? undefined
        : { raw: fromEnv, name: SERVE_SETTINGS.kubeconfig.env }
  const credentials =
    kubeconfigFiles(given, errors) ??
    (environmentValue(env, 'KUBERNETES_SERVICE_HOST') === undefined
      ? undefined
      : inClusterCredentials(env, errors))
  return { ...(credentials ? { credentials } : {}), errors }
}

/**
 * The kubeconfig files to read: `--kubeconfig` names one file (as kubectl's flag does);
 * KUBECONFIG is a path list, merged as kubectl merges it (in kubeconfig.ts).
 */
function kubeconfigFiles(given: Given | undefined, errors: string[]): Credentials | undefined {
  if (given === undefined) return undefined
  const setting: KubeconfigSetting = given.name === '--kubeconfig' ? '--kubeconfig' : 'KUBECONFIG'
  const files = setting === '--kubeconfig' ? [given.raw] : pathList(given.raw)
  if (files.length === 0 || files[0] === '') {
    errors.push(`${setting}: must name a kubeconfig file, got ${JSON.stringify(given.raw)}`)
  }
  return { kind: 'kubeconfig', files, setting, value: given.raw }
}

/**
 * In a pod the API server is at KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT; a host without
 * a port is no address to read from (the service account's files are checked at start-up).
 */
function inClusterCredentials(env: Environment, errors: string[]): Credentials {
  const host = environmentValue(env, 'KUBERNETES_SERVICE_HOST') ?? ''
  const raw = environmentValue(env, 'KUBERNETES_SERVICE_PORT')
  const port = Number(raw)
  if (raw === undefined) {
    errors.push(
      'KUBERNETES_SERVICE_PORT: not set, but KUBERNETES_SERVICE_HOST is (in-cluster credentials need both; outside a pod, set --kubeconfig)',
    )
  } else if (!/^\d+$/.test(raw) || port < 1 || port > 65535) {
    errors.push(
      `KUBERNETES_SERVICE_PORT: must be a port number from 1 to 65535, got ${JSON.stringify(raw)}`,
    )
  }
  return { kind: 'in-cluster', host, port }
}

function portNumber({ raw, name }: Given, errors: string[]): number {
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value > 65535) {
    errors.push(`${name}: must be a port number from 0 to 65535, got ${JSON.stringify(raw)}`)
    return 0
  }
  return value
}

function address({ raw, name }: Given, errors: string[]): string {
  if (isIP(raw) === 0 && raw !== 'localhost') {
    errors.push(
      `${name}: must be an IP address to listen on (or localhost), got ${JSON.stringify(raw)}`,
    )
  }
  return raw
}

function duration({ raw, name }: Given, minimumMs: number, errors: string[]): number {
  const parsed = parseDuration(raw)
  if (parsed === undefined) {
    errors.push(
      `${name}: must be a duration such as 500ms, 5s or 1m30s, got ${JSON.stringify(raw)}`,
    )
    return 0
  }
  if (parsed < minimumMs) {
    errors.push(`${name}: must be at least ${minimumMs} ms, got ${JSON.stringify(raw)}`)
  }
  return parsed
}
