/**
 * Development certificates for the embedded default and the tests: a throwaway CA and an ECDSA
 * P-256 serving certificate it signs for localhost and 127.0.0.1. Never used in a cluster, where
 * cert-manager provides the pair.
 */

import { randomBytes, webcrypto } from 'node:crypto'
import { lstat, mkdir, readdir, readlink, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
// @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { CERT_FILE, KEY_FILE } from './certificates.ts'
import { errorCode, fileErrorReason } from '../files/file-errors.ts'
import { StartupProblem } from './startup-problem.ts'

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0])

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const
const DAY_MS = 24 * 60 * 60 * 1000

const CA_FILE = 'ca.crt'

interface DevCertificates {
  /** PEM of the CA certificate clients should trust. */
  readonly ca: string
  /** PEM of the serving certificate. */
  readonly cert: string
  /** PEM (PKCS #8) of the serving key. */
  readonly key: string
}

interface DevCertificateOptions {
  /** DNS names and IP addresses the serving certificate is valid for. */
  readonly hosts?: readonly string[]
  readonly validDays?: number
  /** The serving certificate's validity (default: from a minute ago, for `validDays`). */
  readonly notBefore?: Date
  readonly notAfter?: Date
  /** Sign with this CA instead of a new one (to rotate a serving certificate under one CA). */
  readonly issuer?: { readonly cert: x509.X509Certificate; readonly keys: webcrypto.CryptoKeyPair }
}

export interface DevCa {
  readonly cert: x509.X509Certificate
  readonly keys: webcrypto.CryptoKeyPair
}

/** Creates a self-signed CA for development and tests. */
export async function createDevCa(validDays = 365): Promise<DevCa> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])
  const notBefore = new Date(Date.now() - 60_000)
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'CN=mcp-admission development CA',
    notBefore,
    notAfter: new Date(notBefore.getTime() + validDays * DAY_MS),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })
  return { cert, keys }
}

/** Creates a CA (unless given one) and a serving certificate it signs. */
export async function createDevCertificates(
  options: DevCertificateOptions = {},
): Promise<DevCertificates & { readonly issuer: DevCa }> {
  const hosts = options.hosts ?? ['localhost', '127.0.0.1', '::1']
  const issuer = options.issuer ?? (await createDevCa())
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])
  const notBefore = options.notBefore ?? new Date(Date.now() - 60_000)
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${hosts[0] ?? 'localhost'}`,
    issuer: issuer.cert.subject,
    notBefore,
    notAfter:
      options.notAfter ?? new Date(notBefore.getTime() + (options.validDays ?? 365) * DAY_MS),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        hosts.map((host) => ({ type: isIpAddress(host) ? 'ip' : 'dns', value: host })),
      ),
      await x509.AuthorityKeyIdentifierExtension.create(issuer.cert),
    ],
  })
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)
  return {
    ca: issuer.cert.toString('pem'),
    cert: cert.toString('pem'),
    key: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'),
    issuer,
  }
}

/** Writes `tls.crt`, `tls.key` and `ca.crt` into `dir` (key readable by the owner only). */
export async function writeDevCertificates(
  dir: string,
  certificates: DevCertificates,
): Promise<void> {
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, CA_FILE), certificates.ca)
  await writeFile(join(dir, KEY_FILE), certificates.key, { mode: 0o600 })
  await writeFile(join(dir, CERT_FILE), certificates.cert)
}

/**
 * Files that do not make a directory "someone else's": the repository's own `certs/README.md`
 * (a fresh clone holds it) and hidden files such as `.gitkeep`.
 */
function isPlaceholder(name: string): boolean {
  return name === 'README.md' || name.startsWith('.')
}

/**
 * Generates development certificates in `dir` unless a serving pair is already there. They are
 * written only into a directory that is missing (then created alone, mode 0700: a mistyped path
 * must not grow a tree) or empty but for placeholders (a README, hidden files), so no file of the
 * user's is ever overwritten. A directory with part of a pair, or other files, is a
 * StartupProblem (setting `certDir`) saying what it holds.
 */
export async function ensureDevCertificates(dir: string): Promise<{ created: boolean }> {
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
  } else {
    for (const file of [CA_FILE, CERT_FILE, KEY_FILE].filter((name) => entries.includes(name))) {
      const target = await danglingTarget(join(dir, file))
      if (target !== undefined)
        throw new StartupProblem('certDir', dir, `${file} ${dangling(target)}`)
    }
    const pair = [CERT_FILE, KEY_FILE]
    const missing = pair.filter((file) => !entries.includes(file))
    // A complete pair is used as it is, with or without the ca.crt that curl would want.
    if (missing.length === 0) return { created: false }
    const present = [CA_FILE, ...pair].filter((file) => entries.includes(file))
    if (present.length > 0) {
      throw new StartupProblem(
        'certDir',
        dir,
        `has ${present.join(' and ')} but no ${missing.join(' or ')}`,
      )
    }
    if (entries.some((entry) => !isPlaceholder(entry))) {
      throw new StartupProblem(
        'certDir',
        dir,
        `holds other files but no ${pair.join(' or ')} (development certificates are generated only into a new directory, or one holding nothing but a README.md or hidden files)`,
      )
    }
  }
  await writeNewDevCertificates(dir, await createDevCertificates())
  return { created: true }
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

/** As writeDevCertificates, but fails rather than replace a file that appeared meanwhile. */
async function writeNewDevCertificates(dir: string, certificates: DevCertificates): Promise<void> {
  await writeFile(join(dir, CA_FILE), certificates.ca, { flag: 'wx' })
  await writeFile(join(dir, KEY_FILE), certificates.key, { flag: 'wx', mode: 0o600 })
  await writeFile(join(dir, CERT_FILE), certificates.cert, { flag: 'wx' })
}

function serialNumber(): string {
  const bytes = randomBytes(16)
  bytes[0] = (bytes[0] ?? 0) & 0x7f // positive, as RFC 5280 requires
  return bytes.toString('hex')
}

function isIpAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':')
}
