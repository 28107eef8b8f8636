/**
 * The cluster's credentials, read and checked before anything listens: a kubeconfig (one file
 * from `--kubeconfig`, or KUBECONFIG's path list merged as kubectl merges it), or the pod's
 * service account. What cannot work is a StartupError naming the flag, variable or file, never a
 * client that retries for ever: a kubeconfig's token file is read and its exec plugin run once
 * here (kubeconfig-credentials.ts says what is read as kubectl reads it).
 */

import { dirname, isAbsolute, join } from 'node:path'
import type { KubeConfig } from '@kubernetes/client-node'
import type { TokenLogger } from '../cluster/token-file.ts'
import { parseDocument } from 'yaml'
import type { ClusterCredentials } from '../cluster/cluster-credentials.ts'
import { loadInClusterCredentials } from '../cluster/in-cluster-credentials.ts'
import { readExecConfig } from '../cluster/exec-credential.ts'
import type { ExecConfig } from '../cluster/exec-credential.ts'
import { kubeConfigCredentials } from '../cluster/kubeconfig-credentials.ts'
import { KubeconfigFileError } from '../cluster/kubeconfig-files.ts'
import { isRecord } from '../policy/kube/object.ts'
import { printableLine } from '../policy/messages/render.ts'
import type { Cluster, Context, User } from '@kubernetes/client-node'
import { FileReadError, MiB, readBoundedFile } from '../files/bounded-read.ts'
import { fileErrorReason } from '../files/file-errors.ts'
import { errorMessage } from '../policy/messages/render.ts'
import type { Credentials } from './serve-config.ts'
import { StartupError } from './startup-errors.ts'

/** Where the kubelet mounts a pod's service account (client-go's and client-node's path). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'

/** A kubeconfig with a few clusters' certificates inline is some KiB; this is far above that. */
export const KUBECONFIG_MAX_BYTES = 4 * MiB

/** What reading a cluster's credentials takes besides the setting itself. */
export interface CredentialsContext {
  readonly logger?: TokenLogger | undefined
  /** The pod's service account mount; SERVICE_ACCOUNT_DIR unless a test says otherwise. */
  readonly serviceAccountDir?: string | undefined
  /** The environment a kubeconfig's exec plugin inherits (the process's). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** How long an exec plugin may run; EXEC_TIMEOUT_MS unless a test says otherwise. */
  readonly execTimeoutMs?: number | undefined
}

/** The credentials with a server to reach; a StartupError when they cannot work. */
export async function loadClusterCredentials(
  credentials: Credentials,
  context: CredentialsContext = {},
): Promise<ClusterCredentials> {
  if (credentials.kind === 'in-cluster') {
    return inCluster(
      credentials,
      context.serviceAccountDir ?? SERVICE_ACCOUNT_DIR,
      context.logger ?? silent,
    )
  }
  return loadKubeconfigCredentials(credentials, context)
}

export type KubeconfigCredentials = Extract<Credentials, { kind: 'kubeconfig' }>

/** A kubeconfig's current cluster and user (`serve`, and `check --kubeconfig`); a StartupError when they cannot work. */
export async function loadKubeconfigCredentials(
  credentials: KubeconfigCredentials,
  context: CredentialsContext = {},
): Promise<ClusterCredentials> {
  // Loaded only for a kubeconfig (exec plugins, OIDC, contexts): importing the client costs some
  // 40 MiB resident, for its generated API models, that a pod's own credentials do not need.
  const { KubeConfig } = await import('@kubernetes/client-node')
  const { config, user } = await fromFiles(() => new KubeConfig(), credentials)
  const named = settingNamed(credentials.setting, credentials.value, credentials.files)
  const userName = `user ${JSON.stringify(user?.name ?? '')}`
  let exec: ExecConfig | undefined
  try {
    exec = user?.exec === undefined ? undefined : readExecConfig(user.exec, user.dir)
  } catch (error) {
    throw new StartupError(`${named}: ${userName}: ${errorMessage(error)}`, { cause: error })
  }
  let loaded
  try {
    loaded = kubeConfigCredentials(config, {
      tokenFile: user?.tokenFile,
      exec,
      env: context.env,
      execTimeoutMs: context.execTimeoutMs,
      logger: context.logger,
    })
  } catch (error) {
    throw new StartupError(`${named}: ${errorMessage(error)}`, { cause: error })
  }
  try {
    await loaded.start()
  } catch (error) {
    // A TLS file names its cluster (certificate-authority) or user; the rest is the user's.
    const owner = error instanceof KubeconfigFileError ? error.owner : userName
    throw new StartupError(`${named}: ${owner}: ${errorMessage(error)}`, { cause: error })
  }
  return loaded
}

