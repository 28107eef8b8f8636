/** Runs the CLI in-process with captured streams. */

import { PassThrough, Readable } from 'node:stream'
import { run } from '../../src/cli/program.ts'
import type { CliIo } from '../../src/cli/io.ts'

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * `io` sets what a test changes: the environment (empty unless given), the exec plugin's bound,
 * audit's least wait after a 429.
 */
export async function runCli(
  args: string[],
  stdin = '',
  io: Partial<Pick<CliIo, 'env' | 'execTimeoutMs' | 'proxyStepTimeoutMs' | 'throttleBackoff'>> = {},
): Promise<CliResult> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const out: string[] = []
  const err: string[] = []
  stdout.on('data', (c: Buffer) => out.push(c.toString('utf8')))
  stderr.on('data', (c: Buffer) => err.push(c.toString('utf8')))
  const code = await run(args, {
    stdout,
    stderr,
    stdin: Readable.from([stdin]),
    env: {},
    ...io,
    runUntilSignal: () => {
      throw new Error('serve is not run in-process by these tests')
    },
  })
  return { code, stdout: out.join(''), stderr: err.join('') }
}
