/**
 * `serve` run in-process on free loopback ports, stopped again at once if it starts: for starts
 * meant to fail, whose one line and exit code are the point.
 */

import { PassThrough, Readable } from 'node:stream'
import { run } from '../../src/cli/program.ts'
import type { CliIo } from '../../src/cli/io.ts'
import { freePort } from './ports.ts'

export interface ServeOutcome {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  /** The service started (and was stopped again at once): the start did not fail. */
  readonly started: boolean
}

export async function serveInProcess(
  args: readonly string[],
  io: Partial<Pick<CliIo, 'env' | 'execTimeoutMs' | 'serviceAccountDir'>> = {},
): Promise<ServeOutcome> {
  const [port, probePort] = [await freePort(), await freePort()]
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const out: string[] = []
  const err: string[] = []
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString('utf8')))
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString('utf8')))
  let started = false
  const code = await run(
    [
      'serve',
      ...['--host', '127.0.0.1', '--port', String(port)],
      ...['--probe-host', '127.0.0.1', '--probe-port', String(probePort)],
      ...['--shutdown-delay', '0s'],
      ...args,
    ],
    {
      stdout,
      stderr,
      stdin: Readable.from(['']),
      env: {},
      ...io,
      runUntilSignal: (close) => {
        started = true
        void close()
      },
    },
  )
  return { code, stdout: out.join(''), stderr: err.join(''), started }
}
