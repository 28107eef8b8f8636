/**
 * The real HTTPS server on loopback: certificate reload without restart, readiness before the
 * certificate, pairs of every key type (and keys of another type than the certificate's refused),
 * TLS versions, and client-certificate verification of the API server.
 */

import { createHash, webcrypto } from 'node:crypto'
import { createServer } from 'node:net'
import { execFileSync } from 'node:child_process'
import { rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import tls from 'node:tls'
import { pino } from 'pino'
import t from 'tap'
import type { Test } from 'tap'
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { createAdmission } from '../../src/admission/webhook.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import {
  createDevCa,
  createDevCertificates,
  writeDevCertificates,
} from '../../src/http/dev-certs.ts'
import type { DevCa } from '../../src/http/dev-certs.ts'
import { startServer } from '../../src/http/server.ts'
import type { RunningServer } from '../../src/http/server.ts'
import type { ServerConfig } from '../../src/http/server-config.ts'
import { generateKey, KEY_TYPES, keyPem, pairsOfEveryType } from '../helpers/key-types.ts'
import { review, runConfigMap } from '../helpers/objects.ts'
import { freePort } from '../helpers/ports.ts'

const silent = pino({ level: 'silent' })

function config(certDir: string, extra: Partial<ServerConfig> = {}): ServerConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    probeHost: '127.0.0.1',
    probePort: 0,
    certDir,
    certPollIntervalMs: 5_000,
    shutdownDelayMs: 0,
    drainTimeoutMs: 2_000,
    keepAliveTimeoutMs: 100_000,
    ...extra,
  }
}

async function start(t: Test, certDir: string, extra: Partial<ServerConfig> = {}) {
  const server = await startServer(config(certDir, extra), {
    admission: createAdmission({ view: new MemoryView() }),
    view: new MemoryView(),
    logger: silent,
  })
  t.teardown(() => server.close())
  const { port } = new URL(server.admissionUrl)
  return { server, port: Number(port) }
}

/** Handshakes and returns the SHA-256 of the certificate the server presents. */
function presented(port: number, options: tls.ConnectionOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: '127.0.0.1', port, rejectUnauthorized: false, ...options },
      () => {
        const certificate = socket.getPeerCertificate()
        socket.end()
        resolve(createHash('sha256').update(certificate.raw).digest('hex'))
      },
    )
    socket.once('error', reject)
  })
}

/**
 * Re-runs `probe` until `done` accepts its value or `timeoutMs` has passed, and returns the last
 * value: the test then asserts on it, so a timeout fails with what was actually seen.
 */
async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let value = await probe()
  while (!done(value) && Date.now() < deadline) {
    await sleep(20) // a poll interval, not a guess at how long the server takes
    value = await probe()
  }
  return value
}

/** The server's certificate reload counters (mcp_admission_certificate_reloads_total). */
async function reloads(server: RunningServer): Promise<{ loaded: number; rejected: number }> {
  const { values } = await server.metrics.certificateReloads.get()
  const count = (result: string) =>
    values.find((sample) => sample.labels.result === result)?.value ?? 0
  return { loaded: count('loaded'), rejected: count('rejected') }
}

const fingerprint = (pem: string) =>
  createHash('sha256')
    .update(Buffer.from(new x509.X509Certificate(pem).rawData))
    .digest('hex')

t.test(
  'replacing the certificate files makes the server present the new one, without a restart',
  async (t) => {
    const dir = t.testdir()
    const first = await createDevCertificates({ hosts: ['127.0.0.1'] })
    await writeDevCertificates(dir, first)
    const { port, server } = await start(t, dir)
    t.equal(await presented(port), fingerprint(first.cert))

    const second = await createDevCertificates({ hosts: ['127.0.0.1'], issuer: first.issuer })
    const replaced = Date.now()
    await writeDevCertificates(dir, second)
    const now = await eventually(
      () => presented(port),
      (served) => served === fingerprint(second.cert),
    )
    t.equal(now, fingerprint(second.cert), 'the new certificate is served')
    t.comment(`new certificate served ${Date.now() - replaced} ms after the files changed`)

    // A broken pair (a key that does not match) is refused; the current certificate keeps serving.
    // Wait for the server to have read it (a reload counted either way), not for a guessed time.
    const before = await reloads(server)
    const other = await createDevCertificates({ hosts: ['127.0.0.1'] })
    await writeFile(join(dir, 'tls.key'), other.key)
    const after = await eventually(
      () => reloads(server),
      (counted) => counted.loaded + counted.rejected > before.loaded + before.rejected,
    )
    t.same(
      after,
      { loaded: before.loaded, rejected: before.rejected + 1 },
      'the mismatched pair is rejected',
    )
    t.equal(await presented(port), fingerprint(second.cert), 'a mismatched pair is not used')
    t.equal((await fetch(`${server.probeUrl}/readyz`)).status, 200, 'and the server stays ready')
  },
)

