/**
 * How KubeApi reaches the API server and proves who it is, whoever supplies that: the pod's
 * service account (in-cluster-credentials.ts) or a kubeconfig (kubeconfig-credentials.ts). Only a
 * kubeconfig needs `@kubernetes/client-node` (exec plugins, OIDC, contexts), and importing it costs
 * some 40 MiB resident at ready, for its generated API models (121 -> 81 MiB in a pod, issue 27):
 * in a pod it is never loaded.
 */

import type { OutgoingHttpHeaders } from 'node:http'
import type https from 'node:https'

export interface ClusterCredentials {
  /** The API server's base URL, e.g. `https://10.0.0.1:443`. */
  readonly server: string
  /**
   * An HTTP or HTTPS proxy every connection to the server is tunnelled through (a kubeconfig's
   * `proxy-url`); absent: connect directly.
   */
  readonly proxy?: URL | undefined
  /**
   * Sets the CA to trust, any client certificate and the Authorization header on a request.
   * `signal` ends the wait for credentials still being obtained (an exec plugin's run), not the
   * run, which other requests may share.
   */
  applyTo(options: https.RequestOptions, signal?: AbortSignal): Promise<void>
  /**
   * The API server answered 401 to what `applyTo` set: read the credentials again now rather than
   * at their next scheduled read, so a rotated or revoked token is replaced at once. Absent where
   * there is nothing to read again.
   */
  refresh?(): Promise<void>
  /** Ends whatever obtains credentials (a running exec plugin) at shutdown; later requests fail. */
  close?(): void
}

/**
 * Sets `authorization: Bearer <token>` on a request, replacing any Authorization header already
 * there in either spelling (client-node capitalises it).
 */
export function setBearerToken(options: https.RequestOptions, token: string): void {
  // KubeApi sends headers as an object; the raw-pairs array form would need its own merge.
  const headers: unknown = options.headers ?? {}
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new TypeError('request headers must be an object')
  }
  const kept = Object.fromEntries(
    Object.entries(headers as OutgoingHttpHeaders).filter(
      ([name]) => name.toLowerCase() !== 'authorization',
    ),
  )
  options.headers = { ...kept, authorization: `Bearer ${token}` }
}
