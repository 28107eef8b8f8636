/**
 * The serving certificate: loaded from `tls.crt`/`tls.key` in a directory and reloaded without a
 * restart when they change. cert-manager's Secret volumes swap a `..data` symlink atomically, so
 * the directory is watched (fast) and also polled (watch events can be missed). A new pair that
 * is unreadable, unparsable or mismatched is rejected and the current one keeps serving.
 */

import { createHash, createPrivateKey, X509Certificate } from 'node:crypto'
import type { KeyObject } from 'node:crypto'
import { watch } from 'node:fs'
import type { FSWatcher } from 'node:fs'
import { join } from 'node:path'
import { createSecureContext } from 'node:tls'
import type { Logger } from 'pino'
import { MiB, readBoundedFile } from '../files/bounded-read.ts'
import { errorCode, fileErrorReason } from '../files/file-errors.ts'
import { errorMessage } from '../policy/messages/render.ts'

export const CERT_FILE = 'tls.crt'
export const KEY_FILE = 'tls.key'

/** A certificate chain or a key is a few KiB; a file far larger is not one. */
export const CERTIFICATE_FILE_MAX_BYTES = MiB

export interface CertificatePair {
  readonly cert: Buffer
  readonly key: Buffer
  readonly notBefore: Date
  readonly notAfter: Date
  readonly subject: string
  /** Identifies the pair's bytes, to skip reloads of unchanged files. */
  readonly fingerprint: string
}

/**
 * The one check of a certificate's time: undefined when it is valid at `now`, else what is wrong
 * (`expired at 2026-01-01T00:00:00.000Z`, `not valid until …`). Clients refuse a certificate
 * outside its validity, so such a pair is not one to be ready with.
 */
export function validityProblem(
  pair: Pick<CertificatePair, 'notBefore' | 'notAfter'>,
  now: Date,
): string | undefined {
  if (now.getTime() < pair.notBefore.getTime()) {
    return `not valid until ${pair.notBefore.toISOString()}`
  }
  if (now.getTime() > pair.notAfter.getTime()) return `expired at ${pair.notAfter.toISOString()}`
  return undefined
}

/** A pair that cannot be used; the message is one readable line naming the file. */
class CertificateFileError extends Error {
  override name = 'CertificateFileError'
}

/** Reads and checks a pair; throws a CertificateFileError whose message says what is wrong. */
async function readCertificatePair(dir: string, signal?: AbortSignal): Promise<CertificatePair> {
  const certPath = join(dir, CERT_FILE)
  const keyPath = join(dir, KEY_FILE)
  const [cert, key] = await Promise.all([
    readPairFile(certPath, signal),
    readPairFile(keyPath, signal),
  ])
  let certificate: X509Certificate
  try {
    certificate = new X509Certificate(cert)
  } catch (error) {
    throw new CertificateFileError(`${certPath}: not a PEM certificate (${opensslReason(error)})`, {
      cause: error,
    })
  }
  const privateKey = readPrivateKey(keyPath, key)
  // createSecureContext alone accepts a key of another type than the certificate's (an RSA key
  // beside an EC certificate): OpenSSL files it in a slot of its own, and every handshake then
  // fails while the service says it is ready. Comparing the public keys proves the pair for any
  // type.
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new CertificateFileError(
      `${keyPath}: does not match ${CERT_FILE}${typesThatDiffer(privateKey, certificate.publicKey)}`,
    )
  }
  try {
    // The key matches the leaf, so what can still fail is the certificate file as TLS reads it:
    // PEM only (X509Certificate also takes DER), and the whole chain (a garbled intermediate).
    createSecureContext({ cert, key })
  } catch (error) {
    throw new CertificateFileError(
      `${certPath}: not a usable PEM certificate chain (${opensslReason(error)})`,
      { cause: error },
    )
  }
  const fingerprint = createHash('sha256').update(cert).update(key).digest('hex')
  return {
    cert,
    key,
    notBefore: certificate.validFromDate,
    notAfter: certificate.validToDate,
    subject: certificate.subject,
    fingerprint,
  }
}

/**
 * What is wrong with the pair in `dir` when both files are there and can never serve (unreadable,
 * unparsable, a key that is not the certificate's); undefined when it is usable or a file is not
 * there yet (cert-manager writes them later). For start-up: a service that listens with a pair it
 * can never serve would hold no replica ready, and stall a rollout without a word on why; refused,
 * it exits with one line, and the replicas of the previous rollout keep answering.
 */
