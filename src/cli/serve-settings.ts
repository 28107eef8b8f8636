/**
 * The settings of `serve`, one entry each: its flag, its environment variable, its default, its
 * help text and what its value may be (bounds included). Each is stated here only: commander's
 * options and help are made from this table (program.ts), the resolver reads and checks values by
 * it (serve-config.ts), start-up errors name flags from it (startup-errors.ts), and a test holds
 * the table of docs/configuration.md to it.
 */

import { DEFAULT_OPERATOR_SERVICE_ACCOUNT } from '../admission/writer.ts'
import { MUTATION_MODES } from '../admission/enforcement.ts'
import { RULE_ACTIONS_EXAMPLE, RULE_ACTIONS_SEPARATOR } from '../policy/action-settings.ts'
import type { ServerConfig } from '../http/server-config.ts'
import { LOG_LEVELS } from './logger.ts'
import {
  anyText,
  duration,
  ipAddress,
  LONGEST_TIMER,
  namespaceName,
  nonEmpty,
  oneOf,
  portNumber,
  ruleActions,
  serviceAccountReference,
  switchValue,
  validationActions,
} from './setting-values.ts'
import type { ValueKind } from './setting-values.ts'

/** A default: one value, or one in a cluster and another with no cluster configured. */
export type SettingDefault = string | { readonly cluster: string; readonly local: string }

interface Setting<T> {
  /** The key is the option's name as commander hands it over (`--cert-dir` → `certDir`). */
  readonly flag: `--${string}`
  /** The value's name in the help (`--port <port>`); none for a switch, which takes no value. */
  readonly placeholder?: `<${string}>`
  /** Read when the flag is not given; empty counts as unset. */
  readonly env: string
  /** The text used when neither is given, read like a given one; none: the setting is unset. */
  readonly default?: SettingDefault
  readonly help: string
  readonly kind: ValueKind<T>
  /**
   * The flag may be given more than once: its values are joined with `joinedWith` and read as
   * one (the variable says it all in one value). Otherwise the last flag given would win.
   */
  readonly repeatable?: { readonly joinedWith: string }
}

export const IN_CLUSTER_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs'
/** Stands for the package's own `certs/` (known at run time) in the cert dir's default. */
export const PACKAGE_CERT_DIR = 'certs/ of the package'

/** In this order in `serve --help`. */
export const SERVE_SETTINGS = {
  host: {
    flag: '--host',
    placeholder: '<ip>',
    env: 'MCP_ADMISSION_HOST',
    default: { cluster: '0.0.0.0', local: '127.0.0.1' },
    help: 'address for the HTTPS webhook listener',
    kind: ipAddress,
  },
  port: {
    flag: '--port',
    placeholder: '<port>',
    env: 'MCP_ADMISSION_PORT',
    default: '9443',
    help: 'HTTPS webhook port',
    kind: portNumber,
  },
  probeHost: {
    flag: '--probe-host',
    placeholder: '<ip>',
    env: 'MCP_ADMISSION_PROBE_HOST',
    default: { cluster: '0.0.0.0', local: '127.0.0.1' },
    help: 'address for /healthz, /readyz, /metrics',
    kind: ipAddress,
  },
  probePort: {
    flag: '--probe-port',
    placeholder: '<port>',
    env: 'MCP_ADMISSION_PROBE_PORT',
    default: '8081',
    help: 'plain-HTTP probe and metrics port',
    kind: portNumber,
  },
  certDir: {
    flag: '--cert-dir',
    placeholder: '<dir>',
    env: 'MCP_ADMISSION_CERT_DIR',
    default: { cluster: IN_CLUSTER_CERT_DIR, local: PACKAGE_CERT_DIR },
    help: 'directory holding tls.crt and tls.key',
    kind: nonEmpty('must not be empty'),
  },
  certPollInterval: {
    flag: '--cert-poll-interval',
    placeholder: '<duration>',
    env: 'MCP_ADMISSION_CERT_POLL_INTERVAL',
    default: '5s',
    help: 'certificate re-read interval',
    kind: duration({ min: '100ms', max: LONGEST_TIMER }),
  },
  // The delay lets the API server's endpoints stop routing here before the listener closes. With
  // no cluster configured nothing routes here, so by default Ctrl-C stops at once (in-flight
  // requests still finish); a delay asked for explicitly is kept.
  shutdownDelay: {
    flag: '--shutdown-delay',
    placeholder: '<duration>',
    env: 'MCP_ADMISSION_SHUTDOWN_DELAY',
    default: { cluster: '5s', local: '0s' },
    help: 'unready time before draining on SIGTERM',
    kind: duration({ max: LONGEST_TIMER }),
  },
  drainTimeout: {
    flag: '--drain-timeout',
    placeholder: '<duration>',
    env: 'MCP_ADMISSION_DRAIN_TIMEOUT',
    default: '20s',
    help: 'time for in-flight requests to finish',
    kind: duration({ max: LONGEST_TIMER }),
  },
  keepAliveTimeout: {
    flag: '--keep-alive-timeout',
    placeholder: '<duration>',
    env: 'MCP_ADMISSION_KEEP_ALIVE_TIMEOUT',
    default: '100s',
    help: 'idle keep-alive timeout',
    // Longer than the API server's 90 s pool timeout, so the client closes an idle connection
    // first and never reuses one this side is closing.
    kind: duration({ min: '90s', max: LONGEST_TIMER }),
  },
  kubeconfig: {
    flag: '--kubeconfig',
    placeholder: '<file>',
    env: 'KUBECONFIG',
    help: 'kubeconfig of the cluster to read (KUBECONFIG may list several files, merged as kubectl does)',
    // One file from the flag, a path list from the variable: read by the resolver, which knows
    // which set it.
    kind: anyText,
  },
  logLevel: {
    flag: '--log-level',
    placeholder: '<level>',
    env: 'MCP_ADMISSION_LOG_LEVEL',
    default: 'info',
    help: `log level: ${LOG_LEVELS.join(', ')}`,
    kind: oneOf(LOG_LEVELS),
  },
  clientCa: {
    flag: '--client-ca',
    placeholder: '<file>',
    env: 'MCP_ADMISSION_CLIENT_CA',
    help: "require a client certificate signed by this CA (the API server's webhook client certificate)",
    kind: nonEmpty('must name a PEM file, or be left unset'),
  },
  reconcilerOnly: {
    flag: '--reconciler-only',
    env: 'MCP_ADMISSION_RECONCILER_ONLY',
    help: 'write status only; serve no admission webhooks',
    kind: switchValue,
  },
  leaderElectionNamespace: {
    flag: '--leader-election-namespace',
    placeholder: '<ns>',
    env: 'POD_NAMESPACE',
    default: 'mcp-admission',
    help: "namespace of the reconciler's Lease",
    kind: namespaceName,
  },
  operatorServiceAccount: {
    flag: '--operator-service-account',
    placeholder: '<[ns/]name>',
    env: 'MCP_ADMISSION_OPERATOR_SERVICE_ACCOUNT',
    default: DEFAULT_OPERATOR_SERVICE_ACCOUNT,
    help: "the ToolHive operator's service account, ns/name; a name alone matches in any namespace, for the mutations metric only (never the slow-API-server fallback)",
    kind: serviceAccountReference,
  },
  validationActions: {
    flag: '--validation-actions',
    placeholder: '<actions>',
    env: 'MCP_ADMISSION_VALIDATION_ACTIONS',
    default: 'Deny',
    help: 'what a violation becomes: Deny, Warn, Audit, Deny,Audit or Warn,Audit',
    kind: validationActions,
  },
  ruleActions: {
    flag: '--rule-actions',
    placeholder: '<rule=actions>',
    env: 'MCP_ADMISSION_RULE_ACTIONS',
    help: `per rule, what its violations become instead of its default or --validation-actions: rule=actions, "${RULE_ACTIONS_SEPARATOR}"-separated or repeated (${RULE_ACTIONS_EXAMPLE})`,
    kind: ruleActions,
    repeatable: { joinedWith: RULE_ACTIONS_SEPARATOR },
  },
  mutationMode: {
    flag: '--mutation-mode',
    placeholder: '<mode>',
    env: 'MCP_ADMISSION_MUTATION_MODE',
    default: 'apply',
    help: 'apply patches, or observe them (computed, counted, audited, not returned)',
    kind: oneOf(MUTATION_MODES),
  },
} as const satisfies Record<string, Setting<unknown>>