/** Replaces `path` in one step (a rename), so no reload reads it half written. */
async function replaceFile(path: string, content: string): Promise<void> {
  await writeFile(`${path}.new`, content)
  await rename(`${path}.new`, path)
}

t.test(
  'a key of another type than the certificate: refused at start; on rotation refused, the current pair kept',
  async (t) => {
    const dir = t.testdir()
    const pair = await createDevCertificates({ hosts: ['127.0.0.1'] }) // EC P-256
    const rsaKey = keyPem(generateKey('RSA').privateKey)
    await writeFile(join(dir, 'tls.crt'), pair.cert)
    await writeFile(join(dir, 'tls.key'), rsaKey)
    const warnings: string[] = []
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) },
    )
    const reason = `${join(dir, 'tls.key')}: does not match tls.crt (an RSA key beside an EC P-256 certificate)`
    const deps = {
      admission: createAdmission({ view: new MemoryView() }),
      view: new MemoryView(),
      logger,
    }

    // At start: a pair that can never serve is a start-up error (the CLI prints it as one line,
    // exit 2), not a listener that would never be ready.
    const refused = await startServer(config(dir, { certPollIntervalMs: 200 }), deps).then(
      () => undefined,
      (error: unknown) => error,
    )
    t.match(refused, { name: 'StartupProblem', setting: 'certDir', value: dir, reason })
    t.same(warnings, [], 'nothing logged: the error says it')

    await replaceFile(join(dir, 'tls.key'), pair.key)
    const server = await startServer(config(dir, { certPollIntervalMs: 200 }), deps)
    t.teardown(() => server.close())
    const port = Number(new URL(server.admissionUrl).port)
    await eventually(
      () => reloads(server),
      (counted) => counted.loaded === 1,
    )
    t.equal((await fetch(`${server.probeUrl}/readyz`)).status, 200, 'ready with the matching key')
    t.equal(await presented(port), fingerprint(pair.cert))

    // On rotation: refused and counted; the current pair keeps serving and the service ready.
    const before = await reloads(server)
    await replaceFile(join(dir, 'tls.key'), rsaKey)
    const after = await eventually(
      () => reloads(server),
      (counted) => counted.loaded + counted.rejected > before.loaded + before.rejected,
    )
    t.same(after, { loaded: before.loaded, rejected: before.rejected + 1 }, 'counted as rejected')
    t.equal(await presented(port), fingerprint(pair.cert), 'the current pair keeps serving')
    t.equal((await fetch(`${server.probeUrl}/readyz`)).status, 200, 'and the server stays ready')
    const validUntil = new x509.X509Certificate(pair.cert).notAfter.toISOString()
    t.same(
      warnings,
      [
        `serving certificate not loaded (keeping the current certificate, valid until ${validUntil}): ${reason}`,
      ],
      'one warning',
    )
  },
)

