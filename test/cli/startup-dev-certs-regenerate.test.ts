/**
 * `certs/` after a user deleted some of what `serve` wrote there (ca.crt, tls.crt, tls.key): every
 * combination either gets what is missing, all of it signed by a CA the directory's ca.crt names,
 * or is a problem naming the exact file to remove, with nothing written. A CA given with its key
 * (ca.key) is kept and signs the new pair. No reason quotes a key.
 */

import { X509Certificate, createPrivateKey, webcrypto } from 'node:crypto'
import { mkdir, readdir, readFile, rm } from 'node:fs/promises'
import { request } from 'node:https'
import { join } from 'node:path'
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import t from 'tap'
import type { Test } from 'tap'
import { ensureDevCertificates } from '../../src/http/dev-cert-dir.ts'
import { createDevCa, createDevCertificates } from '../../src/http/dev-certs.ts'
import type { DevCa } from '../../src/http/dev-certs.ts'
import { startServe } from '../helpers/serve-process.ts'

const SERVED = ['ca.crt', 'tls.crt', 'tls.key']

/** A directory as `serve` leaves it: the three files it writes. */
async function servedDir(t: Test): Promise<{ dir: string; before: Record<string, string> }> {
  const dir = t.testdir()
  await ensureDevCertificates(dir)
  const before: Record<string, string> = {}
  for (const name of SERVED) before[name] = await readFile(join(dir, name), 'utf8')
  return { dir, before }
}

async function contents(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {}
  for (const name of (await readdir(dir)).sort())
    files[name] = await readFile(join(dir, name), 'utf8')
  return files
}

/** Whether tls.crt is signed by ca.crt, valid now, for localhost, with tls.key as its key. */
function servesUnder(t: Test, files: Record<string, string>): void {
  const ca = new X509Certificate(files['ca.crt'] ?? '')
  const cert = new X509Certificate(files['tls.crt'] ?? '')
  t.ok(cert.verify(ca.publicKey), 'tls.crt is signed by ca.crt')
  t.ok(cert.checkIssued(ca), 'ca.crt issued it')
  t.ok(cert.checkHost('localhost'), 'for localhost')
  t.ok(new Date(cert.validTo).getTime() > Date.now(), 'valid now')
  t.ok(cert.checkPrivateKey(createPrivateKey(files['tls.key'] ?? '')), 'tls.key is its key')
}

async function pkcs8(keys: webcrypto.CryptoKeyPair): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)
  return x509.PemConverter.encode(der, 'PRIVATE KEY')
}

t.test(
  'deleting files serve wrote: what is missing is made again, or the file to remove named',
  async (t) => {
    // Each deletion of a directory as serve leaves it: [deleted, what is written, or the problem].
    const cases: [string[], string[] | RegExp][] = [
      [[], []],
      // The case: the pair deleted, ca.crt kept. Its key was never kept: a new CA too.
      [
        ['tls.crt', 'tls.key'],
        ['ca.crt', 'tls.key', 'tls.crt'],
      ],
      [['tls.key'], ['ca.crt', 'tls.key', 'tls.crt']],
      [
        ['ca.crt', 'tls.key'],
        ['ca.crt', 'tls.key', 'tls.crt'],
      ],
      // The pair of the development CA without ca.crt: nothing could trust it again.
      [['ca.crt'], ['ca.crt', 'tls.key', 'tls.crt']],
      [
        ['ca.crt', 'tls.crt', 'tls.key'],
        ['ca.crt', 'tls.key', 'tls.crt'],
      ],
      // A key alone is never removed for the user.
      [
        ['tls.crt'],
        /^has tls\.key but no tls\.crt: remove (\S+)\/tls\.key for new development certificates \(or add its tls\.crt\)$/,
      ],
      [['ca.crt', 'tls.crt'], /^has tls\.key but no tls\.crt: remove (\S+)\/tls\.key for new/],
    ]
    for (const [deleted, outcome] of cases) {
      const { dir, before } = await servedDir(t)
      for (const name of deleted) await rm(join(dir, name))
      const label = `deleted ${deleted.join(', ') || 'nothing'}`
      if (outcome instanceof RegExp) {
        const left = await contents(dir)
        await t.rejects(
          ensureDevCertificates(dir),
          { name: 'StartupProblem', setting: 'certDir', value: dir, reason: outcome },
          label,
        )
        const problem = await ensureDevCertificates(dir).catch(
          (error: unknown) => error as { reason: string },
        )
        t.equal(
          outcome.exec((problem as { reason: string }).reason)?.[1],
          dir,
          `${label}: the exact path`,
        )
        t.same(await contents(dir), left, `${label}: nothing written`)
        continue
      }
      t.same(
        await ensureDevCertificates(dir),
        { created: outcome.length > 0, written: outcome },
        label,
      )
      const after = await contents(dir)
      t.same(Object.keys(after), [...SERVED].sort(), `${label}: the three files`)
      servesUnder(t, after)
      for (const name of SERVED)
        t.equal(
          after[name] === before[name],
          !outcome.includes(name),
          `${label}: ${name} ${outcome.includes(name) ? 'new' : 'kept'}`,
        )
    }
  },
)

