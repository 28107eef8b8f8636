/**
 * A full, compacting garbage collection in a running mcp-admission, through the inspector
 * (started with `--inspect=127.0.0.1:0`, which prints its WebSocket address to the log): RSS and
 * heap right after it say how much of the memory at ready is live and how much is garbage the
 * collector had not yet returned.
 */

import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'

async function inspectorUrl(logFile: string, timeoutMs: number): Promise<string> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const text = await readFile(logFile, 'utf8').catch(() => '')
    const match = /Debugger listening on (ws:\/\/\S+)/.exec(text)
    if (match) return match[1]!
    if (performance.now() > deadline) throw new Error('no inspector address in the log')
    await sleep(100)
  }
}

export async function collectGarbage(logFile: string): Promise<void> {
  const socket = new WebSocket(await inspectorUrl(logFile, 10_000))
  try {
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => {
        resolve()
      }
      socket.onerror = () => {
        reject(new Error('cannot connect to the inspector'))
      }
    })
    const answered = new Promise<void>((resolve) => {
      socket.onmessage = (message) => {
        if (String(message.data).includes('"id":1')) resolve()
      }
    })
    socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }))
    await Promise.race([
      answered,
      sleep(60_000).then(() => {
        throw new Error('the inspector did not answer within 60 s')
      }),
    ])
  } finally {
    socket.close()
  }
}
