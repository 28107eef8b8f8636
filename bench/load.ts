/**
 * The load generator, run as its own process (`fork`) so it never shares a CPU budget or an event
 * loop with the server under test. It speaks HTTP/1.1 over TLS on keep-alive connections with at
 * most one request in flight per connection (no pipelining), as the API server calls webhooks.
 *
 * Saturated mode: every connection sends again as soon as it is answered (closed loop).
 * Rate mode: requests are due at evenly spaced times (open loop); a due request waits for an idle
 * connection, and its latency counts from when it was due, so a server that falls behind is seen
 * falling behind (no coordinated omission). Timer lag in this process is not counted.
 */

import { createHistogram } from 'node:perf_hooks'
import { connect } from 'node:tls'
import type { TLSSocket } from 'node:tls'
import { cpuSeconds, machineBusySeconds, memory } from './proc.ts'
import { TOKEN, tokenValue } from './token.ts'

export interface LoadJob {
  readonly port: number
  /** PEM of the CA that signed the server's certificate. */
  readonly ca: string
  readonly path: string
  /** Review bodies, sent in turn; each placeholder (token.ts) is replaced per request. */
  readonly bodies: readonly string[]
  readonly connections: number
  readonly warmupMs: number
  readonly durationMs: number
  /** Requests per second; absent: saturate. */
  readonly rate?: number
  /** The server process whose CPU time and RSS are read at the edges of the measured window. */
  readonly serverPid: number
}

export interface LoadResult {
  /** Requests answered within the measured window. */
  readonly requests: number
  readonly errors: number
  readonly seconds: number
  readonly throughput: number
  /** Requests due in rate mode but never sent before the window closed (server far behind). */
  readonly unsent: number
  /** Latency of the requests sent within the window, in milliseconds. */
  readonly latencyMs: {
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly p999: number
    readonly max: number
    readonly mean: number
  }
  /** Server CPU time per answered request, microseconds. */
  readonly cpuUsPerRequest: number
  /** Server CPU seconds per wall second over the window (1 = one core busy). */
  readonly cpuCores: number
  /** The load generator's own CPU seconds per wall second: near 1, it may be the bottleneck. */
  readonly clientCpuCores: number
  /** CPU used by every other process on the machine meanwhile, in cores: noise. */
  readonly otherCpuCores: number
  readonly rssBytes: number
}

interface Sent {
  readonly dueAt: number
  readonly recorded: boolean
}

/** One keep-alive TLS connection with a minimal response reader (Content-Length bodies only). */
class Connection {
  readonly socket: TLSSocket
  onAnswer: (status: number, sent: Sent) => void = () => {}
  onFailure: (error: Error, sent: Sent | undefined) => void = () => {}
  #sent: Sent | undefined
  #head: Buffer = Buffer.alloc(0)
  #remaining = -1

  constructor(socket: TLSSocket) {
    this.socket = socket
    let status = 0
    socket.on('data', (chunk: Buffer) => {
      if (this.#remaining < 0) {
        this.#head = this.#head.length === 0 ? chunk : Buffer.concat([this.#head, chunk])
        const end = this.#head.indexOf('\r\n\r\n')
        if (end < 0) return
        const head = this.#head.toString('latin1', 0, end)
        status = Number(head.slice(9, 12))
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
        if (!length) {
          this.#fail(new Error(`response without content-length: ${head.slice(0, 200)}`))
          return
        }
        this.#remaining = Number(length[1]) - (this.#head.length - end - 4)
        this.#head = Buffer.alloc(0)
      } else {
        this.#remaining -= chunk.length
      }
      if (this.#remaining > 0) return
      if (this.#remaining < 0) this.#fail(new Error('pipelined or oversized response'))
      const sent = this.#sent
      this.#sent = undefined
      this.#remaining = -1
      if (sent) this.onAnswer(status, sent)
    })
    socket.on('error', (error) => {
      this.#fail(error)
    })
    socket.on('close', () => {
      this.#fail(new Error('connection closed'))
    })
  }

  get busy(): boolean {
    return this.#sent !== undefined
  }

  send(request: Buffer, sent: Sent): void {
    this.#sent = sent
    this.socket.write(request)
  }

  #fail(error: Error): void {
    const sent = this.#sent
    this.#sent = undefined
    this.socket.destroy()
    this.onFailure(error, sent)
  }
}

function open(job: LoadJob): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: '127.0.0.1',
      port: job.port,
      ca: job.ca,
      ALPNProtocols: ['http/1.1'],
    })
    socket.setNoDelay(true)
    socket.once('secureConnect', () => {
      socket.off('error', reject)
      resolve(new Connection(socket))
    })
    socket.once('error', reject)
  })
}

