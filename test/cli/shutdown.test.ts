/**
 * Shutdown on the real process. With a cluster configured, SIGTERM turns readiness false first
 * and waits `--shutdown-delay` before the listener closes; with none (the embedded default)
 * nothing routes here, so Ctrl-C stops at once. Either way a request in flight (its body still
 * arriving) completes with 200, and the process exits 0.
 */

import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import tls from 'node:tls'
import t from 'tap'
import type { Test } from 'tap'
import { createDevCertificates, writeDevCertificates } from '../../src/http/dev-certs.ts'
import { review, runConfigMap } from '../helpers/objects.ts'
import { startServe } from '../helpers/serve-process.ts'
import type { ServeProcess } from '../helpers/serve-process.ts'

const SAMPLES = fileURLToPath(new URL('../../samples/objects', import.meta.url))

/** Starts `serve` on loopback ports and waits until it is ready. */
async function startService(
  t: Test,
  args: string[],
  env: Record<string, string>,
): Promise<ServeProcess> {
  const service = await startServe({ args: ['--objects', SAMPLES, ...args], env })
  t.teardown(service.kill)
  t.equal(await service.readyz(), 200, 'ready before the signal')
  return service
}

/** Whether the admission listener refuses new connections within `timeoutMs` (polled). */
async function listenerClosed(port: number, timeoutMs = 10_000): Promise<boolean> {
  const refused = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port })
      socket.once('connect', () => {
        socket.destroy()
        resolve(false)
      })
      socket.once('error', (error: NodeJS.ErrnoException) => {
        resolve(error.code === 'ECONNREFUSED')
      })
    })
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await refused()) return true
    await sleep(20)
  }
  return false
}

/** Starts a review and sends half its body; `finish` sends the rest and resolves the response. */
async function halfSentReview(port: number) {
  const body = Buffer.from(JSON.stringify(review(runConfigMap())))
  const half = Math.floor(body.length / 2)
  const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false })
  await new Promise((resolve) => socket.once('secureConnect', resolve))
  socket.write(
    `POST /mutate HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
  )
  socket.write(body.subarray(0, half))
  const response = new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      const text = Buffer.concat(chunks).toString('utf8')
      if (/\r\n\r\n[\s\S]*\}\}$/.test(text)) resolve(text)
    })
    socket.once('error', reject)
    socket.once('close', () => {
      resolve(Buffer.concat(chunks).toString('utf8'))
    })
  })
  return {
    finish: async () => {
      socket.write(body.subarray(half))
      const text = await response
      socket.destroy()
      return text
    },
  }
}

t.test(
  'SIGTERM with a cluster: not ready first, the request in flight completes, exit 0',
  async (t) => {
    // A pod serving objects from files: a cluster is configured (its API server would route here),
    // but none is read, and the certificates are the pod's own, not generated.
    const certDir = t.testdir()
    await writeDevCertificates(certDir, await createDevCertificates({ hosts: ['127.0.0.1'] }))
    const service = await startService(t, ['--cert-dir', certDir, '--shutdown-delay', '1s'], {
      KUBECONFIG: '',
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
    })
    const request = await halfSentReview(service.port)

    service.child.kill('SIGTERM')
    let status: number | undefined = 200
    for (let i = 0; i < 20 && status === 200; i++) {
      await sleep(50)
      status = await service.readyz()
    }
    t.equal(status, 503, 'readiness turns false first')

    // The rest of the body arrives after the shutdown delay, while the server drains.
    t.ok(await listenerClosed(service.port), 'the listener closes after the shutdown delay')
    const text = await request.finish()
    t.match(text, /^HTTP\/1\.1 200 /, 'the request in flight completes')
    t.match(text, /connection: close/i, 'and the client is told to reconnect elsewhere')
    t.match(text, /"uid":"test-uid-1"/)
    t.equal(await service.exited, 0, 'the process exits 0')
  },
)

t.test('Ctrl-C with no cluster: no shutdown delay, the request in flight completes', async (t) => {
  // The default delay with a cluster; with none, the default is no delay at all.
  const clusterDefaultMs = 5_000
  const service = await startService(t, ['--cert-dir', t.testdir()], {
    KUBECONFIG: '',
    KUBERNETES_SERVICE_HOST: '',
  })
  const request = await halfSentReview(service.port)

  const signalled = Date.now()
  service.child.kill('SIGINT')
  // The rest of the body arrives once the signal is handled and the listener is closed.
  await service.waitForLine('stderr', /SIGINT received, shutting down/)
  t.ok(await listenerClosed(service.port), 'the listener closes at once')
  const text = await request.finish()
  t.match(text, /^HTTP\/1\.1 200 /, 'the request in flight completes')
  t.match(text, /connection: close/i)
  // A bound on behaviour, not on speed: waiting out a delay alone would take 5 s.
  const code = await Promise.race([service.exited, sleep(clusterDefaultMs * 0.8, 'still running')])
  t.equal(code, 0, 'exits 0 before the delay a cluster would wait has passed')
  t.comment(`exited ${Date.now() - signalled} ms after SIGINT`)
})
