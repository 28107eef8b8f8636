/**
 * The directory of development certificates (`certs/` for `npm start`): filled when it has no
 * serving pair, so that deleting any of the files and starting again works, and never by
 * overwriting a file that is not a throwaway of this program's own (certs/README.md says what
 * happens in each case).
 *
 * - A complete pair (`tls.crt`, `tls.key`) is used as it is, whatever else is there.
 * - Otherwise a new serving pair is written, signed by `ca.crt` when its key `ca.key` is there
 *   (PKCS #8 ECDSA P-256, as this program generates them), else by a new CA that replaces
 *   `ca.crt`. The key of a generated CA is never written, so a development CA found without
 *   `ca.key` can sign nothing more, and a serving certificate found without its `tls.key` can
 *   serve nothing: those are replaced, recognised by the subject of the development CA.
 * - A file this cannot use nor safely replace (a lone `tls.key`, someone else's certificate, a CA
 *   key that does not fit) is a StartupProblem naming the exact file to remove. No reason quotes a
 *   file's content: a key never reaches a log.
 */

import { webcrypto } from 'node:crypto'
import { lstat, mkdir, readdir, readlink, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
// @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { CERTIFICATE_FILE_MAX_BYTES, CERT_FILE, KEY_FILE } from './certificates.ts'
import { CA_FILE, DEV_CA_SUBJECT, createDevCertificates } from './dev-certs.ts'
import type { DevCa } from './dev-certs.ts'
import { readBoundedFile } from '../files/bounded-read.ts'
import { errorCode, fileErrorReason } from '../files/file-errors.ts'
import { StartupProblem } from './startup-problem.ts'

/** The key of `ca.crt`, read (never written) to sign new serving pairs under a kept CA. */
export const CA_KEY_FILE = 'ca.key'

const FILES: readonly string[] = [CA_FILE, CA_KEY_FILE, CERT_FILE, KEY_FILE]

const SIGNING_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const
/** How long a new serving certificate is valid (createDevCertificates' default), at most. */
const SERVING_VALID_MS = 365 * 24 * 60 * 60 * 1000

export interface DevCertificatesResult {
  /** Whether anything was written; false when a complete pair was there. */
  readonly created: boolean
  /** The files written, replaced ones included (never `ca.key`). */
  readonly written: readonly string[]
}

/**
 * Files that do not make a directory "someone else's": the repository's own `certs/README.md`
 * (a fresh clone holds it) and hidden files such as `.gitkeep`.
 */
function isPlaceholder(name: string): boolean {
  return name === 'README.md' || name.startsWith('.')
}

/**
 * Generates development certificates in `dir` unless a serving pair is already there. A missing
 * directory is created alone (mode 0700: a mistyped path must not grow a tree); one holding files
 * other than the certificates and placeholders (a README, hidden files) is not written into.
 * Anything that cannot be used or safely replaced is a StartupProblem (setting `certDir`).
 */
export async function ensureDevCertificates(dir: string): Promise<DevCertificatesResult> {
  const entries = await readdir(dir).catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT') return undefined
    throw new StartupProblem('certDir', dir, fileErrorReason(error), { cause: error })
  })
  if (entries === undefined) {
    const target = await danglingTarget(dir)
    if (target !== undefined) throw new StartupProblem('certDir', dir, dangling(target))
    await mkdir(dir, { mode: 0o700 }).catch((error: unknown) => {
      const reason =
        errorCode(error) === 'ENOENT'
          ? `no such directory ${dirname(dir)} (only the last directory of the path is created)`
          : fileErrorReason(error)
      throw new StartupProblem('certDir', dir, reason, { cause: error })
    })
    return writeCertificates(dir, { replace: [] })
  }
  const present = new Set(entries.filter((entry) => FILES.includes(entry)))
  for (const file of present) {
    const target = await danglingTarget(join(dir, file))
    if (target !== undefined)
      throw new StartupProblem('certDir', dir, `${file} ${dangling(target)}`)
  }
  if (present.has(CERT_FILE) && present.has(KEY_FILE)) {
    // A complete pair is used as it is, with or without a ca.crt, except this program's own
    // without its CA: nothing can be made to trust it again (the CA's key was never kept), so
    // all three are made anew and `curl --cacert certs/ca.crt` works.
    const orphan =
      !present.has(CA_FILE) &&
      !present.has(CA_KEY_FILE) &&
      (await readCertificate(join(dir, CERT_FILE)))?.issuer === DEV_CA_SUBJECT
    if (!orphan) return { created: false, written: [] }
    return writeCertificates(dir, { replace: [KEY_FILE, CERT_FILE] })
  }
  if (entries.some((entry) => !FILES.includes(entry) && !isPlaceholder(entry))) {
    throw new StartupProblem(
      'certDir',
      dir,
      `holds other files but no ${CERT_FILE} or ${KEY_FILE} (development certificates are generated only into a new directory, or one holding nothing but a README.md, hidden files or ${CA_FILE} and ${CA_KEY_FILE})`,
    )
  }
  return writeCertificates(dir, await planFor(dir, present))
}

