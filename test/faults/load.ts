/** Starts the load worker in its own process and resolves with its summary. */

import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { LoadSummary } from './load-worker.ts'

const WORKER = fileURLToPath(new URL('./load-worker.ts', import.meta.url))

export function runLoad(options: {
  readonly url: string
  readonly caFile: string
  readonly reviewFile: string
  readonly concurrency: number
  readonly durationMs: number
  /** Requests per second in all; unpaced (saturating) when absent. */
  readonly rate?: number
}): Promise<LoadSummary> {
  const { url, caFile, reviewFile, concurrency, durationMs, rate } = options
  const args = [
    WORKER,
    url,
    caFile,
    reviewFile,
    String(concurrency),
    String(durationMs),
    ...(rate ? [String(rate)] : []),
  ]
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const chunks: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
  return new Promise((resolve, reject) => {
    // Bounded: the worker stops at its deadline; this is the backstop.
    const timer = setTimeout(() => child.kill('SIGKILL'), durationMs + 20_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString('utf8').trim()
      if (code === 0 && text !== '') resolve(JSON.parse(text) as LoadSummary)
      else reject(new Error(`load worker exited ${code}: ${text}`))
    })
  })
}
