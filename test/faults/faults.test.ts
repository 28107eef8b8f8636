/**
 * Faults under a bounded load from a separate process, against the real server process: the
 * serving certificate rotated (zero failed requests, the new one served within 15 s), and SIGTERM
 * (readiness false first, requests in flight complete, no connection reset mid-request).
 */

import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import tls from 'node:tls'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import type { Test } from 'tap'
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { createDevCertificates, writeDevCertificates } from '../../src/http/dev-certs.ts'
import { review, runConfigMap } from '../helpers/objects.ts'
import { startServe } from '../helpers/serve-process.ts'
import { startLoad } from './load.ts'

const SAMPLES = fileURLToPath(new URL('../../samples/objects', import.meta.url))
/** Responses the load must have had before a fault is injected: it is under way. */
const WARM = 50

/** The real service in its own process, serving the sample objects with certificates in `dir`. */
async function startService(t: Test, dir: string, shutdownDelay = '1s') {
  const service = await startServe({
    args: [
      ...['--objects', SAMPLES, '--cert-dir', dir],
      ...['--cert-poll-interval', '5s', '--shutdown-delay', shutdownDelay],
    ],
  })
  t.teardown(service.kill)
  return { ...service, url: `${service.url}/mutate` }
}

async function reviewFile(dir: string): Promise<string> {
  const file = join(dir, 'review.json')
  await writeFile(file, JSON.stringify(review(runConfigMap(), { uid: 'fault-load-uid' })))
  return file
}

function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw
      socket.end()
      resolve(createHash('sha256').update(raw).digest('hex'))
    })
    socket.once('error', reject)
  })
}

t.test(
  'certificate rotation under load: zero failed requests, new certificate within 15 s',
  async (t) => {
    const dir = t.testdir()
    const first = await createDevCertificates({ hosts: ['127.0.0.1'] })
    await writeDevCertificates(dir, first)
    const service = await startService(t, dir)
    const load = startLoad({
      url: service.url,
      caFile: join(dir, 'ca.crt'),
      reviewFile: await reviewFile(dir),
      concurrency: 8,
      durationMs: 30_000,
    })
    t.teardown(load.stop)

    await load.until((progress) => progress.ok >= WARM)
    // cert-manager rotates the serving certificate under the same CA.
    const second = await createDevCertificates({ hosts: ['127.0.0.1'], issuer: first.issuer })
    const rotated = Date.now()
    await writeDevCertificates(dir, second)
    const wanted = createHash('sha256')
      .update(Buffer.from(new x509.X509Certificate(second.cert).rawData))
      .digest('hex')
    while ((await presented(service.port)) !== wanted && Date.now() - rotated < 15_000)
      await sleep(100)
    const servedAfter = Date.now() - rotated
    // The load goes on past the switch: new connections get the new certificate, old ones finish.
    const okAtSwitch = load.progress().ok
    await load.until((progress) => progress.ok >= okAtSwitch + 200)
    const summary = await load.stop()
    t.comment(
      `rotation: ${JSON.stringify(summary)}; new certificate served after ${servedAfter} ms`,
    )
    t.ok(servedAfter < 15_000, 'the new certificate is served within 15 s')
    t.equal(summary.failed, 0, `zero failed requests: ${JSON.stringify(summary.failures)}`)
    t.ok(summary.ok > 100, 'the load ran')
  },
)

t.test(
  'SIGTERM under load: not ready first, in-flight requests complete, no reset mid-request',
  async (t) => {
    const dir = t.testdir()
    await writeDevCertificates(dir, await createDevCertificates({ hosts: ['127.0.0.1'] }))
    const service = await startService(t, dir, '2s')
    const load = startLoad({
      url: service.url,
      caFile: join(dir, 'ca.crt'),
      reviewFile: await reviewFile(dir),
      concurrency: 8,
      durationMs: 30_000,
    })
    t.teardown(load.stop)

    await load.until((progress) => progress.ok >= WARM)
    service.child.kill('SIGTERM')
    let status = await service.readyz()
    for (let i = 0; i < 20 && status === 200; i++) {
      await sleep(25)
      status = await service.readyz()
    }
    t.equal(status, 503, 'readiness turns false while admission still answers')
    // The load goes on through the drain until the process has gone and its port refuses.
    const code = await service.exited
    await load.until((progress) => progress.refused > 0, 5_000)
    const summary = await load.stop()
    t.comment(`SIGTERM: ${JSON.stringify(summary)}`)
    t.equal(
      summary.failed,
      0,
      `no request failed or was reset mid-request: ${JSON.stringify(summary.failures)}`,
    )
    t.ok(summary.closing > 0, 'clients were told to reconnect elsewhere during the drain')
    t.ok(
      summary.refused > 0,
      'then the listener was closed (new connections refused, nothing half-sent)',
    )
    t.equal(code, 0, 'exit 0')
  },
)
