/**
 * The serving certificate: loaded from `tls.crt`/`tls.key` in a directory and reloaded without a
 * restart when they change. cert-manager's Secret volumes swap a `..data` symlink atomically, so
 * the directory is watched (fast) and also polled (watch events can be missed). A new pair that
 * is unreadable, unparsable or mismatched is rejected and the current one keeps serving.
 */

import { createHash, X509Certificate } from 'node:crypto'
import { watch } from 'node:fs'
import type { FSWatcher } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createSecureContext } from 'node:tls'
import type { Logger } from 'pino'

export const CERT_FILE = 'tls.crt'
export const KEY_FILE = 'tls.key'

interface CertificatePair {
  readonly cert: Buffer
  readonly key: Buffer
  readonly notAfter: Date
  readonly subject: string
  /** Identifies the pair's bytes, to skip reloads of unchanged files. */
  readonly fingerprint: string
}

/** Reads and checks a pair; throws an Error whose message says what is wrong. */
async function readCertificatePair(dir: string): Promise<CertificatePair> {
  const [cert, key] = await Promise.all([
    readFile(join(dir, CERT_FILE)),
    readFile(join(dir, KEY_FILE)),
  ])
  let certificate: X509Certificate
  try {
    certificate = new X509Certificate(cert)
  } catch (error) {
    throw new Error(`${join(dir, CERT_FILE)} is not a PEM certificate: ${messageOf(error)}`, {
      cause: error,
    })
  }
  try {
    // Fails on an unparsable key and on a key that does not match the certificate.
    createSecureContext({ cert, key })
  } catch (error) {
    throw new Error(`${join(dir, KEY_FILE)} does not fit ${CERT_FILE}: ${messageOf(error)}`, {
      cause: error,
    })
  }
  const fingerprint = createHash('sha256').update(cert).update(key).digest('hex')
  return {
    cert,
    key,
    notAfter: new Date(certificate.validTo),
    subject: certificate.subject,
    fingerprint,
  }
}

interface CertificateWatcherOptions {
  readonly dir: string
  readonly pollIntervalMs: number
  readonly logger: Logger
  /** Called with each new valid pair (including the first). */
  readonly onPair: (pair: CertificatePair) => void
  /** Called when a reload finds an unusable pair (once per distinct failure). */
  readonly onRejected?: (error: Error) => void
}

/** Keeps the current pair in step with the files; `current` is undefined until one loads. */
export class CertificateWatcher {
  readonly #options: CertificateWatcherOptions
  #current: CertificatePair | undefined
  #watcher: FSWatcher | undefined
  #poll: NodeJS.Timeout | undefined
  #debounce: NodeJS.Timeout | undefined
  #reloading: Promise<void> = Promise.resolve()
  #lastFailure = ''

  constructor(options: CertificateWatcherOptions) {
    this.#options = options
  }

  get current(): CertificatePair | undefined {
    return this.#current
  }

  /** Loads the pair once (if possible) and starts watching and polling. */
  async start(): Promise<void> {
    await this.reload()
    this.#ensureWatch()
    this.#poll = setInterval(() => {
      this.#ensureWatch()
      void this.reload()
    }, this.#options.pollIntervalMs)
    this.#poll.unref()
  }

  stop(): void {
    clearInterval(this.#poll)
    clearTimeout(this.#debounce)
    this.#watcher?.close()
    this.#watcher = undefined
  }

  /** Re-reads the files; serialised so overlapping triggers cannot apply an older pair last. */
  reload(): Promise<void> {
    this.#reloading = this.#reloading.then(() => this.#reloadOnce())
    return this.#reloading
  }

  async #reloadOnce(): Promise<void> {
    const { dir, logger } = this.#options
    let pair: CertificatePair
    try {
      pair = await readCertificatePair(dir)
    } catch (error) {
      const message = messageOf(error)
      if (message !== this.#lastFailure) {
        // Logged once per distinct failure: a missing mount would otherwise log every poll.
        this.#lastFailure = message
        const keeping = this.#current ? 'keeping the current certificate' : 'not serving yet'
        logger.warn({ err: error, dir }, `serving certificate not loaded (${keeping})`)
        this.#options.onRejected?.(error instanceof Error ? error : new Error(message))
      }
      return
    }
    this.#lastFailure = ''
    if (pair.fingerprint === this.#current?.fingerprint) return
    this.#current = pair
    logger.info(
      { subject: pair.subject, notAfter: pair.notAfter.toISOString(), dir },
      'serving certificate loaded',
    )
    this.#options.onPair(pair)
  }

  #ensureWatch(): void {
    if (this.#watcher) return
    try {
      this.#watcher = watch(this.#options.dir, { persistent: false }, () => {
        clearTimeout(this.#debounce)
        // Secret volume updates arrive as a burst of events; read once they settle.
        this.#debounce = setTimeout(() => void this.reload(), 100)
      })
      this.#watcher.on('error', () => {
        this.#watcher?.close()
        this.#watcher = undefined // the poll re-establishes it
      })
    } catch {
      this.#watcher = undefined // directory absent for now; the poll keeps trying
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