t.test('a CA given with its key is kept and signs the new pair', async (t) => {
  for (const validDays of [30, 3650]) {
    const ca = await createDevCa(validDays)
    const caPem = ca.cert.toString('pem')
    const dir = t.testdir({ 'ca.crt': caPem, 'ca.key': await pkcs8(ca.keys) })
    t.same(await ensureDevCertificates(dir), { created: true, written: ['tls.key', 'tls.crt'] })
    const after = await contents(dir)
    t.equal(after['ca.crt'], caPem, 'ca.crt kept')
    servesUnder(t, after)
    // Never past its CA: a certificate outliving it would be refused once it expires.
    const notAfter = new X509Certificate(after['tls.crt'] ?? '').validToDate.getTime()
    t.ok(notAfter <= ca.cert.notAfter.getTime(), `${validDays} days: not past the CA`)
    // Again after deleting the pair (or only its certificate: a lone key is named, not used).
    await rm(join(dir, 'tls.crt'))
    await rm(join(dir, 'tls.key'))
    t.same(await ensureDevCertificates(dir), { created: true, written: ['tls.key', 'tls.crt'] })
    servesUnder(t, await contents(dir))
  }
})

/** A leaf certificate (not a CA) with its key, as files. */
async function leafFiles(): Promise<{ cert: string; key: string }> {
  const leaf = await createDevCertificates()
  return { cert: leaf.cert, key: leaf.key }
}

/** A CA whose key is not ECDSA P-256. */
async function rsaCa(): Promise<DevCa> {
  const algorithm = {
    name: 'RSASSA-PKCS1-v1_5',
    hash: 'SHA-256',
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: 2048,
  }
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=another CA',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    keys,
    signingAlgorithm: algorithm,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  })
  return { cert, keys }
}