const silent: TokenLogger = { info: () => undefined, warn: () => undefined }

/**
 * The current user's fields client-node does not read as kubectl does, with the directory of the
 * file that defined the user (client-go resolves relative paths against it): `tokenFile`, which
 * the client does not know, and `exec`, which is run by our own code.
 */
interface UserFields {
  readonly name: string
  readonly dir: string
  readonly tokenFile?: string | undefined
  readonly exec?: unknown
}

/**
 * kubectl's rules (client-go's ClientConfigLoadingRules): `--kubeconfig` names one file, which
 * must exist. KUBECONFIG's files are merged in order, the first to set a cluster, user or context
 * name (or the current context) winning; a listed file that does not exist is skipped, one that
 * exists but cannot be read or parsed is an error, and a list in which no file exists is one too.
 */
async function fromFiles(
  create: () => KubeConfig,
  credentials: KubeconfigCredentials,
): Promise<{ readonly config: KubeConfig; readonly user: UserFields | undefined }> {
  const { setting, files } = credentials
  const skipMissing = setting === 'KUBECONFIG'
  const loaded: KubeConfig[] = []
  // Each user's own fields, from the first file to define the user (as the merge below keeps it).
  const users = new Map<string, UserFields>()
  let found = false
  for (const file of files) {
    let text: string
    try {
      text = (await readBoundedFile(file, KUBECONFIG_MAX_BYTES)).toString('utf8')
    } catch (error) {
      if (skipMissing && error instanceof FileReadError && error.code === 'ENOENT') continue
      throw new StartupError(`${setting} ${file}: ${fileErrorReason(error)}`, { cause: error })
    }
    found = true
    const config = create()
    const parsed = parseKubeconfig(text)
    if (parsed === 'empty') continue // as client-go reads it: a file that sets nothing
    try {
      if ('reason' in parsed) throw new Error(parsed.reason)
      config.loadFromString(text)
      config.makePathsAbsolute(dirname(file))
    } catch (error) {
      // The first line only: the parser's next lines quote the file, which may hold a token.
      const reason = printableLine(errorMessage(error).split('\n')[0] ?? '')
      throw new StartupError(`${setting} ${file}: not a valid kubeconfig: ${reason}`, {
        cause: error,
      })
    }
    loaded.push(config)
    for (const user of config.users) {
      if (users.has(user.name)) continue
      const tokenFile = tokenFileOf(parsed.value, user.name)
      const dir = dirname(file)
      users.set(user.name, {
        name: user.name,
        dir,
        tokenFile: tokenFile && (isAbsolute(tokenFile) ? tokenFile : join(dir, tokenFile)),
        exec: user.exec ?? undefined,
      })
    }
  }
  const named = settingNamed(setting, credentials.value, files)
  if (loaded.length === 0 && !found) {
    const reason = files.length === 1 ? 'no such file' : `none of its ${files.length} files exists`
    throw new StartupError(`${named}: ${reason}`)
  }
  const options = mergeFirstWins(loaded)
  const merged = create()
  merged.loadFromOptions(options)
  if (merged.getCurrentCluster()?.server === undefined) {
    // Every watch would fail and retry for ever, never ready: say so now instead.
    throw new StartupError(`${named}: not a valid kubeconfig: no current cluster`)
  }
  const current = merged.getCurrentUser()
  if (current?.exec) {
    // Our runner runs the plugin (exec-credential.ts); the client must not run it as well.
    options.users = options.users.map((user) =>
      user === current ? { ...user, exec: undefined } : user,
    )
    merged.loadFromOptions(options)
  }
  return { config: merged, user: current ? users.get(current.name) : undefined }
}