/**
 * Where `path` points when it is a symbolic link to nothing: readdir lists such a link, but it
 * can be neither read nor written over (`wx` fails on it, as "file already exists"), so it is
 * named for what it is rather than taken for a missing or a present file.
 */
async function danglingTarget(path: string): Promise<string | undefined> {
  const isLink = await lstat(path).then(
    (stats) => stats.isSymbolicLink(),
    () => false,
  )
  if (!isLink) return undefined
  const resolves = await stat(path).then(
    () => true,
    (error: unknown) => errorCode(error) !== 'ENOENT',
  )
  return resolves ? undefined : readlink(path)
}

function dangling(target: string): string {
  return `is a dangling symbolic link (to ${target}): remove it or restore its target`
}

interface Plan {
  /** The CA to sign with, when one is kept; else a new one is made. */
  readonly issuer?: DevCa
  /** Files of this program's own, unusable, to replace. */
  readonly replace: readonly string[]
}

/** What to do about a directory without a complete pair, or a problem naming what to remove. */
async function planFor(dir: string, present: ReadonlySet<string>): Promise<Plan> {
  const problem = (reason: string) => new StartupProblem('certDir', dir, reason)
  const remove = (...files: string[]) =>
    `remove ${files.map((file) => join(dir, file)).join(' and ')}`
  const replace: string[] = []
  if (present.has(KEY_FILE)) {
    // A key alone: whose it is cannot be told, and a key is never deleted for the user.
    throw problem(
      `has ${KEY_FILE} but no ${CERT_FILE}: ${remove(KEY_FILE)} for new development certificates (or add its ${CERT_FILE})`,
    )
  }
  if (present.has(CERT_FILE)) {
    const cert = await readCertificate(join(dir, CERT_FILE))
    if (cert?.issuer !== DEV_CA_SUBJECT)
      throw problem(
        `has ${CERT_FILE} but no ${KEY_FILE}, and not from the development CA: ${remove(CERT_FILE)} for new development certificates (or add its ${KEY_FILE})`,
      )
    replace.push(CERT_FILE)
  }
  if (present.has(CA_KEY_FILE)) {
    if (!present.has(CA_FILE))
      throw problem(
        `has ${CA_KEY_FILE} but no ${CA_FILE}: ${remove(CA_KEY_FILE)} for new development certificates (or add its ${CA_FILE})`,
      )
    const issuer = await readCa(dir)
    if (typeof issuer === 'string')
      throw problem(
        `cannot sign with ${CA_FILE} and ${CA_KEY_FILE} (${issuer}): ${remove(CA_FILE, CA_KEY_FILE)} for new development certificates`,
      )
    return { issuer, replace }
  }
  if (present.has(CA_FILE)) {
    const ca = await readCertificate(join(dir, CA_FILE))
    if (ca?.subject !== DEV_CA_SUBJECT || ca.issuer !== DEV_CA_SUBJECT)
      throw problem(
        `has ${CA_FILE} but no ${CA_KEY_FILE}, and not the development CA: ${remove(CA_FILE)} for new development certificates (or add its ${CA_KEY_FILE})`,
      )
    replace.push(CA_FILE)
  }
  return { replace }
}