t.test(
  'what cannot be used or safely replaced: one problem naming the files to remove',
  async (t) => {
    const ca = await createDevCa()
    const other = await createDevCa()
    const expired = await createDevCa(0)
    const leaf = await leafFiles()
    const rsa = await rsaCa()
    const otherKey = await pkcs8(other.keys)
    const cases: [string, Record<string, string>, string][] = [
      [
        'a CA key alone',
        { 'ca.key': await pkcs8(ca.keys) },
        'has ca.key but no ca.crt: remove DIR/ca.key for new development certificates (or add its ca.crt)',
      ],
      [
        "someone else's ca.crt",
        { 'ca.crt': leaf.cert },
        'has ca.crt but no ca.key, and not the development CA: remove DIR/ca.crt for new development certificates (or add its ca.key)',
      ],
      [
        'a ca.crt that is no certificate',
        { 'ca.crt': 'x' },
        'has ca.crt but no ca.key, and not the development CA: remove DIR/ca.crt for new development certificates (or add its ca.key)',
      ],
      [
        "someone else's tls.crt",
        { 'ca.crt': ca.cert.toString('pem'), 'tls.crt': 'x' },
        'has tls.crt but no tls.key, and not from the development CA: remove DIR/tls.crt for new development certificates (or add its tls.key)',
      ],
      [
        'a CA key of another CA',
        { 'ca.crt': ca.cert.toString('pem'), 'ca.key': otherKey },
        'cannot sign with ca.crt and ca.key (ca.key is not the key of ca.crt): remove DIR/ca.crt and DIR/ca.key for new development certificates',
      ],
      [
        'a CA key that is no key',
        { 'ca.crt': ca.cert.toString('pem'), 'ca.key': 'x' },
        'cannot sign with ca.crt and ca.key (ca.key is not a PEM PKCS #8 ECDSA P-256 private key): remove DIR/ca.crt and DIR/ca.key for new development certificates',
      ],
      [
        'a ca.crt that is no certificate, with a key',
        { 'ca.crt': 'x', 'ca.key': otherKey },
        'cannot sign with ca.crt and ca.key (ca.crt holds no readable PEM certificate): remove DIR/ca.crt and DIR/ca.key for new development certificates',
      ],
      [
        'an expired CA',
        { 'ca.crt': expired.cert.toString('pem'), 'ca.key': await pkcs8(expired.keys) },
        `cannot sign with ca.crt and ca.key (ca.crt expired on ${expired.cert.notAfter.toISOString()}): remove DIR/ca.crt and DIR/ca.key for new development certificates`,
      ],
      [
        'a certificate that is no CA',
        { 'ca.crt': leaf.cert, 'ca.key': leaf.key },
        'cannot sign with ca.crt and ca.key (ca.crt is not a CA certificate): remove DIR/ca.crt and DIR/ca.key for new development certificates',
      ],
      [
        'an RSA CA',
        { 'ca.crt': rsa.cert.toString('pem'), 'ca.key': otherKey },
        'cannot sign with ca.crt and ca.key (ca.crt does not hold an ECDSA P-256 public key): remove DIR/ca.crt and DIR/ca.key for new development certificates',
      ],
    ]
    for (const [label, files, reason] of cases) {
      const dir = t.testdir(files)
      const problem = await ensureDevCertificates(dir).then(
        () => undefined,
        (error: unknown) => error as { name: string; setting: string; reason: string },
      )
      t.equal(problem?.name, 'StartupProblem', label)
      t.equal(problem?.setting, 'certDir', label)
      t.equal(problem?.reason, reason.replaceAll('DIR', dir), label)
      t.notMatch(problem?.reason ?? '', /PRIVATE KEY|MII|BEGIN/, `${label}: no file content`)
      t.same(await contents(dir), files, `${label}: nothing written`)
    }
  },
)

t.test('npm start with certs/ holding only ca.crt serves, under a new CA', async (t) => {
  // The report: tls.crt and tls.key deleted, ca.crt kept, and `npm start` failed.
  const dir = t.testdir()
  await mkdir(join(dir, 'certs'))
  await ensureDevCertificates(join(dir, 'certs'))
  await rm(join(dir, 'certs', 'tls.crt'))
  await rm(join(dir, 'certs', 'tls.key'))
  const service = await startServe({
    loopback: false,
    logLevel: 'info',
    cwd: dir,
    readyTimeoutMs: 30_000,
  })
  t.teardown(service.kill)
  t.match(
    service.stdout.join(''),
    /"files":\["ca\.crt","tls\.key","tls\.crt"\][^\n]*generated development certificates/,
  )
  const ca = await readFile(join(dir, 'certs', 'ca.crt'))
  const response = await fetchWithCa(`https://127.0.0.1:${service.port}/mutate`, ca)
  t.equal(response, 400, 'a TLS handshake trusting certs/ca.crt, and an HTTP answer')
  t.equal(await service.stop('SIGTERM'), 0)
})

/** The status of a POST with no body, over TLS trusting `ca` only. */
async function fetchWithCa(url: string, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      },
    )
    req.on('error', reject)
    req.end('{}')
  })
}
