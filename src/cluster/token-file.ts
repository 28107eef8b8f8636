/**
 * A bearer token kept in a file that is rotated in place (a pod's service account token, a
 * kubeconfig's `tokenFile`), read as client-go's cached file token source reads it
 * (transport.NewCachedFileTokenSource): again once the last read is a minute old, and at once when
 * asked to (after a 401: a revoked token must not linger for a minute). A read that fails keeps
 * the last token, with one warning: a token lives an hour or more, and a half-written file is not
 * a token.
 */

import type { Logger } from 'pino'
import { MiB, readBoundedFile } from '../files/bounded-read.ts'
import { fileErrorReason } from '../files/file-errors.ts'

/** client-go's period for re-reading a token file (transport/token_source.go). */
export const TOKEN_REREAD_MS = 60_000

/** A token (a JWT) or a CA bundle is some KiB; this is far above that. */
const TOKEN_FILE_MAX_BYTES = MiB

export type TokenLogger = Pick<Logger, 'info' | 'warn'>

/** A file's text without surrounding whitespace (as client-go trims a token), or why not. */
export async function readTrimmedFile(
  file: string,
): Promise<{ readonly text: string } | { readonly problem: string }> {
  let text: string
  try {
    text = (await readBoundedFile(file, TOKEN_FILE_MAX_BYTES)).toString('utf8').trim()
  } catch (error) {
    return { problem: `${file}: ${fileErrorReason(error)}` }
  }
  return text === '' ? { problem: `${file}: empty` } : { text }
}

export interface TokenFileOptions {
  readonly file: string
  /** The token as read at start (the caller refuses to start without one). */
  readonly token: string
  /** What the token is, for the warning: `the service account token`. */
  readonly what: string
  readonly logger: TokenLogger
  /** Milliseconds on some monotonic clock; tests pass their own. */
  readonly now?: (() => number) | undefined
}

export class CachedTokenFile {
  readonly file: string
  readonly #what: string
  readonly #logger: TokenLogger
  readonly #now: () => number
  #token: string
  #readAt: number
  /** The read under way: requests that find the token stale, or get 401 together, share it. */
  #reading: Promise<void> | undefined
  /** Set while the file cannot be read, so that is logged once, not on every request. */
  #unreadable = false

  constructor(options: TokenFileOptions) {
    this.file = options.file
    this.#what = options.what
    this.#logger = options.logger
    this.#now = options.now ?? (() => performance.now())
    this.#token = options.token
    this.#readAt = this.#now()
  }

  /** The token, read again first when the last read is a minute old. */
  async token(): Promise<string> {
    if (this.#now() - this.#readAt >= TOKEN_REREAD_MS) await this.refresh()
    return this.#token
  }

  refresh(): Promise<void> {
    this.#reading ??= this.#read().finally(() => {
      this.#reading = undefined
    })
    return this.#reading
  }

  async #read(): Promise<void> {
    const read = await readTrimmedFile(this.file)
    // Also after a failure: a vanished file is tried again on the same schedule, not per request.
    this.#readAt = this.#now()
    if ('problem' in read) {
      if (!this.#unreadable) {
        this.#logger.warn(
          { problem: read.problem },
          `cannot read ${this.#what} again: keeping the last one`,
        )
      }
      this.#unreadable = true
      return
    }
    if (this.#unreadable) this.#logger.info({ file: this.file }, 'token readable again')
    this.#unreadable = false
    this.#token = read.text
  }
}