/** The first certificate of a PEM file, or undefined when it holds none that can be read. */
async function readCertificate(path: string): Promise<x509.X509Certificate | undefined> {
  try {
    return new x509.X509Certificate(
      (await readBoundedFile(path, CERTIFICATE_FILE_MAX_BYTES)).toString(),
    )
  } catch {
    return undefined
  }
}

/** `ca.crt` with its key `ca.key`, or why they cannot sign (in words, never their content). */
async function readCa(dir: string): Promise<DevCa | string> {
  const cert = await readCertificate(join(dir, CA_FILE))
  if (cert === undefined) return `${CA_FILE} holds no readable PEM certificate`
  const now = Date.now()
  if (cert.notAfter.getTime() <= now) return `${CA_FILE} expired on ${cert.notAfter.toISOString()}`
  const basic = cert.getExtension(x509.BasicConstraintsExtension)
  if (basic?.ca !== true) return `${CA_FILE} is not a CA certificate`
  let privateKey: webcrypto.CryptoKey
  try {
    const pem = (
      await readBoundedFile(join(dir, CA_KEY_FILE), CERTIFICATE_FILE_MAX_BYTES)
    ).toString()
    const [der] = x509.PemConverter.decode(pem)
    if (der === undefined) throw new Error('no PEM block')
    privateKey = await webcrypto.subtle.importKey('pkcs8', der, SIGNING_KEY, true, ['sign'])
  } catch {
    return `${CA_KEY_FILE} is not a PEM PKCS #8 ECDSA P-256 private key`
  }
  let publicKey: webcrypto.CryptoKey
  try {
    publicKey = await webcrypto.subtle.importKey(
      'spki',
      cert.publicKey.rawData,
      SIGNING_KEY,
      true,
      ['verify'],
    )
  } catch {
    return `${CA_FILE} does not hold an ECDSA P-256 public key`
  }
  // A private JWK carries its public point: the key fits the certificate when the points agree.
  const [mine, theirs] = await Promise.all([
    webcrypto.subtle.exportKey('jwk', privateKey),
    webcrypto.subtle.exportKey('jwk', publicKey),
  ])
  if (mine.x !== theirs.x || mine.y !== theirs.y)
    return `${CA_KEY_FILE} is not the key of ${CA_FILE}`
  return { cert, keys: { privateKey, publicKey } }
}

/**
 * Writes a serving pair (and, without a kept CA, a new `ca.crt`). A file that appeared meanwhile
 * is never overwritten: only those in `plan.replace` are removed first (the link itself, when
 * one is a link, never what it points to).
 */
async function writeCertificates(dir: string, plan: Plan): Promise<DevCertificatesResult> {
  const issuer = plan.issuer
  const certificates = await createDevCertificates({
    ...(issuer ? { issuer } : {}),
    // A serving certificate outliving its CA would be refused once the CA expires.
    ...(issuer && issuer.cert.notAfter.getTime() < Date.now() + SERVING_VALID_MS
      ? { notAfter: issuer.cert.notAfter }
      : {}),
  })
  const files: [string, string, number?][] = [
    ...(issuer ? [] : [[CA_FILE, certificates.ca] as [string, string]]),
    [KEY_FILE, certificates.key, 0o600],
    [CERT_FILE, certificates.cert],
  ]
  for (const [name, content, mode] of files) {
    const path = join(dir, name)
    if (plan.replace.includes(name)) await rm(path, { force: true })
    await writeFile(path, content, { flag: 'wx', ...(mode === undefined ? {} : { mode }) })
  }
  return { created: true, written: files.map(([name]) => name) }
}
