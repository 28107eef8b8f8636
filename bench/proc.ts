/** Reads a process's CPU time and memory from /proc (Linux), as the kernel accounts them. */

import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100

/** User plus system CPU seconds the process has used so far (all its threads). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name may hold spaces; the fields after it are space-separated.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND
}

/** Resident set size now (`VmRSS`) and its peak (`VmHWM`), in bytes. */
export function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)
    return match ? Number(match[1]) * 1024 : Number.NaN
  }
  return { rss: kib('VmRSS'), peak: kib('VmHWM') }
}

/** The pids of a process's direct children. */
export function childrenOf(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()
    return text === '' ? [] : text.split(' ').map(Number)
  } catch {
    return []
  }
}

/** CPU seconds the whole machine has spent busy so far (all CPUs; idle, iowait and steal excluded). */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!
  const [user, nice, system, , , irq, softirq] = line.split(/\s+/).slice(1).map(Number)
  return (
    ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)) /
    CLOCK_TICKS_PER_SECOND
  )
}
