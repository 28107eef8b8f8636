/**
 * CPU time of the benchmark's own processes (kube-apiserver, etcd, mcp-admission, the writer
 * itself) over a stretch of the run, and what the rest of the machine used meanwhile: the
 * machine is shared, and a figure taken while other work ran is worth less. CPU per write also
 * says what the webhook costs the API server independently of how busy the machine was.
 */

import { readFileSync } from 'node:fs'
import { childrenOf, cpuSeconds, machineBusySeconds } from '../proc.ts'
import { PEER } from './peer.ts'

export interface CpuUse {
  readonly seconds: number
  /** CPU seconds per process name (`kube-apiserver`, `etcd`, `mcp-admission`, `go-peer`, `bench`). */
  readonly byProcess: Readonly<Record<string, number>>
  /** Cores used by everything else on the machine, on average. */
  readonly otherCores: number
}

function nameOf(pid: number): string {
  try {
    const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
    return comm === 'node' || comm === 'MainThread' ? 'mcp-admission' : comm
  } catch {
    return 'gone'
  }
}

const MEASURED = new Set(['kube-apiserver', 'etcd', 'mcp-admission', PEER])

function snapshot(): { at: number; machine: number; byPid: Map<number, [string, number]> } {
  const byPid = new Map<number, [string, number]>()
  for (const pid of childrenOf(process.pid)) {
    const name = nameOf(pid)
    if (MEASURED.has(name)) {
      try {
        byPid.set(pid, [name, cpuSeconds(pid)])
      } catch {
        // ended meanwhile
      }
    }
  }
  byPid.set(process.pid, ['bench', cpuSeconds(process.pid)])
  return { at: performance.now(), machine: machineBusySeconds(), byPid }
}

/** Starts measuring; call the result to get the CPU used since. */
export function startMeter(): () => CpuUse {
  const before = snapshot()
  return () => {
    const after = snapshot()
    const byProcess: Record<string, number> = {}
    let ours = 0
    for (const [pid, [name, end]] of after.byPid) {
      const start = before.byPid.get(pid)?.[1] ?? 0
      byProcess[name] = (byProcess[name] ?? 0) + (end - start)
      ours += end - start
    }
    const seconds = (after.at - before.at) / 1000
    const other = Math.max(0, after.machine - before.machine - ours)
    return { seconds, byProcess, otherCores: seconds > 0 ? other / seconds : 0 }
  }
}
