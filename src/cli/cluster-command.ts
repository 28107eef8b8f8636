/**
 * What the commands that read a cluster (`audit`, `release-status`) share: the credentials, from
 * `--kubeconfig`, else KUBECONFIG, else a pod's in-cluster credentials; and the one-line error of
 * a request that failed (exit 2); and the pages of a list read under that rule.
 */

import type { ClusterCredentials } from '../cluster/cluster-credentials.ts'
import type { KubeApi } from '../cluster/kube-api.ts'
import { LIST_PAGE_SIZE, listPages } from '../cluster/list-pages.ts'
import type { ListPage } from '../cluster/list-pages.ts'
import { apiVersionOf, resourcePath } from '../cluster/resources.ts'
import type { ViewResource } from '../cluster/resources.ts'
import { errorMessage } from '../policy/messages/render.ts'
import { UsageError } from './io.ts'
import type { CliIo } from './io.ts'
import { loadClusterCredentials } from './kubeconfig.ts'
import { createLogger } from './logger.ts'
import { commandCredentials } from './serve-config.ts'
import { StartupError } from './startup-errors.ts'

/** The cluster `command` is to use; a one-line usage error when there is none. */
export async function clusterCredentials(
  command: string,
  kubeconfig: string | undefined,
  io: CliIo,
): Promise<ClusterCredentials> {
  const { credentials, errors } = commandCredentials(kubeconfig, io.env)
  if (errors.length > 0) throw new UsageError(errors.join('; '))
  if (!credentials)
    throw new UsageError(
      `${command} needs a cluster: --kubeconfig FILE, KUBECONFIG, or in-cluster credentials in a pod`,
    )
  try {
    return await loadClusterCredentials(credentials, {
      logger: createLogger('silent', io.stderr),
      serviceAccountDir: io.serviceAccountDir,
      env: io.env,
      execTimeoutMs: io.execTimeoutMs,
    })
  } catch (error) {
    if (error instanceof StartupError) throw new UsageError(error.message)
    throw error
  }
}

/** A request that failed: one line naming the server and what could not be done (exit 2). */
export function unreachable(
  credentials: ClusterCredentials,
  what: string,
  error: unknown,
): UsageError {
  const reason = errorMessage(error)
    .replace(/^GET [^:\s]*: /, '')
    .replace(/\s*\n\s*/g, ' ')
  return new UsageError(`cannot ${what} from ${credentials.server}: ${reason}`)
}

/**
 * Calls `onPage` with each page of `resource` in every namespace; a failed read, or a list that
 * does not end, is the one-line error of `unreachable` (exit 2). `signal` ends the list (a
 * deadline: the caller tells that error from the others by its signal).
 */
export async function eachPage(
  api: Pick<KubeApi, 'get'>,
  credentials: ClusterCredentials,
  resource: ViewResource,
  labelSelector: string | undefined,
  onPage: (page: ListPage) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const pages = listPages(api, collectionPath(credentials, resource), {
    apiVersion: apiVersionOf(resource),
    kind: resource.kind,
    namespaced: resource.namespaced,
    limit: LIST_PAGE_SIZE,
    ...(labelSelector === undefined ? {} : { labelSelector }),
    signal,
  })
  // Only a failed read is the cluster's fault; anything `onPage` throws is passed on as it is.
  for (;;) {
    let next: IteratorResult<ListPage>
    try {
      next = await pages.next()
    } catch (error) {
      throw unreachable(credentials, `list ${resource.plural}`, error)
    }
    if (next.done === true) return
    await onPage(next.value)
  }
}

/** The path of `resource`'s list; a name from discovery that cannot be in one is a failed read. */
function collectionPath(credentials: ClusterCredentials, resource: ViewResource): string {
  try {
    return resourcePath(resource)
  } catch (error) {
    throw unreachable(credentials, `list ${resource.plural}`, error)
  }
}
