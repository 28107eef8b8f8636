/**
 * The cluster's credentials, read and checked before anything listens: a kubeconfig (one file
 * from `--kubeconfig`, or KUBECONFIG's path list merged as kubectl merges it), or the pod's
 * service account. What cannot work is a StartupError naming the flag, variable or file, never a
 * client that retries for ever.
 */

import { dirname } from 'node:path'
import type { KubeConfig } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import { parseDocument } from 'yaml'
import type { ClusterCredentials } from '../cluster/cluster-credentials.ts'
import { loadInClusterCredentials } from '../cluster/in-cluster-credentials.ts'
import { kubeConfigCredentials } from '../cluster/kubeconfig-credentials.ts'
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
/** The credentials with a server to reach; a StartupError when they cannot work. */
export async function loadClusterCredentials(
  credentials: Credentials,
  logger: Logger,
  serviceAccountDir: string = SERVICE_ACCOUNT_DIR,
): Promise<ClusterCredentials> {
  if (credentials.kind === 'in-cluster') return inCluster(credentials, serviceAccountDir, logger)
  return loadKubeconfigCredentials(credentials)
}

export type KubeconfigCredentials = Extract<Credentials, { kind: 'kubeconfig' }>

/** A kubeconfig's current cluster and user (`serve`, and `check --kubeconfig`); a StartupError when they cannot work. */
export async function loadKubeconfigCredentials(
  credentials: KubeconfigCredentials,
): Promise<ClusterCredentials> {
  // Loaded only for a kubeconfig (exec plugins, OIDC, contexts): importing the client costs some
  // 40 MiB resident, for its generated API models, that a pod's own credentials do not need.
  const { KubeConfig } = await import('@kubernetes/client-node')
  return kubeConfigCredentials(await fromFiles(() => new KubeConfig(), credentials))
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
): Promise<KubeConfig> {
  const { setting, files } = credentials
  const skipMissing = setting === 'KUBECONFIG'
  const loaded: KubeConfig[] = []
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
    const problem = kubeconfigProblem(text)
    if (problem === 'empty') continue // as client-go reads it: a file that sets nothing
    try {
      if (problem !== undefined) throw new Error(problem.reason)
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
  }
  const named = `${setting} ${credentials.value}`
  if (loaded.length === 0 && !found) {
    const reason = files.length === 1 ? 'no such file' : `none of its ${files.length} files exists`
    throw new StartupError(`${named}: ${reason}`)
  }
  const merged = create()
  merged.loadFromOptions(mergeFirstWins(loaded))
  if (merged.getCurrentCluster()?.server === undefined) {
    // Every watch would fail and retry for ever, never ready: say so now instead.
    throw new StartupError(`${named}: not a valid kubeconfig: no current cluster`)
  }
  return merged
}

/**
 * `empty` for a file with no document (or only comments), a reason when its YAML is no mapping,
 * undefined when the client's own loader may read it. The `yaml` parser's first error is used for
 * the reason: it names a position, never the text.
 */
function kubeconfigProblem(text: string): { readonly reason: string } | 'empty' | undefined {
  const document = parseDocument(text, { uniqueKeys: false })
  const error = document.errors[0]
  if (error !== undefined) {
    const { line, col } = error.linePos?.[0] ?? { line: 0, col: 0 }
    return { reason: `${error.code} at line ${line}, column ${col}` }
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 })
  if (value === null || value === undefined) return 'empty'
  if (typeof value !== 'object' || Array.isArray(value)) return { reason: 'not a YAML mapping' }
  return undefined
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
  logger: Logger,
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
