/**
 * SIGTERM on the real process: readiness turns false first, a request in flight (its body still
 * arriving) completes with 200, and the process exits 0.
 */

import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import tls from 'node:tls'
import t from 'tap'
import { freePort } from '../helpers/ports.ts'
import { review, runConfigMap } from '../helpers/objects.ts'

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url))
const SAMPLES = fileURLToPath(new URL('../../samples/objects', import.meta.url))

t.test('SIGTERM: not ready first, the request in flight completes, exit 0', async (t) => {
  const [port, probePort] = [await freePort(), await freePort()]
  const child = spawn(
    process.execPath,
    [
      MAIN,
      'serve',
      '--objects',
      SAMPLES,
      '--cert-dir',
      t.testdir(),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--probe-host',
      '127.0.0.1',
      '--probe-port',
      String(probePort),
      '--shutdown-delay',
      '1s',
      '--log-level',
      'warn',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '' },
    },
  )
  t.teardown(() => child.kill('SIGKILL'))
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      resolve(code)
    }),
  )
  const readyz = async () =>
    (await fetch(`http://127.0.0.1:${probePort}/readyz`).catch(() => undefined))?.status
  for (let i = 0; i < 100 && (await readyz()) !== 200; i++) await sleep(100)
  t.equal(await readyz(), 200, 'ready before the signal')

  // Start a request and send only half of its body.
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

  child.kill('SIGTERM')
  let status: number | undefined = 200
  for (let i = 0; i < 20 && status === 200; i++) {
    await sleep(50)
    status = await readyz()
  }
  t.equal(status, 503, 'readiness turns false first')

  // The rest of the body arrives after the shutdown delay, while the server drains.
  await sleep(1_300)
  socket.write(body.subarray(half))
  const text = await response
  t.match(text, /^HTTP\/1\.1 200 /, 'the request in flight completes')
  t.match(text, /connection: close/i, 'and the client is told to reconnect elsewhere')
  t.match(text, /"uid":"test-uid-1"/)
  socket.destroy()
  t.equal(await exited, 0, 'the process exits 0')
})
