/**
 * Serving pairs of every key type a certificate may have, for the pair checks: the key from
 * Node's crypto, the certificate for 127.0.0.1 signed by a development CA (any key type can be a
 * leaf's, whatever the CA's own). RSA keys take tens of milliseconds each: make them once per file.
 */

import { generateKeyPairSync, randomBytes } from 'node:crypto'
import type { KeyObject } from 'node:crypto'
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import type { DevCa } from '../../src/http/dev-certs.ts'

/** The types, named as the service names them in its messages. */
export const KEY_TYPES = [
  'RSA',
  'RSA-PSS',
  'EC P-256',
  'EC P-384',
  'EC P-521',
  'Ed25519',
  'Ed448',
] as const
export type KeyType = (typeof KEY_TYPES)[number]

/** A new key pair of `type`. */
export function generateKey(type: KeyType): { publicKey: KeyObject; privateKey: KeyObject } {
  switch (type) {
    case 'RSA':
      return generateKeyPairSync('rsa', { modulusLength: 2048 })
    case 'RSA-PSS':
      return generateKeyPairSync('rsa-pss', { modulusLength: 2048 })
    case 'EC P-256':
    case 'EC P-384':
    case 'EC P-521':
      return generateKeyPairSync('ec', { namedCurve: type.slice('EC '.length) })
    case 'Ed25519':
      return generateKeyPairSync('ed25519')
    case 'Ed448':
      return generateKeyPairSync('ed448')
  }
}

/** PKCS #8 PEM, as cert-manager writes `tls.key` (with `encoding: PKCS8`). */
export function keyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString()
}

/** When a certificate is valid; by default from a minute ago for a day. */
export interface Validity {
  readonly notBefore: Date
  readonly notAfter: Date
}

function defaultValidity(): Validity {
  const notBefore = new Date(Date.now() - 60_000)
  return { notBefore, notAfter: new Date(notBefore.getTime() + 86_400_000) }
}

/** A serving certificate for 127.0.0.1 holding `publicKey`, signed by `ca`; PEM. */
export async function certificateFor(
  ca: DevCa,
  publicKey: KeyObject,
  { notBefore, notAfter }: Validity = defaultValidity(),
): Promise<string> {
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: `01${randomBytes(8).toString('hex')}`,
    subject: 'CN=127.0.0.1',
    issuer: ca.cert.subject,
    notBefore,
    notAfter,
    // The SubjectPublicKeyInfo as DER: the generator takes it whatever the algorithm.
    publicKey: publicKey.export({ type: 'spki', format: 'der' }),
    signingKey: ca.keys.privateKey,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }]),
    ],
  })
  return cert.toString('pem')
}

export interface TypedPair {
  readonly cert: string
  readonly key: string
  /** Another key of the same type, which does not match `cert`. */
  readonly otherKey: string
}

/** A matching pair of each type, each with another key of its type. */
export async function pairsOfEveryType(
  ca: DevCa,
  validity?: Validity,
): Promise<Record<KeyType, TypedPair>> {
  const pairs = await Promise.all(
    KEY_TYPES.map(async (type): Promise<[KeyType, TypedPair]> => {
      const { publicKey, privateKey } = generateKey(type)
      const otherKey = keyPem(generateKey(type).privateKey)
      return [
        type,
        { cert: await certificateFor(ca, publicKey, validity), key: keyPem(privateKey), otherKey },
      ]
    }),
  )
  return Object.fromEntries(pairs) as Record<KeyType, TypedPair>
}
