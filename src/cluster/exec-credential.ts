/**
 * A kubeconfig user's `exec` credential plugin, as client-go's exec authenticator runs it
 * (client.authentication.k8s.io v1 and v1beta1): the config checked as client-go checks it, the
 * plugin given the process environment, the config's `env`, its `args` and KUBERNETES_EXEC_INFO
 * (never interactive: it gets no terminal), and its ExecCredential read back: a token, a client
 * certificate and key, or both, kept until its `expirationTimestamp` (or, without one, until the
 * API server answers 401). Runs are bounded and end at shutdown (exec-plugin.ts); requests that
 * need a credential together share one run.
 */

import { isAbsolute, join } from 'node:path'
import { isRecord } from '../policy/kube/object.ts'
import { jsonQuoted, printableLine } from '../policy/messages/render.ts'
import { PluginError, runPlugin } from './exec-plugin.ts'
import { redactCredentials } from './redact.ts'

export const EXEC_API_VERSIONS = [
  'client.authentication.k8s.io/v1',
  'client.authentication.k8s.io/v1beta1',
] as const
export type ExecApiVersion = (typeof EXEC_API_VERSIONS)[number]

/**
 * How long a run may take. Cloud plugins (aws eks get-token, gke-gcloud-auth-plugin, kubelogin)
 * answer in seconds, a cold one in some more; a minute is far above that, and still an answer
 * for a `check` in CI whose plugin hangs.
 */
export const EXEC_TIMEOUT_MS = 60_000

export interface ExecConfig {
  readonly apiVersion: ExecApiVersion
  /** Made absolute against the kubeconfig's directory when it is a relative path (has a `/`). */
  readonly command: string
  readonly args: readonly string[]
  readonly env: readonly { readonly name: string; readonly value: string }[]
  readonly interactiveMode: 'Never' | 'IfAvailable'
  readonly provideClusterInfo: boolean
  readonly installHint: string | undefined
}

/** A user's `exec` as its kubeconfig (in `dir`) gives it; an Error saying what is wrong. */
export function readExecConfig(raw: unknown, dir: string | undefined): ExecConfig {
  if (!isRecord(raw)) throw new Error('exec: not a mapping')
  const { apiVersion, command, args, env, interactiveMode } = raw
  if (typeof apiVersion !== 'string' || apiVersion === '')
    throw new Error('exec: apiVersion must be specified')
  if (!(EXEC_API_VERSIONS as readonly string[]).includes(apiVersion)) {
    throw new Error(
      `exec: apiVersion ${jsonQuoted(apiVersion)} is not supported: use ${EXEC_API_VERSIONS.join(' or ')}`,
    )
  }
  const version = apiVersion as ExecApiVersion
  if (typeof command !== 'string' || command === '')
    throw new Error('exec: command must be specified')
  if (args != null && !(Array.isArray(args) && args.every((arg) => typeof arg === 'string')))
    throw new Error('exec: args must be a list of strings')
  const pairs = env == null ? [] : env
  if (!Array.isArray(pairs) || !pairs.every(isEnvPair))
    throw new Error('exec: env must be a list of a name and a value each')
  const hint = raw['installHint']
  return {
    apiVersion: version,
    // client-go resolves a command with a path separator against the kubeconfig's directory;
    // a bare name is looked up on PATH.
    command: command.includes('/') && !isAbsolute(command) && dir ? join(dir, command) : command,
    args: args ?? [],
    env: pairs,
    interactiveMode: readInteractiveMode(interactiveMode, version),
    provideClusterInfo: raw['provideClusterInfo'] === true,
    installHint: typeof hint === 'string' && hint.trim() !== '' ? hint : undefined,
  }
}

function isEnvPair(pair: unknown): pair is { name: string; value: string } {
  return (
    isRecord(pair) &&
    typeof pair.name === 'string' &&
    pair.name !== '' &&
    typeof pair.value === 'string'
  )
}

function readInteractiveMode(
  mode: unknown,
  version: ExecApiVersion,
): ExecConfig['interactiveMode'] {
  if (mode === undefined || mode === null || mode === '') {
    // client-go's defaulting: v1beta1 kubeconfigs predate the field; v1 must say.
    if (version === 'client.authentication.k8s.io/v1beta1') return 'IfAvailable'
    throw new Error('exec: interactiveMode must be specified (Never or IfAvailable)')
  }
  if (mode === 'Never' || mode === 'IfAvailable') return mode
  if (mode === 'Always') {
    throw new Error(
      'exec: interactiveMode Always needs a terminal, which mcp-admission never gives a plugin: use Never or IfAvailable',
    )
  }
  throw new Error(
    `exec: interactiveMode ${jsonQuoted(JSON.stringify(mode))} is not one of Never, IfAvailable, Always`,
  )
}

/** The cluster as KUBERNETES_EXEC_INFO gives it to a plugin with `provideClusterInfo`. */
export interface ExecClusterInfo {
  readonly server: string
  readonly 'certificate-authority-data'?: string
  readonly 'tls-server-name'?: string
  readonly 'insecure-skip-tls-verify'?: boolean
  readonly 'proxy-url'?: string
}

export interface ExecCredential {
  readonly token?: string | undefined
  /** PEM, as the plugin returns them. */
  readonly cert?: string | undefined
  readonly key?: string | undefined
  /** Milliseconds since the epoch; absent: good until a 401. */
  readonly expiresAt?: number | undefined
}

