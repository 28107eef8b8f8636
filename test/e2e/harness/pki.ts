/**
 * Throwaway certificates for the test control plane: one CA that signs the API server's serving
 * certificate (127.0.0.1), an admin client certificate in `system:masters` and one for
 * kube-controller-manager (below), plus the service-account signing key pair. Everything is
 * written under `dir` and removed with it.
 */

import { webcrypto } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { createDevCa, createDevCertificates } from '../../../src/http/dev-certs.ts'

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const

export interface ControlPlanePki {
  readonly caFile: string
  readonly caPem: string
  readonly servingCertFile: string
  readonly servingKeyFile: string
  readonly adminCertPem: string
  readonly adminKeyPem: string
  /**
   * kube-controller-manager's: the user it is in a cluster where it runs without service-account
   * credentials (`system:kube-controller-manager`, which kubeadm's certificate names), in
   * `system:masters` here for the rights its controllers' own roles would give it. Webhooks see
   * the deletes of the namespace controller and the garbage collector as that user.
   */
  readonly controllerManagerCertPem: string
  readonly controllerManagerKeyPem: string
  readonly serviceAccountKeyFile: string
  readonly serviceAccountPublicKeyFile: string
}

export async function createControlPlanePki(dir: string): Promise<ControlPlanePki> {
  const ca = await createDevCa(2)
  const serving = await createDevCertificates({
    issuer: ca,
    validDays: 2,
    hosts: ['127.0.0.1', 'localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
  })
  const admin = await clientCertificate(ca, 'CN=e2e-admin, O=system:masters')
  const controllerManager = await clientCertificate(
    ca,
    'CN=system:kube-controller-manager, O=system:masters',
  )
  const serviceAccount = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])

  const files = {
    caFile: join(dir, 'ca.crt'),
    servingCertFile: join(dir, 'apiserver.crt'),
    servingKeyFile: join(dir, 'apiserver.key'),
    serviceAccountKeyFile: join(dir, 'sa.key'),
    serviceAccountPublicKeyFile: join(dir, 'sa.pub'),
  }
  await writeFile(files.caFile, serving.ca)
  await writeFile(files.servingCertFile, serving.cert)
  await writeFile(files.servingKeyFile, serving.key, { mode: 0o600 })
  await writeFile(files.serviceAccountKeyFile, await pem(serviceAccount.privateKey, 'pkcs8'), {
    mode: 0o600,
  })
  await writeFile(files.serviceAccountPublicKeyFile, await pem(serviceAccount.publicKey, 'spki'))
  return {
    ...files,
    caPem: serving.ca,
    adminCertPem: admin.cert,
    adminKeyPem: admin.key,
    controllerManagerCertPem: controllerManager.cert,
    controllerManagerKeyPem: controllerManager.key,
  }
}

/** A client certificate (ECDSA P-256, clientAuth) for `subject`, signed by `ca`. */
export async function clientCertificate(
  ca: Awaited<ReturnType<typeof createDevCa>>,
  subject: string,
): Promise<{ cert: string; key: string }> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])
  const notBefore = new Date(Date.now() - 60_000)
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: Date.now().toString(16),
    subject,
    issuer: ca.cert.subject,
    notBefore,
    notAfter: new Date(notBefore.getTime() + 2 * 24 * 3600_000),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
    ],
  })
  return { cert: cert.toString('pem'), key: await pem(keys.privateKey, 'pkcs8') }
}

async function pem(key: webcrypto.CryptoKey, format: 'pkcs8' | 'spki'): Promise<string> {
  const der = await webcrypto.subtle.exportKey(format, key)
  return x509.PemConverter.encode(der, format === 'pkcs8' ? 'PRIVATE KEY' : 'PUBLIC KEY')
}
