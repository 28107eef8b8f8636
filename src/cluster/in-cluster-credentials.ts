/**
 * A pod's service account as client-go's `rest.InClusterConfig` uses it, without
 * `@kubernetes/client-node`: the CA bundle is read once at start, the token again once it is a
 * minute old (client-go's cached token source) and at once after a 401, since the kubelet
 * rotates it in place (a `..data` symlink swap) and a revoked one must not linger for a minute.
 */

import type { OutgoingHttpHeaders } from 'node:http'
import type https from 'node:https'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { MiB, readBoundedFile } from '../files/bounded-read.ts'
import { fileErrorReason } from '../files/file-errors.ts'
import type { ClusterCredentials } from './cluster-credentials.ts'

/** client-go's period for re-reading the token file (transport/token_source.go). */
export const TOKEN_REREAD_MS = 60_000

/** A service account token (a JWT) or CA bundle is some KiB; this is far above that. */
const SERVICE_ACCOUNT_FILE_MAX_BYTES = MiB

export interface InClusterOptions {
  /** The API server's URL, from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT. */
  readonly server: string
  /** Where the kubelet mounts the service account (`token`, `ca.crt`). */
  readonly serviceAccountDir: string
  readonly logger: Pick<Logger, 'info' | 'warn'>
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
  const [token, ca] = [await readAccountFile(tokenFile), await readAccountFile(caFile)]
  const problems = [token, ca].flatMap((read) => ('problem' in read ? [read.problem] : []))
  if ('problem' in token || 'problem' in ca) return { problems }
  return { credentials: new InClusterCredentials(options, tokenFile, token.text, ca.text) }
}

export class InClusterCredentials implements ClusterCredentials {
  readonly server: string
  readonly #tokenFile: string
  readonly #ca: string
  readonly #logger: InClusterOptions['logger']
  readonly #now: () => number
  #token: string
  #readAt: number
  /** The read under way: requests that find the token stale, or get 401 together, share it. */
  #reading: Promise<void> | undefined
  /** Set while the token file cannot be read, so that is logged once, not on every request. */
  #unreadable = false

  constructor(options: InClusterOptions, tokenFile: string, token: string, ca: string) {
    this.server = options.server
    this.#tokenFile = tokenFile
    this.#ca = ca
    this.#logger = options.logger
    this.#now = options.now ?? (() => performance.now())
    this.#token = token
    this.#readAt = this.#now()
  }

  async applyTo(options: https.RequestOptions): Promise<void> {
    if (this.#now() - this.#readAt >= TOKEN_REREAD_MS) await this.#reread()
    // KubeApi sends headers as an object; the raw-pairs array form would need its own merge.
    const headers: unknown = options.headers ?? {}
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
      throw new TypeError('request headers must be an object')
    }
    options.ca = this.#ca
    options.headers = {
      ...(headers as OutgoingHttpHeaders),
      authorization: `Bearer ${this.#token}`,
    }
  }

  refresh(): Promise<void> {
    return this.#reread()
  }

  #reread(): Promise<void> {
    this.#reading ??= this.#readToken().finally(() => {
      this.#reading = undefined
    })
    return this.#reading
  }

  async #readToken(): Promise<void> {
    const read = await readAccountFile(this.#tokenFile)
    // Also after a failure: a vanished file is tried again on the same schedule, not per request.
    this.#readAt = this.#now()
    if ('problem' in read) {
      // The last token may still be valid for a while (a bound token lives an hour or more).
      if (!this.#unreadable) {
        this.#logger.warn(
          { problem: read.problem },
          'cannot read the service account token again: keeping the last one',
        )
      }
      this.#unreadable = true
      return
    }
    if (this.#unreadable) this.#logger.info({ file: this.#tokenFile }, 'token readable again')
    this.#unreadable = false
    this.#token = read.text
  }
}

/** A file's text without surrounding whitespace (as client-go trims the token), or why not. */
async function readAccountFile(
  file: string,
): Promise<{ readonly text: string } | { readonly problem: string }> {
  let text: string
  try {
    text = (await readBoundedFile(file, SERVICE_ACCOUNT_FILE_MAX_BYTES)).toString('utf8').trim()
  } catch (error) {
    return { problem: `${file}: ${fileErrorReason(error)}` }
  }
  return text === '' ? { problem: `${file}: empty` } : { text }
}
