/**
 * Kubeconfigs for tests: one cluster, one user, one context. A plain-http server (a fake API
 * server) gets `insecure-skip-tls-verify`, which client-node asks of one; an https one, the CA.
 */

export interface KubeconfigOptions {
  /** Set over the cluster's fields (`undefined` leaves one out of the JSON). */
  readonly cluster?: Readonly<Record<string, unknown>>
  /** The user's fields (default: a token). */
  readonly user?: Readonly<Record<string, unknown>>
  /** PEM of the CA an https server's certificate chains to. */
  readonly ca?: string
}

export function kubeconfigText(server: string, options: KubeconfigOptions = {}): string {
  const cluster: Record<string, unknown> = server.startsWith('http:')
    ? { server, 'insecure-skip-tls-verify': true }
    : { server }
  if (options.ca !== undefined)
    cluster['certificate-authority-data'] = Buffer.from(options.ca).toString('base64')
  Object.assign(cluster, options.cluster)
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user: options.user ?? { token: 'static-token' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  })
}