export async function presentPairProblem(dir: string): Promise<string | undefined> {
  try {
    await readCertificatePair(dir)
    return undefined
  } catch (error) {
    if (error instanceof CertificateFileError && errorCode(error.cause) === 'ENOENT')
      return undefined
    return errorMessage(error)
  }
}

/**
 * A regular file of at most 1 MiB, read within the reader's deadline: a FIFO or device swapped in,
 * or a mount that stopped answering, cannot block the reload.
 */
async function readPairFile(path: string, signal: AbortSignal | undefined): Promise<Buffer> {
  try {
    return await readBoundedFile(path, CERTIFICATE_FILE_MAX_BYTES, { signal })
  } catch (error) {
    throw new CertificateFileError(`${path}: ${fileErrorReason(error)}`, { cause: error })
  }
}

/** OpenSSL's reason alone (`no start line`), not its `error:0480006C:PEM routines::` prefix. */
function opensslReason(error: unknown): string {
  const { reason } = error as { reason?: unknown }
  return typeof reason === 'string' && reason !== '' ? reason : errorMessage(error)
}

/** The private key in `key`; a CertificateFileError when there is none Node can use. */
function readPrivateKey(keyPath: string, key: Buffer): KeyObject {
  try {
    return createPrivateKey(key)
  } catch (error) {
    // OpenSSL's reason for an encrypted key is the passphrase prompt being cancelled.
    const reason =
      errorCode(error) === 'ERR_OSSL_CRYPTO_INTERRUPTED_OR_CANCELLED'
        ? 'encrypted: an unencrypted key is needed'
        : opensslReason(error)
    throw new CertificateFileError(`${keyPath}: not a usable private key (${reason})`, {
      cause: error,
    })
  }
}

/**
 * ` (an RSA key beside an EC P-256 certificate)` when the key's type is not the certificate's
 * (the likeliest mistake, and one an operator sees at once), else nothing.
 */
function typesThatDiffer(privateKey: KeyObject, certificateKey: KeyObject): string {
  const [keyType, certificateType] = [keyTypeName(privateKey), keyTypeName(certificateKey)]
  if (keyType === certificateType) return ''
  return ` (${withArticle(keyType)} key beside ${withArticle(certificateType)} certificate)`
}

/** The NIST names of the curves cert-manager and most CAs use; others keep OpenSSL's name. */
const CURVE_NAMES: Readonly<Record<string, string>> = {
  prime256v1: 'P-256',
  secp384r1: 'P-384',
  secp521r1: 'P-521',
}

/** `RSA`, `RSA-PSS`, `EC P-384`, `Ed25519`: the key's type as certificates name it. */
function keyTypeName(key: KeyObject): string {
  const type = (key.asymmetricKeyType ?? 'unknown').toUpperCase().replace(/^ED/, 'Ed')
  const curve = key.asymmetricKeyDetails?.namedCurve
  return curve === undefined ? type : `${type} ${CURVE_NAMES[curve] ?? curve}`
}

/** `an RSA`, `a DSA`: the article as the letters are spoken. */
function withArticle(name: string): string {
  return `${/^[AEFHILMNORSX]/i.test(name) ? 'an' : 'a'} ${name}`
}

interface CertificateWatcherOptions {
  readonly dir: string
  readonly pollIntervalMs: number
  readonly logger: Logger
  /** Called with each pair that is to be served (including the first). */
  readonly onPair: (pair: CertificatePair) => void
  /** Called when a reload finds an unusable pair, or one kept out (once per distinct failure). */
  readonly onRejected?: (error: Error) => void
  /** The time now (tests move it). */
  readonly now?: () => Date
}

/** The longest delay a Node timer holds; a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * Keeps the served pair in step with the files; `current` is undefined until one loads. A pair
 * that is outside its validity (expired, or not yet valid) is served only while no valid one is:
 * it replaces an expired pair, never a valid one, and the service is not ready with it.
 */
export class CertificateWatcher {
  readonly #options: CertificateWatcherOptions
  readonly #now: () => Date
  #current: CertificatePair | undefined
  #watcher: FSWatcher | undefined
  #poll: NodeJS.Timeout | undefined
  #debounce: NodeJS.Timeout | undefined
  /** Fires at the served pair's next validity boundary (`#armBoundary`). */
  #boundary: NodeJS.Timeout | undefined
  #reloading: Promise<void> = Promise.resolve()
  /** Aborted by stop: a reload still reading ends then, without a word (shutdown is no failure). */
  readonly #stopping = new AbortController()
  #lastFailure = ''
  /** The served pair's validity problem last warned about, so each is logged once. */
  #lastValidityWarning: string | undefined

