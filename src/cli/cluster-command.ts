/**
 * What the commands that read a cluster (`audit`, `release-status`) share: the credentials, from
 * `--kubeconfig`, else KUBECONFIG, else a pod's in-cluster credentials; and the one-line error of
 * a request that failed (exit 2).
 */

import type { ClusterCredentials } from '../cluster/cluster-credentials.ts'
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
