#!/usr/bin/env node
// The process entry point: the only module with process-level side effects (signals, exit code).

import closeWithGrace from 'close-with-grace'
import { run } from './cli/program.ts'

/** Upper bound on a graceful shutdown before the process exits anyway. */
const SHUTDOWN_LIMIT_MS = 60_000

const exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  runUntilSignal: (close) => {
    closeWithGrace({ delay: SHUTDOWN_LIMIT_MS }, async ({ signal, err }) => {
      if (err) process.stderr.write(`mcp-admission: fatal: ${err.stack ?? err.message}\n`)
      else process.stderr.write(`mcp-admission: ${signal ?? 'shutdown'} received, shutting down\n`)
      await close()
    })
  },
})
process.exitCode = exitCode
