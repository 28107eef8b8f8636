/**
 * `serve` configuration: flags from commander and the environment (read here, from the
 * environment the CLI is given, not by commander from the process's), merged and checked all at
 * once, before anything listens, so a misconfigured pod fails fast with every problem listed.
 */

import type { ServerConfig } from '../http/server-config.ts'
import type { Enforcement } from '../admission/enforcement.ts'
import { environmentValue, pathList } from './environment.ts'
import type { Environment } from './environment.ts'
import { PACKAGE_CERT_DIR, SERVE_SETTINGS, SERVER_SETTING_OF, settingOf } from './serve-settings.ts'
import type {
  DefaultedSetting,
  SettingKey,
  SettingOptions,
  SettingValue,
} from './serve-settings.ts'
import type { ValueKind } from './setting-values.ts'

/** Raw option values as commander hands them over (the environment is read here). */
export interface ServeOptions extends SettingOptions {
  objects?: string[]
  /** `false` from `--no-reconciler`. */
  reconciler?: boolean
}

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
  readonly logLevel: SettingValue<'logLevel'>
  /** Generate development certificates in the cert dir when it has none. */
  readonly generateDevCertificates: boolean
  readonly mode: RunMode
  /** Where the reconciler's Lease lives (the service's own namespace). */
  readonly leaderElectionNamespace: string
  /** The ToolHive operator's service account, `name` (any namespace) or `namespace/name`. */
  readonly operatorServiceAccount: string
  /** What violations and patches become (deny or warn or audit, per rule; apply or observe). */
  readonly enforcement: Enforcement
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
  const given = (key: SettingKey): Given | undefined => {
    const { flag, env: variable } = settingOf(key)
    const fromFlag = options[key]
    // A switch given on the command line is on: commander hands it over as true.
    if (fromFlag !== undefined) return { raw: String(fromFlag), name: flag }
    const fromEnv = environmentValue(env, variable)
    return fromEnv === undefined ? undefined : { raw: fromEnv, name: variable }
  }
  /** The flag or variable that set a setting; its flag when its default applies. */
  const nameOf = (key: SettingKey): string => given(key)?.name ?? settingOf(key).flag
  /** The text given, or the setting's default for where the service runs. */
  const textOf = (key: DefaultedSetting): Given => {
    const fallback = SERVE_SETTINGS[key].default
    const raw =
      typeof fallback === 'string' ? fallback : embedded ? fallback.local : fallback.cluster
    return (
      given(key) ?? {
        raw: raw === PACKAGE_CERT_DIR ? defaults.devCertDir : raw,
        name: SERVE_SETTINGS[key].flag,
      }
    )
  }
  /** A setting's text read by its kind (the table's); a problem is listed, named by what set it. */
  const read = <K extends SettingKey>(key: K, text: Given): SettingValue<K> => {
    // Each key's kind reads its own value type; the table's type pairs them, not the index.
    const kind = settingOf(key).kind as ValueKind<SettingValue<K>>
    const { value, problem } = kind.read(text.raw)
    // Each line its own error, named by what set it.
    for (const line of problem?.split('\n') ?? []) errors.push(`${text.name}: ${line}`)
    return value
  }
  /** A setting that always has a value: given, or its default. */
  const value = <K extends DefaultedSetting>(key: K): SettingValue<K> => read(key, textOf(key))
  /** A setting without a default: unset unless given. */
  const optional = <K extends SettingKey>(key: K): SettingValue<K> | undefined => {
    const text = given(key)
    return text === undefined ? undefined : read(key, text)
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

  const host = value('host')
  const probeHost = value('probeHost')
  const port = value('port')
  const probePort = value('probePort')
  if (port !== 0 && port === probePort && host === probeHost) {
    errors.push(`${nameOf('probePort')}: must differ from ${nameOf('port')} (both are ${port})`)
  }
  const certDir = value('certDir')
  const certPollIntervalMs = value('certPollInterval')
  const shutdownDelayMs = value('shutdownDelay')
  const drainTimeoutMs = value('drainTimeout')
  const keepAliveTimeoutMs = value('keepAliveTimeout')

  // A flag wins over its variable, so `--reconciler-only` is on whatever the variable says.
  const reconcilerOnly = optional('reconcilerOnly') ?? false
  // The reconciler writes status in a cluster; with files or the embedded default there is none.
  const cluster = view.kind === 'cluster'
  if (reconcilerOnly && options.reconciler === false) {
    errors.push(`${nameOf('reconcilerOnly')} and --no-reconciler exclude each other`)
  }
  if (reconcilerOnly && !cluster) {
    errors.push(
      `${nameOf('reconcilerOnly')}: needs a cluster (in a pod or --kubeconfig) and no --objects`,
    )
  }
  const mode: RunMode = reconcilerOnly
    ? 'reconciler'
    : cluster && options.reconciler !== false
      ? 'all'
      : 'admission'
  const leaderElectionNamespace = value('leaderElectionNamespace')
  const operatorServiceAccount = value('operatorServiceAccount')
  const clientCaFile = optional('clientCa')
  const enforcement: Enforcement = {
    validationActions: value('validationActions'),
    ruleActions: optional('ruleActions') ?? new Map(),
    mutationMode: value('mutationMode'),
  }
  const logLevel = value('logLevel')
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
        clientCaFile,
      },
      serverNames: Object.fromEntries(
        Object.entries(SERVER_SETTING_OF).map(([field, key]) => [field, nameOf(key)]),
      ) as ServerSettingNames,
      view,
      logLevel,
      generateDevCertificates: embedded,
      mode,
      leaderElectionNamespace,
      operatorServiceAccount,
      enforcement,
    },
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
