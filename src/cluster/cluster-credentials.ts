/**
 * How KubeApi reaches the API server and proves who it is, whoever supplies that: the pod's
 * service account (in-cluster-credentials.ts) or a kubeconfig (kubeconfig-credentials.ts). Only a
 * kubeconfig needs `@kubernetes/client-node` (exec plugins, OIDC, contexts), and importing it costs
 * some 40 MiB resident at ready, for its generated API models (121 -> 81 MiB in a pod, issue 27):
 * in a pod it is never loaded.
 */

import type https from 'node:https'

export interface ClusterCredentials {
  /** The API server's base URL, e.g. `https://10.0.0.1:443`. */
  readonly server: string
  /** Sets the CA to trust, any client certificate and the Authorization header on a request. */
  applyTo(options: https.RequestOptions): Promise<void>
  /**
   * The API server answered 401 to what `applyTo` set: read the credentials again now rather than
   * at their next scheduled read, so a rotated or revoked token is replaced at once. Absent where
   * there is nothing to read again.
   */
  refresh?(): Promise<void>
}
