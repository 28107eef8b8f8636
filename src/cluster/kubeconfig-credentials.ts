/** A kubeconfig (already loaded by `@kubernetes/client-node`) as the credentials KubeApi takes. */

import type { KubeConfig } from '@kubernetes/client-node'
import type { ClusterCredentials } from './cluster-credentials.ts'

/**
 * The current context's cluster and user. No `refresh`: the client applies a user's token file,
 * exec plugin or OIDC provider per request already, with their own expiry.
 */
export function kubeConfigCredentials(config: KubeConfig): ClusterCredentials {
  const server = config.getCurrentCluster()?.server
  if (server === undefined) throw new Error('the kubeconfig has no current cluster')
  return { server, applyTo: (options) => config.applyToHTTPSOptions(options) }
}
