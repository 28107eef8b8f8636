/**
 * Loaded with `node --import` into a process the benchmark times (bench/check-crds.ts): at exit it
 * writes the process's CPU time (user + system, every thread, in µs) to file descriptor 3, which
 * wall-clock time on a shared machine does not show.
 */

import { writeSync } from 'node:fs'

process.once('exit', () => {
  const { user, system } = process.cpuUsage()
  writeSync(3, `${user + system}\n`)
})
