/**
 * Development certificates for the embedded default and the tests: a throwaway CA and an ECDSA
 * P-256 serving certificate it signs for localhost and 127.0.0.1. Never used in a cluster, where
 * cert-manager provides the pair. What `serve` writes into its certificate directory:
 * dev-cert-dir.ts.
 */

import { randomBytes, webcrypto } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
// @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { CERT_FILE, KEY_FILE } from './certificates.ts'

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0])

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const
const DAY_MS = 24 * 60 * 60 * 1000

export const CA_FILE = 'ca.crt'
/** The development CA's subject, by which its certificates are told from anyone else's. */
export const DEV_CA_SUBJECT = 'CN=mcp-admission development CA'

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
    name: DEV_CA_SUBJECT,
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

function serialNumber(): string {
  const bytes = randomBytes(16)
  bytes[0] = (bytes[0] ?? 0) & 0x7f // positive, as RFC 5280 requires
  return bytes.toString('hex')
}

function isIpAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':')
}
