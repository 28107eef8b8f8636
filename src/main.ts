#!/usr/bin/env node
// The process entry point: the only module with process-level side effects (signals, exit code).

import closeWithGrace from 'close-with-grace'
import { run } from './cli/program.ts'
import { endPluginProcesses } from './cluster/exec-plugin.ts'

/** Upper bound on a graceful shutdown before the process exits anyway. */
const SHUTDOWN_LIMIT_MS = 60_000

// A kubeconfig's exec plugin runs in a process group of its own (cluster/exec-plugin.ts), which
// no signal to this process reaches, so it is ended when this process ends: on exit, and on a
// signal that ends it at once, as SIGTERM and SIGINT do by default until `serve` is up (and all
// along for a one-shot command: `check --kubeconfig` waiting for a plugin, then Ctrl-C).
process.on('exit', endPluginProcesses)
const EARLY_SIGNALS = ['SIGTERM', 'SIGINT'] as const
const endAtOnce = (signal: NodeJS.Signals) => {
  endPluginProcesses()
  stopEndingAtOnce()
  // The default action again: the process ends by the signal, as it would have without us.
  process.kill(process.pid, signal)
}
const stopEndingAtOnce = () => {
  for (const signal of EARLY_SIGNALS) process.removeListener(signal, endAtOnce)
}
for (const signal of EARLY_SIGNALS) process.on(signal, endAtOnce)

const exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  runUntilSignal: (close) => {
    // From here a signal closes gracefully; the exit that follows ends any plugin.
    stopEndingAtOnce()
    closeWithGrace({ delay: SHUTDOWN_LIMIT_MS }, async ({ signal, err }) => {
      if (err) process.stderr.write(`mcp-admission: fatal: ${err.stack ?? err.message}\n`)
      else process.stderr.write(`mcp-admission: ${signal ?? 'shutdown'} received, shutting down\n`)
      await close()
    })
  },
})
process.exitCode = exitCode