/** A KUBECONFIG list longer than this is named by its ends, so the reason after it stays in sight. */
const FILES_NAMED_WHOLE = 3

/**
 * The setting as an error names it: whole for a few files, else by how many files it lists and
 * the first and last of them (a list of dozens of paths pushed the reason past any terminal's edge).
 */
function settingNamed(setting: string, value: string, files: readonly string[]): string {
  if (files.length <= FILES_NAMED_WHOLE) return `${setting} ${value}`
  return `${setting} (${files.length} files, ${files[0] ?? ''} … ${files.at(-1) ?? ''})`
}

/** A user's `tokenFile` as the file gives it (client-node reads only its own `token-file`). */
function tokenFileOf(value: Record<string, unknown>, name: string): string | undefined {
  const users = Array.isArray(value['users']) ? (value['users'] as unknown[]) : []
  const entry = users.find((candidate) => isRecord(candidate) && candidate['name'] === name)
  const user = isRecord(entry) ? entry['user'] : undefined
  const tokenFile = isRecord(user) ? user['tokenFile'] : undefined
  return typeof tokenFile === 'string' && tokenFile !== '' ? tokenFile : undefined
}

/**
 * `empty` for a file with no document (or only comments), a reason when its YAML is no mapping,
 * else the mapping, which the client's own loader may read too. The `yaml` parser's first error
 * is used for the reason: it names a position, never the text.
 */
function parseKubeconfig(
  text: string,
): { readonly reason: string } | { readonly value: Record<string, unknown> } | 'empty' {
  const document = parseDocument(text, { uniqueKeys: false })
  const error = document.errors[0]
  if (error !== undefined) {
    const { line, col } = error.linePos?.[0] ?? { line: 0, col: 0 }
    return { reason: `${error.code} at line ${line}, column ${col}` }
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 })
  if (value === null || value === undefined) return 'empty'
  if (!isRecord(value)) return { reason: 'not a YAML mapping' }
  return { value }
}

interface KubeConfigOptions {
  clusters: Cluster[]
  users: User[]
  contexts: Context[]
  currentContext: string | undefined
}

/** client-go's merge: the first file to define a name (or the current context) wins. */
function mergeFirstWins(configs: readonly KubeConfig[]): KubeConfigOptions {
  const merged: KubeConfigOptions = {
    clusters: [],
    users: [],
    contexts: [],
    currentContext: undefined,
  }
  const add = <T extends { readonly name: string }>(into: T[], from: readonly T[]): void => {
    for (const entry of from) {
      if (!into.some((existing) => existing.name === entry.name)) into.push(entry)
    }
  }
  for (const config of configs) {
    add(merged.clusters, config.clusters)
    add(merged.users, config.users)
    add(merged.contexts, config.contexts)
    const current = config.getCurrentContext() as string | undefined
    if (merged.currentContext === undefined && current !== undefined && current !== '') {
      merged.currentContext = current
    }
  }
  return merged
}

/**
 * In a pod: the API server from KUBERNETES_SERVICE_HOST/PORT, the service account's token and CA
 * from their mount. Both files must be there now; without them every request would fail and the
 * view retry for ever, listening on every interface, never ready.
 */
async function inCluster(
  credentials: Extract<Credentials, { kind: 'in-cluster' }>,
  serviceAccountDir: string,
  logger: TokenLogger,
): Promise<ClusterCredentials> {
  const host = credentials.host.includes(':') ? `[${credentials.host}]` : credentials.host
  const loaded = await loadInClusterCredentials({
    server: `https://${host}:${credentials.port}`,
    serviceAccountDir,
    logger,
  })
  if ('problems' in loaded) {
    throw new StartupError(
      `in-cluster credentials (KUBERNETES_SERVICE_HOST is set): ${loaded.problems.join('; ')}`,
    )
  }
  return loaded.credentials
}