t.test(
  'a matching pair of every key type is served, and a client that checks it completes a handshake',
  async (t) => {
    const ca = await createDevCa()
    const pairs = await pairsOfEveryType(ca)
    const dir = t.testdir()
    const { server, port } = await start(t, dir, { certPollIntervalMs: 200 })
    for (const type of KEY_TYPES) {
      const before = await reloads(server)
      await replaceFile(join(dir, 'tls.crt'), pairs[type].cert)
      await replaceFile(join(dir, 'tls.key'), pairs[type].key)
      // A reload between the two files may find a half-renewed pair and refuse it; then the next
      // one loads the pair.
      const after = await eventually(
        () => reloads(server),
        (counted) => counted.loaded > before.loaded,
      )
      t.equal(after.loaded, before.loaded + 1, `${type}: loaded`)
      t.equal(
        await presented(port, { ca: ca.cert.toString('pem'), rejectUnauthorized: true }),
        fingerprint(pairs[type].cert),
        `${type}: served, verified by the client`,
      )
    }
    t.equal((await fetch(`${server.probeUrl}/readyz`)).status, 200, 'ready')
  },
)

t.test('/readyz is false until the certificate is loaded', async (t) => {
  const dir = t.testdir()
  const { server } = await start(t, dir, { certPollIntervalMs: 200 })
  const before = await fetch(`${server.probeUrl}/readyz`)
  t.equal(before.status, 503)
  t.match(await before.json(), { failing: ['serving certificate loaded'] })
  await writeDevCertificates(dir, await createDevCertificates({ hosts: ['127.0.0.1'] }))
  const status = await eventually(
    async () => (await fetch(`${server.probeUrl}/readyz`)).status,
    (answered) => answered === 200,
  )
  t.equal(status, 200, 'ready once the pair is loaded')
})

t.test(
  '/readyz is false while the certificate served is expired, true once a valid one is',
  async (t) => {
    const dir = t.testdir()
    const expired = await createDevCertificates({
      hosts: ['127.0.0.1'],
      notBefore: new Date(Date.now() - 30 * 86_400_000),
      notAfter: new Date(Date.now() - 86_400_000),
    })
    await writeDevCertificates(dir, expired)
    const { server, port } = await start(t, dir, { certPollIntervalMs: 200 })
    t.equal(await presented(port), fingerprint(expired.cert), 'served: nothing better is there')
    const before = await fetch(`${server.probeUrl}/readyz`)
    t.equal(before.status, 503)
    t.same(await before.json(), { status: 'not ready', failing: ['serving certificate valid now'] })
    const renewed = await createDevCertificates({ hosts: ['127.0.0.1'], issuer: expired.issuer })
    await writeDevCertificates(dir, renewed)
    const status = await eventually(
      async () => (await fetch(`${server.probeUrl}/readyz`)).status,
      (answered) => answered === 200,
    )
    t.equal(status, 200, 'ready once the renewed pair is loaded')
    t.equal(await presented(port), fingerprint(renewed.cert))
  },
)

t.test('a FIFO as tls.crt blocks neither start, nor reload, nor shutdown', async (t) => {
  const dir = t.testdir()
  execFileSync('mkfifo', [join(dir, 'tls.crt')])
  await writeFile(join(dir, 'tls.key'), 'key')
  const deps = {
    admission: createAdmission({ view: new MemoryView() }),
    view: new MemoryView(),
    logger: silent,
  }
  // At start it is refused, naming the file, without a read that waits for a writer.
  await t.rejects(startServer(config(dir, { certPollIntervalMs: 200 }), deps), {
    name: 'StartupProblem',
    reason: new RegExp(`^${join(dir, 'tls.crt')}: `),
  })
  await rm(join(dir, 'tls.crt'))
  await writeDevCertificates(dir, await createDevCertificates({ hosts: ['127.0.0.1'] }))
  const server = await startServer(config(dir, { certPollIntervalMs: 200 }), deps)
  const status = await eventually(
    async () => (await fetch(`${server.probeUrl}/readyz`)).status,
    (answered) => answered === 200,
  )
  t.equal(status, 200, 'a usable pair is served')
  // And a FIFO swapped in while serving: the reload refuses it; close still completes.
  const before = await reloads(server)
  await rm(join(dir, 'tls.crt'))
  execFileSync('mkfifo', [join(dir, 'tls.crt')])
  const after = await eventually(
    () => reloads(server),
    (counted) => counted.rejected > before.rejected,
  )
  t.equal(after.rejected, before.rejected + 1, 'the FIFO is refused')
  await server.close()
  t.pass('shutdown completes')
})

