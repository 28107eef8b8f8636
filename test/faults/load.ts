/** Starts the load worker in its own process: its progress while it runs, its summary at the end. */

import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { LoadSummary } from './load-worker.ts'

const WORKER = fileURLToPath(new URL('./load-worker.ts', import.meta.url))

export interface LoadOptions {
  readonly url: string
  readonly caFile: string
  readonly reviewFile: string
  readonly concurrency: number
  /** The load stops by itself after this long (or earlier, on `stop`). */
  readonly durationMs: number
  /** Requests per second in all; unpaced (saturating) when absent. */
  readonly rate?: number
}

export interface Load {
  /** The worker's summary once it has stopped. */
  readonly done: Promise<LoadSummary>
  /** The counts so far (every 100 ms); zeros before the first report. */
  progress: () => LoadSummary
  /** Resolves true once `predicate` holds for the counts so far; false after `timeoutMs` or the end. */
  until: (predicate: (progress: LoadSummary) => boolean, timeoutMs?: number) => Promise<boolean>
  /** Ends the load now (requests in flight complete) and resolves with the summary. */
  stop: () => Promise<LoadSummary>
}

export function startLoad(options: LoadOptions): Load {
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
  let latest: LoadSummary = {
    ok: 0,
    failed: 0,
    refused: 0,
    failures: {},
    closing: 0,
    retriedIdleClose: 0,
  }
  let ended = false
  let partial = ''
  const lines: string[] = []
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n')
    partial = parts.pop() ?? ''
    for (const line of parts) {
      if (line.startsWith('progress ')) latest = JSON.parse(line.slice(9)) as LoadSummary
      else if (line.trim() !== '') lines.push(line)
    }
  })
  const done = new Promise<LoadSummary>((resolve, reject) => {
    // Bounded: the worker stops at its deadline; this is the backstop.
    const timer = setTimeout(() => child.kill('SIGKILL'), durationMs + 20_000)
    child.once('close', (code) => {
      ended = true
      clearTimeout(timer)
      const text = [...lines, partial].join('\n').trim()
      if (code === 0 && text !== '') resolve((latest = JSON.parse(text) as LoadSummary))
      else reject(new Error(`load worker exited ${code}: ${text}`))
    })
  })
  // A load abandoned by a failing test must not end the runner with an unhandled rejection.
  done.catch(() => undefined)
  return {
    done,
    progress: () => latest,
    until: async (predicate, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs
      while (!ended && Date.now() < deadline) {
        if (predicate(latest)) return true
        await sleep(50)
      }
      return predicate(latest)
    },
    stop: () => {
      if (!ended) child.kill('SIGTERM')
      return done
    },
  }
}

/** Runs the load for its whole duration and resolves with its summary. */
export function runLoad(options: LoadOptions): Promise<LoadSummary> {
  return startLoad(options).done
}
