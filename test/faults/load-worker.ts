/**
 * A bounded load for fault tests, run as its own process (the way the API server is a separate
 * client): `concurrency` keep-alive connections each POST the review in a loop, one request at a
 * time (no pipelining), until `durationMs` has passed. Prints one JSON summary line and exits.
 *
 *   node test/faults/load-worker.ts URL CA_FILE REVIEW_FILE CONCURRENCY DURATION_MS [RATE]
 *
 * With RATE (requests per second in all), each connection paces itself to its share. SIGTERM ends
 * the load early (requests in flight complete). Every 100 ms a `progress {…}` line carries the
 * counts so far, so a test can wait for what it needs rather than for a fixed time.
 */

import { readFileSync } from 'node:fs'
import https from 'node:https'

export interface LoadSummary {
  /** 200 responses whose review echoes the request's uid. */
  readonly ok: number
  /** Anything else that went wrong after the request was sent: a reset, a bad status, a bad body. */
  readonly failed: number
  /** Connections refused before a request was sent (the listener is closed): not a failure. */
  readonly refused: number
  readonly failures: Record<string, number>
  /** Responses that carried `Connection: close`. */
  readonly closing: number
  /**
   * Requests sent on a reused keep-alive socket that the server had closed as idle before reading
   * them (ECONNRESET, nothing received), and sent again on a new connection: what Go's HTTP client
   * (the API server's) does for errServerClosedIdle, and what Node documents for `reusedSocket`.
   */
  readonly retriedIdleClose: number
}

const [
  url = '',
  caFile = '',
  reviewFile = '',
  concurrencyText = '4',
  durationText = '5000',
  rateText = '',
] = process.argv.slice(2)
const intervalMs = rateText === '' ? 0 : (1000 * Number(concurrencyText)) / Number(rateText)
const ca = readFileSync(caFile, 'utf8')
const body = readFileSync(reviewFile)
const uid = (JSON.parse(body.toString('utf8')) as { request: { uid: string } }).request.uid
const deadline = Date.now() + Number(durationText)
let stopped = false
process.once('SIGTERM', () => {
  stopped = true
})
const agent = new https.Agent({ keepAlive: true, maxSockets: Number(concurrencyText), ca })
const summary = {
  ok: 0,
  failed: 0,
  refused: 0,
  failures: {} as Record<string, number>,
  closing: 0,
  retriedIdleClose: 0,
}

function fail(kind: string): void {
  summary.failed++
  summary.failures[kind] = (summary.failures[kind] ?? 0) + 1
}

function once(retry = true): Promise<void> {
  return new Promise((resolve) => {
    let sent = false
    let received = false
    const request = https.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (response) => {
        received = true
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.once('error', (error) => {
          fail(`response ${(error as NodeJS.ErrnoException).code ?? error.message}`)
          resolve()
        })
        response.once('end', () => {
          if (response.headers.connection === 'close') summary.closing++
          const text = Buffer.concat(chunks).toString('utf8')
          if (response.statusCode === 200 && text.includes(`"uid":"${uid}"`)) summary.ok++
          else fail(`status ${response.statusCode ?? 0}`)
          resolve()
        })
      },
    )
    request.once('finish', () => {
      sent = true
    })
    request.once('error', (error: NodeJS.ErrnoException) => {
      if (!sent && error.code === 'ECONNREFUSED') summary.refused++
      else if (retry && !received && error.code === 'ECONNRESET') {
        summary.retriedIdleClose++
        resolve(once(false))
        return
      } else fail(`request ${error.code ?? error.message}`)
      resolve()
    })
    request.end(body)
  })
}

async function connection(): Promise<void> {
  while (!stopped && Date.now() < deadline) {
    const refusedBefore = summary.refused
    const started = Date.now()
    await once()
    const pause = intervalMs - (Date.now() - started)
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause))
    // Once the listener is gone, back off instead of spinning on refusals.
    if (summary.refused > refusedBefore) await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const progress = setInterval(() => {
  process.stdout.write(`progress ${JSON.stringify(summary)}\n`)
}, 100)
await Promise.all(Array.from({ length: Number(concurrencyText) }, connection))
clearInterval(progress)
agent.destroy()
process.stdout.write(`${JSON.stringify(summary)}\n`)