t.test('TLS 1.0 and 1.1 handshakes are refused; 1.2 and 1.3 are served', async (t) => {
  const dir = t.testdir()
  await writeDevCertificates(dir, await createDevCertificates({ hosts: ['127.0.0.1'] }))
  const { port } = await start(t, dir)
  for (const version of ['TLSv1', 'TLSv1.1'] as const) {
    // The client allows the old protocol (and its ciphers) so only the server can refuse it.
    await t.rejects(
      presented(port, { minVersion: version, maxVersion: version, ciphers: 'DEFAULT@SECLEVEL=0' }),
      `${version} refused`,
    )
  }
  for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
    t.match(
      await presented(port, { minVersion: version, maxVersion: version }),
      /^[0-9a-f]{64}$/,
      `${version} served`,
    )
  }
})

t.test('--client-ca: only clients with a certificate from that CA are served', async (t) => {
  const dir = t.testdir()
  await writeDevCertificates(dir, await createDevCertificates({ hosts: ['127.0.0.1'] }))
  const clientCa = await createDevCa()
  await writeFile(join(dir, 'client-ca.crt'), clientCa.cert.toString('pem'))
  const { port } = await start(t, dir, { clientCaFile: join(dir, 'client-ca.crt') })

  const post = (options: tls.ConnectionOptions) => postReview(port, options)
  await t.rejects(post({}), 'no client certificate: refused')
  const stranger = await clientCertificate(await createDevCa())
  await t.rejects(post(stranger), 'a certificate from another CA: refused')
  const apiServer = await clientCertificate(clientCa)
  t.match(
    await post(apiServer),
    /^HTTP\/1\.1 200 /,
    'the API server with its client certificate is served',
  )
})

t.test('--client-ca with no CA in it: start-up fails before anything listens', async (t) => {
  const dir = t.testdir()
  const pair = await createDevCertificates({ hosts: ['127.0.0.1'] })
  await writeDevCertificates(dir, pair)
  // A serving certificate is no CA: trusted as one, it would make the server refuse every client.
  await writeFile(join(dir, 'client-ca.crt'), pair.cert)
  const probePort = await freePort()
  const starting = startServer(
    config(dir, { clientCaFile: join(dir, 'client-ca.crt'), probePort }),
    {
      admission: createAdmission({ view: new MemoryView() }),
      view: new MemoryView(),
      logger: silent,
    },
  )
  // Should it start after all, it is stopped so the test cannot hang.
  starting.then(
    (server) => server.close(),
    () => undefined,
  )
  await t.rejects(starting, {
    name: 'StartupProblem',
    setting: 'clientCaFile',
    reason: 'no CA certificate in it (1 certificate, none with basicConstraints CA:TRUE)',
  })
  t.equal(await probeAnswers(probePort), false, 'the probe port was never opened')
})

t.test(
  'the admission port in use: a StartupProblem, and the probe listener is closed again',
  async (t) => {
    const dir = t.testdir()
    await writeDevCertificates(dir, await createDevCertificates({ hosts: ['127.0.0.1'] }))
    const holder = createServer()
    await new Promise<void>((resolve) => {
      holder.listen(0, '127.0.0.1', resolve)
    })
    t.teardown(
      () =>
        new Promise<void>((resolve) =>
          holder.close(() => {
            resolve()
          }),
        ),
    )
    const port = (holder.address() as { port: number }).port
    const probePort = await freePort()
    const starting = startServer(config(dir, { port, probePort }), {
      admission: createAdmission({ view: new MemoryView() }),
      view: new MemoryView(),
      logger: silent,
    })
    await t.rejects(starting, {
      name: 'StartupProblem',
      setting: 'port',
      value: String(port),
      reason: 'address already in use',
    })
    t.equal(await probeAnswers(probePort), false, 'the probe listener is gone')
  },
)

/** Whether anything answers HTTP on this loopback port. */
async function probeAnswers(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => true,
    () => false,
  )
}

