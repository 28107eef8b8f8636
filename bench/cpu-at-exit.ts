/**
 * Loaded with `node --import` into a process the benchmark times (bench/check-crds.ts,
 * bench/audit.ts): at exit it writes the process's CPU time (user + system, every thread, in µs)
 * and its peak resident set (VmHWM, in bytes) to file descriptor 3, as `<cpu> <peak>`. Wall-clock
 * time on a shared machine does not show the first; the second is gone once the process is.
 */

import { readFileSync, writeSync } from 'node:fs'

process.once('exit', () => {
  const { user, system } = process.cpuUsage()
  const status = readFileSync('/proc/self/status', 'utf8')
  const peakKiB = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN)
  writeSync(3, `${user + system} ${peakKiB * 1024}\n`)
})