export type SettingKey = keyof typeof SERVE_SETTINGS

/** The settings that have a default, so always a value. */
export type DefaultedSetting = {
  [K in SettingKey]: (typeof SERVE_SETTINGS)[K] extends { default: SettingDefault } ? K : never
}[SettingKey]

/** What a setting's value becomes once read (a number for a port, a list for the actions). */
export type SettingValue<K extends SettingKey> =
  (typeof SERVE_SETTINGS)[K]['kind'] extends ValueKind<infer T> ? T : never

/** Option values as commander hands them over: text from a flag with a value, true from a switch. */
export type SettingOptions = {
  [K in SettingKey]?: (typeof SERVE_SETTINGS)[K] extends { placeholder: string } ? string : boolean
}

/** The setting behind each field of the server's config: start-up problems name what set it. */
export const SERVER_SETTING_OF = {
  host: 'host',
  port: 'port',
  probeHost: 'probeHost',
  probePort: 'probePort',
  certDir: 'certDir',
  certPollIntervalMs: 'certPollInterval',
  shutdownDelayMs: 'shutdownDelay',
  drainTimeoutMs: 'drainTimeout',
  keepAliveTimeoutMs: 'keepAliveTimeout',
  clientCaFile: 'clientCa',
} as const satisfies Record<keyof ServerConfig, SettingKey>

/** A setting's entry, seen through the fields every entry may have. */
export function settingOf(key: SettingKey): Setting<unknown> {
  return SERVE_SETTINGS[key]
}

/** `(default 9443)`, or `(default 5s; 0s with no cluster)`, for the help text. */
export function defaultHelp(key: SettingKey): string {
  const value = settingOf(key).default
  if (value === undefined) return ''
  if (typeof value === 'string') return ` (default ${value})`
  return ` (default ${value.cluster}; ${value.local} with no cluster)`
}

/**
 * A setting's line in `serve --help`: what it does, its bounds, its default and its variable
 * (with the words a switch's variable takes).
 */
export function settingHelp(key: SettingKey): string {
  const { help, kind, env, placeholder } = settingOf(key)
  const hint = kind.hint === undefined ? '' : `, ${kind.hint}`
  const envValues = placeholder === undefined ? '=true|false' : ''
  return `${help}${hint}${defaultHelp(key)} (env: ${env}${envValues})`
}

/** Said once under `serve --help`, rather than on every duration's line. */
export const DURATIONS_HELP = `\nDurations use Go syntax (500ms, 5s, 1m30s), at most ${LONGEST_TIMER} (2^31-1 ms, the longest a Node timer waits).\n`