  constructor(options: CertificateWatcherOptions) {
    this.#options = options
    this.#now = options.now ?? (() => new Date())
  }

  get current(): CertificatePair | undefined {
    return this.#current
  }

  /** Undefined when a pair valid now is served, else what is wrong (read at each readiness check). */
  currentProblem(): string | undefined {
    if (this.#current === undefined) return 'none loaded'
    return validityProblem(this.#current, this.#now())
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
    this.#stopping.abort()
    clearInterval(this.#poll)
    clearTimeout(this.#debounce)
    clearTimeout(this.#boundary)
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
    const now = this.#now()
    const stopping = this.#stopping.signal
    if (stopping.aborted) return
    let pair: CertificatePair
    try {
      pair = await readCertificatePair(dir, stopping)
    } catch (error) {
      if (!this.#stopping.signal.aborted) this.#reject(error, now)
      return
    }
    if (pair.fingerprint === this.#current?.fingerprint) {
      this.#lastFailure = ''
      this.#warnIfServedInvalid(now) // a certificate that expired while served
      return
    }
    const problem = validityProblem(pair, now)
    if (problem !== undefined && this.#current && !validityProblem(this.#current, now)) {
      // Keep serving the valid pair; the files are read again at the next poll (a pair that is
      // not valid yet is taken once it is).
      this.#reject(new CertificateFileError(`${join(dir, CERT_FILE)}: ${problem}`), now)
      return
    }
    this.#lastFailure = ''
    this.#current = pair
    this.#lastValidityWarning = undefined
    const fields = {
      subject: pair.subject,
      notBefore: pair.notBefore.toISOString(),
      notAfter: pair.notAfter.toISOString(),
      dir,
    }
    if (problem === undefined) logger.info(fields, 'serving certificate loaded')
    this.#warnIfServedInvalid(now)
    this.#armBoundary()
    this.#options.onPair(pair)
  }

  /**
   * Wakes at the moment the served pair becomes valid or expires, so the warning is logged then
   * and not at the next poll, which may be minutes away (readiness asks the time itself anyway).
   * A boundary beyond what a Node timer holds (2^31−1 ms, some 24 days) is approached in steps.
   */
  #armBoundary(): void {
    clearTimeout(this.#boundary)
    const current = this.#current
    if (current === undefined) return
    const now = this.#now().getTime()
    // Expired means strictly after notAfter (validityProblem): the first such millisecond.
    const next = [current.notBefore.getTime(), current.notAfter.getTime() + 1].find((t) => t > now)
    if (next === undefined) return
    this.#boundary = setTimeout(
      () => {
        if (this.#current !== current) return // a newer pair armed its own
        this.#warnIfServedInvalid(this.#now())
        this.#armBoundary()
      },
      Math.min(next - now, MAX_TIMER_MS),
    )
    this.#boundary.unref()
  }

  /** One readable warning per distinct failure (a missing mount would otherwise log every poll). */
  #reject(error: unknown, now: Date): void {
    const { dir, logger } = this.#options
    const reason = errorMessage(error)
    if (reason === this.#lastFailure) return
    this.#lastFailure = reason
    const current = this.#current
    const keeping =
      current === undefined
        ? 'not serving yet'
        : validityProblem(current, now) === undefined
          ? `keeping the current certificate, valid until ${current.notAfter.toISOString()}`
          : 'keeping the current certificate'
    logger.warn({ dir, reason }, `serving certificate not loaded (${keeping}): ${reason}`)
    // The error object, with its stack and OpenSSL's fields, is for debugging only.
    logger.debug({ err: error, dir }, 'serving certificate not loaded')
    this.#options.onRejected?.(error instanceof Error ? error : new Error(reason))
  }

  #warnIfServedInvalid(now: Date): void {
    const current = this.#current
    if (current === undefined) return
    const problem = validityProblem(current, now)
    if (problem === undefined || problem === this.#lastValidityWarning) return
    this.#lastValidityWarning = problem
    this.#options.logger.warn(
      {
        subject: current.subject,
        notBefore: current.notBefore.toISOString(),
        notAfter: current.notAfter.toISOString(),
        dir: this.#options.dir,
      },
      `serving certificate ${problem}: not ready until a currently valid certificate is loaded`,
    )
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
