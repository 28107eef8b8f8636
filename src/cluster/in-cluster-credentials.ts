/**
 * A pod's service account as client-go's `rest.InClusterConfig` uses it, without
 * `@kubernetes/client-node`: the CA bundle is read once at start, the token again once it is a
 * minute old (client-go's cached token source) and at once after a 401, since the kubelet
 * rotates it in place (a `..data` symlink swap) and a revoked one must not linger for a minute.
 */

import type https from 'node:https'
import { join } from 'node:path'
import { setBearerToken } from './cluster-credentials.ts'
import type { ClusterCredentials } from './cluster-credentials.ts'
import { CachedTokenFile, readTrimmedFile } from './token-file.ts'
import type { TokenLogger } from './token-file.ts'

export { TOKEN_REREAD_MS } from './token-file.ts'

export interface InClusterOptions {
  /** The API server's URL, from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT. */
  readonly server: string
  /** Where the kubelet mounts the service account (`token`, `ca.crt`). */
  readonly serviceAccountDir: string
  readonly logger: TokenLogger
  /** Milliseconds on some monotonic clock; tests pass their own. */
  readonly now?: () => number
}

/**
 * The credentials, or every problem with the two files (`<file>: no such file`, `<file>: empty`):
 * without either one every request fails, so the caller refuses to start.
 */
export async function loadInClusterCredentials(
  options: InClusterOptions,
): Promise<{ readonly credentials: InClusterCredentials } | { readonly problems: string[] }> {
  const tokenFile = join(options.serviceAccountDir, 'token')
  const caFile = join(options.serviceAccountDir, 'ca.crt')
  const [token, ca] = [await readTrimmedFile(tokenFile), await readTrimmedFile(caFile)]
  const problems = [token, ca].flatMap((read) => ('problem' in read ? [read.problem] : []))
  if ('problem' in token || 'problem' in ca) return { problems }
  return { credentials: new InClusterCredentials(options, tokenFile, token.text, ca.text) }
}

export class InClusterCredentials implements ClusterCredentials {
  readonly server: string
  readonly #ca: string
  readonly #token: CachedTokenFile

  constructor(options: InClusterOptions, tokenFile: string, token: string, ca: string) {
    this.server = options.server
    this.#ca = ca
    this.#token = new CachedTokenFile({
      file: tokenFile,
      token,
      what: 'the service account token',
      logger: options.logger,
      now: options.now,
    })
  }

  async applyTo(options: https.RequestOptions): Promise<void> {
    const token = await this.#token.token()
    options.ca = this.#ca
    setBearerToken(options, token)
  }

  refresh(): Promise<void> {
    return this.#token.refresh()
  }
}
