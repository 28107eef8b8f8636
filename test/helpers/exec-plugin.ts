/**
 * A credential plugin for tests: a small node script a kubeconfig's `exec` runs. Each run appends
 * a JSON line to its log (its pid, KUBERNETES_EXEC_INFO, its arguments, PLUGIN_SETTING), then:
 * - `token`: prints an ExecCredential with the token `exec-token-<run>` (`EXPIRES_MS` from now,
 *   when that is set);
 * - `hang`: says on stderr that it waits, starts a child that sleeps for ever (its pid logged
 *   too) and never answers;
 * - `token-then-hang`: `token` on its first run, `hang` on every later one;
 * - `fail`: complains on stderr, a token in its last line, and exits 3.
 * Also: whether a process is still alive (a zombie is not), and waiting until none is.
 */

import { readFile } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

const SCRIPT = `
import { appendFileSync, readFileSync, existsSync } from 'node:fs'
import { spawn } from 'node:child_process'
const [mode, log, ...args] = process.argv.slice(2)
const run = (existsSync(log) ? readFileSync(log, 'utf8').split('\\n').filter(Boolean).length : 0) + 1
const note = (entry) => appendFileSync(log, JSON.stringify(entry) + '\\n')
const hang = () => {
  process.stderr.write('waiting for a login\\n')
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
  note({ run, pid: process.pid, child: child.pid })
  setInterval(() => {}, 1000)
}
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO ?? 'null')
if (mode === 'hang' || (mode === 'token-then-hang' && run > 1)) hang()
else if (mode === 'fail') {
  note({ run, pid: process.pid })
  process.stderr.write('looking up the cluster\\nerror: token eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln expired\\n\\n')
  process.exitCode = 3
}
else {
  note({ run, pid: process.pid, info, args, setting: process.env.PLUGIN_SETTING ?? null })
  const expires = process.env.EXPIRES_MS
  const status = { token: 'exec-token-' + run }
  if (expires) status.expirationTimestamp = new Date(Date.now() + Number(expires)).toISOString()
  process.stdout.write(JSON.stringify({ apiVersion: info?.apiVersion, kind: 'ExecCredential', status }))
}
`

export interface PluginRunLog {
  readonly run: number
  readonly pid: number
  /** The sleeping child of a hanging run. */
  readonly child?: number
  readonly info?: unknown
  readonly args?: string[]
  readonly setting?: string | null
}

/**
 * The kubeconfig `exec` that runs the script in `dir` (`files` writes it there) in `mode`,
 * logging to `<name>.log`; `exec` is set over the defaults (v1, Never), its `args` appended.
 */
export function execPlugin(
  dir: string,
  mode: 'token' | 'hang' | 'token-then-hang' | 'fail',
  exec: Record<string, unknown> = {},
  name: string = mode,
): {
  readonly exec: Record<string, unknown>
  readonly log: string
  readonly files: Record<string, string>
} {
  const log = join(dir, `${name}.log`)
  return {
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1',
      interactiveMode: 'Never',
      command: process.execPath,
      ...exec,
      args: [join(dir, 'plugin.mjs'), mode, log, ...((exec['args'] as string[] | undefined) ?? [])],
    },
    log,
    files: { 'plugin.mjs': SCRIPT },
  }
}

export async function runsOf(log: string): Promise<PluginRunLog[]> {
  if (!existsSync(log)) return []
  const text = await readFile(log, 'utf8')
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as PluginRunLog)
}

/** Until the log holds `count` runs (a hanging run logs itself once its child is started). */
export async function waitForRuns(log: string, count: number, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const runs = await runsOf(log)
    if (runs.length >= count) return runs
    if (Date.now() > deadline) throw new Error(`${runs.length} of ${count} plugin runs logged`)
    await sleep(20)
  }
}

/** Whether `pid` runs: it exists and is no zombie (one whose parent has not reaped it yet). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

/** The pids still alive after up to `timeoutMs`. */
export async function survivors(pids: readonly number[], timeoutMs = 5_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const living = pids.filter(alive)
    if (living.length === 0 || Date.now() > deadline) return living
    await sleep(20)
  }
}
