/**
 * The `--client-ca` bundle is checked before it is trusted: Node would take a file with no CA in
 * it and then refuse every client, the API server included.
 */

import { join } from 'node:path'
import t from 'tap'
import { checkClientCa, readClientCa } from '../../src/http/client-ca.ts'
import { createDevCertificates } from '../../src/http/dev-certs.ts'

const { ca, cert: leaf, key } = await createDevCertificates()
const other = (await createDevCertificates()).ca

t.test('a CA certificate, alone or in a bundle with others, is accepted', async (t) => {
  t.match(checkClientCa(ca), { pem: ca, authorities: ['CN=mcp-admission development CA'] })
  // openssl writes `subject=` lines between the blocks; they are not blocks.
  const bundle = `subject=CN = one\n${ca}\nsubject=CN = two\n${leaf}${other}`
  t.match(checkClientCa(bundle), { authorities: { length: 2 } })
})

t.test('no CA among the certificates', async (t) => {
  t.equal(
    checkClientCa(leaf),
    'no CA certificate in it (1 certificate, none with basicConstraints CA:TRUE)',
  )
  t.equal(
    checkClientCa(leaf + leaf),
    'no CA certificate in it (2 certificates, none with basicConstraints CA:TRUE)',
  )
})

t.test('no certificate at all', async (t) => {
  t.equal(checkClientCa(''), 'no PEM certificate in it')
  t.equal(checkClientCa('just some text\n'), 'no PEM certificate in it')
})

t.test('every block must be a certificate that parses, named by its number', async (t) => {
  t.match(
    checkClientCa(`${ca}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`),
    /^block 2 is not a valid certificate: /,
  )
  t.equal(checkClientCa(ca + key), 'block 2 is a PRIVATE KEY, not a CERTIFICATE')
  t.equal(
    checkClientCa(ca + ca.slice(0, ca.indexOf('-----END'))),
    'block 2 (CERTIFICATE) has no END line',
  )
})

t.test('readClientCa: file problems and content problems name the file', async (t) => {
  const dir = t.testdir({ 'leaf.pem': leaf, 'ca.pem': ca })
  await t.rejects(readClientCa(join(dir, 'missing.pem')), {
    name: 'StartupProblem',
    setting: 'clientCaFile',
    value: join(dir, 'missing.pem'),
    reason: 'no such file',
  })
  await t.rejects(readClientCa(dir), {
    name: 'StartupProblem',
    setting: 'clientCaFile',
    reason: 'is a directory',
  })
  await t.rejects(readClientCa(join(dir, 'leaf.pem')), {
    name: 'StartupProblem',
    setting: 'clientCaFile',
    value: join(dir, 'leaf.pem'),
    reason: /^no CA certificate in it/,
  })
  t.match(await readClientCa(join(dir, 'ca.pem')), { pem: ca })
})