/** Sends one review over a raw TLS socket and resolves with the response text. */
function postReview(port: number, options: tls.ConnectionOptions): Promise<string> {
  const body = JSON.stringify(review(runConfigMap()))
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: '127.0.0.1', port, rejectUnauthorized: false, ...options },
      () => {
        socket.write(
          `POST /mutate HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        )
      },
    )
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.once('error', reject)
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      if (text === '') reject(new Error('closed without a response'))
      else resolve(text)
    })
  })
}

async function clientCertificate(ca: DevCa): Promise<{ cert: string; key: string }> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])
  const notBefore = new Date(Date.now() - 60_000)
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '01',
    subject: 'CN=kube-apiserver',
    issuer: ca.cert.subject,
    notBefore,
    notAfter: new Date(notBefore.getTime() + 86_400_000),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: algorithm,
    extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])],
  })
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)
  return { cert: cert.toString('pem'), key: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY') }
}

/** The value of one unlabelled series in a scrape, or undefined. */
async function scraped(probeUrl: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${probeUrl}/metrics`)).text()
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}

t.test('the cache-state and certificate metrics are what a scrape finds now', async (t) => {
  const dir = t.testdir()
  const pair = await createDevCertificates({ hosts: ['127.0.0.1'] })
  await writeDevCertificates(dir, pair)
  let synced = false
  const view = Object.assign(new MemoryView(), { isSynced: () => synced })
  const server = await startServer(config(dir), {
    admission: createAdmission({ view }),
    view,
    logger: silent,
  })
  t.teardown(() => server.close())

  // Nobody calls /readyz here: the gauge follows the view at each scrape.
  t.equal(await scraped(server.probeUrl, 'mcp_admission_cluster_view_synced'), 0)
  synced = true
  t.equal(await scraped(server.probeUrl, 'mcp_admission_cluster_view_synced'), 1)
  synced = false
  t.equal(await scraped(server.probeUrl, 'mcp_admission_cluster_view_synced'), 0)

  const notAfter = new x509.X509Certificate(pair.cert).notAfter.getTime() / 1000
  t.equal(
    await scraped(server.probeUrl, 'mcp_admission_certificate_expiration_timestamp_seconds'),
    notAfter,
    'the not-after of the certificate being served',
  )
})

/** A TLS connection to the server, handshaken; `closed` resolves when the server ends it. */
async function openConnection(port: number) {
  const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
    const opened = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(opened)
    })
    opened.once('error', reject)
  })
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (received += chunk))
  const closed = new Promise<string>((resolve) =>
    socket.once('close', () => {
      resolve(received)
    }),
  )
  return { socket, closed }
}

t.test(
  'the drain closes connections with nothing in flight at once, not at its timeout',
  async (t) => {
    const dir = t.testdir()
    await writeDevCertificates(dir, await createDevCertificates({ hosts: ['127.0.0.1'] }))
    const warnings: string[] = []
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) })
    const server = await startServer(config(dir, { drainTimeoutMs: 60_000 }), {
      admission: createAdmission({ view: new MemoryView() }),
      view: new MemoryView(),
      logger,
    })
    const port = Number(new URL(server.admissionUrl).port)
    // Spare connections, as the API server's client opens them under load: nothing ever sent.
    const spare = await Promise.all([1, 2, 3].map(() => openConnection(port)))
    // And one review in flight: headers and part of the body sent before the drain.
    const busy = await openConnection(port)
    const body = JSON.stringify(review(runConfigMap()))
    busy.socket.write(
      `POST /mutate HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    )
    const inFlight = async () =>
      (await server.metrics.inFlight.get()).values.reduce((sum, sample) => sum + sample.value, 0)
    t.equal(await eventually(inFlight, (count) => count === 1), 1, 'the review is in flight')

    const closing = server.close()
    await Promise.all(spare.map((connection) => connection.closed))
    t.pass('the server closed the connections that never sent a request')
    busy.socket.write(body.slice(10))
    const answer = await busy.closed
    t.match(answer, /^HTTP\/1\.1 200 /, 'the review in flight is still answered')
    t.match(answer, /connection: close/i)
    await closing
    t.same(
      warnings.filter((line) => line.includes('drain timeout')),
      [],
      'no connection had to be cut at the drain timeout',
    )
  },
)