/** Pre-encoded requests; `next()` yields the following one with its placeholders filled in. */
function requests(job: LoadJob): () => Buffer {
  const templates = job.bodies.map((text) => {
    const body = Buffer.from(text)
    const head =
      `POST ${job.path} HTTP/1.1\r\nHost: 127.0.0.1:${job.port}\r\n` +
      `Content-Type: application/json\r\nAccept: application/json, */*\r\n` +
      `Content-Length: ${body.length}\r\n\r\n`
    const bytes = Buffer.concat([Buffer.from(head, 'latin1'), body])
    const offsets: number[] = []
    for (let at = bytes.indexOf(TOKEN); at >= 0; at = bytes.indexOf(TOKEN, at + TOKEN.length))
      offsets.push(at)
    return { bytes, offsets }
  })
  // A random start, so a later run does not repeat an earlier run's objects.
  let counter = Math.floor(Math.random() * 2 ** 32)
  let turn = 0
  return () => {
    const template = templates[turn++ % templates.length]!
    if (template.offsets.length === 0) return template.bytes
    // A copy: a buffer handed to write() must not change afterwards.
    const bytes = Buffer.from(template.bytes)
    const value = tokenValue(counter++)
    for (const at of template.offsets) bytes.write(value, at, 'latin1')
    return bytes
  }
}

/** Runs one measurement: connect, warm up, measure, wait for the requests in flight, close. */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const nextRequest = requests(job)
  const connections = await Promise.all(Array.from({ length: job.connections }, () => open(job)))
  const histogram = createHistogram()
  const idle: Connection[] = []
  const queue: number[] = []
  let recording = false
  let sending = true
  let answered = 0
  let errors = 0
  let inFlight = 0
  let windowEnd = Infinity
  let finished: () => void = () => {}
  const drained = new Promise<void>((resolve) => (finished = resolve))

  const next = (connection: Connection): void => {
    if (!sending || connection.socket.destroyed) {
      if (inFlight === 0 && !sending) finished()
      return
    }
    if (job.rate === undefined) dispatch(connection, performance.now())
    else if (queue.length > 0) dispatch(connection, queue.shift()!)
    else idle.push(connection)
  }
  const dispatch = (connection: Connection, dueAt: number): void => {
    inFlight++
    connection.send(nextRequest(), { dueAt, recorded: recording })
  }
  for (const connection of connections) {
    connection.onAnswer = (status, sent) => {
      inFlight--
      const now = performance.now()
      if (status !== 200) errors++
      else if (sent.recorded && now <= windowEnd) {
        answered++
        histogram.record(Math.max(1, Math.round((now - sent.dueAt) * 1e6)))
      }
      next(connection)
    }
    connection.onFailure = (error, sent) => {
      if (sent) inFlight--
      if (sending) {
        errors++
        process.stderr.write(`load: ${error.message}\n`)
      }
      if (!sending && inFlight === 0) finished()
    }
  }

  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  if (job.rate === undefined) {
    for (const connection of connections) next(connection)
  } else {
    idle.push(...connections)
    let issued = 0
    const interval = 1000 / job.rate
    const tick = (): void => {
      const now = performance.now()
      const due = Math.floor((now - started) / interval)
      for (; issued < due; issued++) {
        const connection = idle.pop()
        if (connection) dispatch(connection, now)
        else queue.push(now)
      }
      timer = setTimeout(tick, 1)
    }
    tick()
  }

  await new Promise((resolve) => setTimeout(resolve, job.warmupMs))
  const cpuAtStart = cpuSeconds(job.serverPid)
  const clientAtStart = process.cpuUsage()
  const machineAtStart = machineBusySeconds()
  const windowStart = performance.now()
  windowEnd = windowStart + job.durationMs
  recording = true
  await new Promise((resolve) => setTimeout(resolve, job.durationMs))
  const cpuAtEnd = cpuSeconds(job.serverPid)
  const client = process.cpuUsage(clientAtStart)
  const machine = machineBusySeconds() - machineAtStart
  const seconds = (performance.now() - windowStart) / 1000
  sending = false
  clearTimeout(timer)
  const unsent = queue.length
  queue.length = 0
  if (inFlight > 0) await drained
  const { rss } = memory(job.serverPid)
  for (const connection of connections) connection.socket.end()

  const ms = (ns: number): number => ns / 1e6
  const count = histogram.count
  return {
    requests: answered,
    errors,
    seconds,
    throughput: answered / seconds,
    unsent,
    latencyMs: {
      p50: count ? ms(histogram.percentile(50)) : Number.NaN,
      p90: count ? ms(histogram.percentile(90)) : Number.NaN,
      p99: count ? ms(histogram.percentile(99)) : Number.NaN,
      p999: count ? ms(histogram.percentile(99.9)) : Number.NaN,
      max: count ? ms(histogram.max) : Number.NaN,
      mean: count ? ms(histogram.mean) : Number.NaN,
    },
    cpuUsPerRequest: answered > 0 ? ((cpuAtEnd - cpuAtStart) * 1e6) / answered : Number.NaN,
    cpuCores: (cpuAtEnd - cpuAtStart) / seconds,
    clientCpuCores: (client.user + client.system) / 1e6 / seconds,
    otherCpuCores: Math.max(
      0,
      (machine - (cpuAtEnd - cpuAtStart) - (client.user + client.system) / 1e6) / seconds,
    ),
    rssBytes: rss,
  }
}

// As a forked worker: one job per message, answered in order; exit with the parent.
if (process.send !== undefined) {
  process.on('disconnect', () => process.exit(0))
  setTimeout(() => process.exit(0), 30 * 60_000).unref()
  process.on('message', (job: LoadJob) => {
    runLoad(job).then(
      (result) => process.send?.({ ok: true, result }),
      (error: unknown) => process.send?.({ ok: false, message: String(error) }),
    )
  })
}