export interface ExecSourceOptions {
  readonly config: ExecConfig
  /** The environment the plugin inherits (the process's). */
  readonly env: Readonly<Record<string, string | undefined>>
  readonly timeoutMs?: number | undefined
  /** Given to the plugin when its config asks for it. */
  readonly cluster: ExecClusterInfo
  /** Wall-clock milliseconds, to compare with `expirationTimestamp`; tests pass their own. */
  readonly now?: (() => number) | undefined
}

export class ExecCredentialSource {
  readonly #options: ExecSourceOptions
  readonly #now: () => number
  /** Aborted at shutdown: a run under way is ended, and none starts again. */
  readonly #stop = new AbortController()
  #cached: ExecCredential | undefined
  #running: Promise<ExecCredential> | undefined

  constructor(options: ExecSourceOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  /** The credential, from a run now if none is kept or it expired. `signal` ends the wait only. */
  credential(signal?: AbortSignal): Promise<ExecCredential> {
    const cached = this.#cached
    if (cached && (cached.expiresAt === undefined || this.#now() < cached.expiresAt))
      return Promise.resolve(cached)
    return waitFor(this.#run(), signal)
  }

  /**
   * The API server answered 401: run the plugin again now (client-go does). A failed run is not
   * thrown here: the next request runs it again, and fails with its reason.
   */
  async refresh(): Promise<void> {
    this.#cached = undefined
    await this.#run().catch(() => undefined)
  }

  close(): void {
    this.#stop.abort()
  }

  #run(): Promise<ExecCredential> {
    this.#running ??= this.#exec().finally(() => {
      this.#running = undefined
    })
    return this.#running
  }

  async #exec(): Promise<ExecCredential> {
    const { config } = this.#options
    const info = {
      apiVersion: config.apiVersion,
      kind: 'ExecCredential',
      spec: {
        interactive: false,
        ...(config.provideClusterInfo ? { cluster: this.#options.cluster } : {}),
      },
    }
    const env: Record<string, string> = {}
    for (const [name, value] of Object.entries(this.#options.env))
      if (value !== undefined) env[name] = value
    for (const { name, value } of config.env) env[name] = value
    env['KUBERNETES_EXEC_INFO'] = JSON.stringify(info)
    const named = `exec plugin ${printableLine(config.command)}`
    let stdout: string
    try {
      ;({ stdout } = await runPlugin({
        command: config.command,
        args: config.args,
        env,
        timeoutMs: this.#options.timeoutMs ?? EXEC_TIMEOUT_MS,
        signal: this.#stop.signal,
      }))
    } catch (error) {
      throw new Error(`${named}: ${this.#failure(error)}`, { cause: error })
    }
    let credential: ExecCredential
    try {
      credential = readExecCredential(stdout, config.apiVersion)
    } catch (error) {
      throw new Error(`${named}: ${(error as Error).message}`, { cause: error })
    }
    this.#cached = credential
    return credential
  }

  /** The run's failure, with the last line the plugin wrote on stderr and any install hint. */
  #failure(error: unknown): string {
    if (!(error instanceof PluginError)) return String(error)
    const lines = error.stderr.split('\n').filter((line) => line.trim() !== '')
    const last = lines.at(-1)
    let text = error.message
    if (last !== undefined) text += `: ${printableLine(redactCredentials(last.trim()), 200)}`
    const hint = this.#options.config.installHint
    if (error.message === 'no such file' && hint !== undefined)
      text += ` (${printableLine(hint.trim().split('\n')[0] ?? '', 200)})`
    return text
  }
}

/** The plugin's stdout as an ExecCredential of `apiVersion`, checked as client-go checks it. */
export function readExecCredential(stdout: string, apiVersion: ExecApiVersion): ExecCredential {
  let parsed: unknown
  try {
    parsed = JSON.parse(stdout)
  } catch {
    // Never quoted: it may hold the token.
    throw new Error('its output is not an ExecCredential (not JSON)')
  }
  if (!isRecord(parsed) || parsed.kind !== 'ExecCredential')
    throw new Error('its output is not an ExecCredential')
  if (parsed.apiVersion !== apiVersion) {
    throw new Error(
      `it answered with apiVersion ${jsonQuoted(String(parsed.apiVersion))}, but the kubeconfig says ${apiVersion}`,
    )
  }
  const status = parsed['status']
  if (!isRecord(status)) throw new Error('its ExecCredential has no status')
  const text = (field: string): string | undefined => {
    const value = status[field]
    if (value === undefined || value === null || value === '') return undefined
    if (typeof value !== 'string')
      throw new Error(`its ExecCredential's status.${field} is not a string`)
    return value
  }
  const [token, cert, key] = [text('token'), text('clientCertificateData'), text('clientKeyData')]
  if (token === undefined && cert === undefined && key === undefined)
    throw new Error('its ExecCredential has neither a token nor a client certificate and key')
  if ((cert === undefined) !== (key === undefined))
    throw new Error('its ExecCredential has only one of clientCertificateData and clientKeyData')
  const expiration = text('expirationTimestamp')
  const expiresAt = expiration === undefined ? undefined : Date.parse(expiration)
  if (expiresAt !== undefined && Number.isNaN(expiresAt))
    throw new Error("its ExecCredential's status.expirationTimestamp is not a time")
  return { token, cert, key, expiresAt }
}

/** `promise`, or a rejection once `signal` aborts (the work behind `promise` goes on). */
function waitFor<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise
  const aborted = Promise.withResolvers<never>()
  const onAbort = () => {
    aborted.reject(new Error('aborted while waiting for the exec plugin'))
  }
  if (signal.aborted) onAbort()
  else signal.addEventListener('abort', onAbort, { once: true })
  return Promise.race([promise, aborted.promise]).finally(() => {
    signal.removeEventListener('abort', onAbort)
  })
}
