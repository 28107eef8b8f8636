/**
 * Reads a V8 `.cpuprofile` (from `node --cpu-prof`) into self-time per function, with dist/
 * positions mapped back to src/ through the emitted source maps.
 */

import { readFileSync } from 'node:fs'
import { SourceMap } from 'node:module'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'

interface ProfileNode {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
    readonly columnNumber: number
  }
  readonly children?: readonly number[]
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[]
  readonly startTime: number
  readonly endTime: number
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
}

export interface HotFunction {
  readonly name: string
  /** `src/…/file.ts:line`, a package path, or a Node internal. */
  readonly where: string
  readonly selfMs: number
  /** Share of the busy (non-idle) samples. */
  readonly share: number
  /** The nearest enclosing src/ function (by its first line) most of this time comes through. */
  readonly via?: string
}

export interface ProfileSummary {
  readonly busyMs: number
  readonly top: HotFunction[]
  /** Self time by where the code lives: src/, each package, Node internals, GC, native. */
  readonly byOrigin: { readonly origin: string; readonly share: number }[]
}

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const maps = new Map<string, SourceMap | undefined>()

function sourceMapOf(file: string): SourceMap | undefined {
  if (!maps.has(file)) {
    try {
      maps.set(file, new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8'))))
    } catch {
      maps.set(file, undefined)
    }
  }
  return maps.get(file)
}

function locate(frame: ProfileNode['callFrame']): string {
  const { url, lineNumber, columnNumber } = frame
  if (url === '') return '(native)'
  if (!url.startsWith('file://')) return `${url}:${lineNumber + 1}`
  const file = fileURLToPath(url)
  const entry = sourceMapOf(file)?.findEntry(lineNumber, columnNumber)
  if (entry && 'originalSource' in entry) {
    const source = entry.originalSource.startsWith('file://')
      ? fileURLToPath(entry.originalSource)
      : new URL(entry.originalSource, url).pathname
    return `${relative(ROOT, source)}:${entry.originalLine + 1}`
  }
  return `${relative(ROOT, file)}:${lineNumber + 1}`
}

function originOf(where: string, name: string): string {
  if (name === '(garbage collector)') return 'GC'
  if (name === '(program)') return '(program): native, unattributed'
  if (where.startsWith('src/') || where.startsWith('dist/')) return 'mcp-admission (src/)'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)
  if (pkg) return pkg[1]!
  if (where.startsWith('node:')) return 'Node internals (JS)'
  return 'native (TLS, JSON, V8 builtins)'
}

/**
 * Summarises a profile file: the top `count` functions by self time, and self time by origin.
 * `window` keeps only the samples between `fromEndUs` and `toEndUs` microseconds before the
 * profile's end (the measured load, without start-up and shutdown).
 */
export function summariseProfile(
  path: string,
  count = 10,
  window?: { readonly fromEndUs: number; readonly toEndUs: number },
): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parents = new Map<number, number>()
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parents.set(child, node.id)
  const selfUs = new Map<number, number>()
  let at = profile.startTime
  const from = profile.endTime - (window?.fromEndUs ?? Infinity)
  const to = profile.endTime - (window?.toEndUs ?? 0)
  // timeDeltas[i] is the time since the previous sample; timeDeltas[i + 1] is how long i lasted.
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0
    if (at < from || at > to) continue
    const id = profile.samples[i]!
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0))
  }
  const viaOf = (id: number): string | undefined => {
    for (let p = parents.get(id); p !== undefined; p = parents.get(p)) {
      const where = locate(byId.get(p)!.callFrame)
      if (where.startsWith('src/')) return `${byId.get(p)!.callFrame.functionName} ${where}`
    }
    return undefined
  }
  const functions = new Map<
    string,
    { name: string; where: string; us: number; via: Map<string, number> }
  >()
  let busyUs = 0
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame
    if (frame.functionName === '(idle)') continue
    busyUs += us
    const name = frame.functionName === '' ? '(anonymous)' : frame.functionName
    const where = locate(frame)
    const key = `${name} ${where}`
    const entry = functions.get(key) ?? { name, where, us: 0, via: new Map<string, number>() }
    entry.us += us
    const via = where.startsWith('src/') ? undefined : viaOf(id)
    if (via !== undefined) entry.via.set(via, (entry.via.get(via) ?? 0) + us)
    functions.set(key, entry)
  }
  const sorted = [...functions.values()].sort((a, b) => b.us - a.us)
  const origins = new Map<string, number>()
  for (const f of sorted) {
    const origin = originOf(f.where, f.name)
    origins.set(origin, (origins.get(origin) ?? 0) + f.us)
  }
  return {
    busyMs: busyUs / 1000,
    top: sorted.slice(0, count).map((f) => {
      const via = [...f.via].sort((a, b) => b[1] - a[1])[0]
      return {
        name: f.name,
        where: f.where,
        selfMs: f.us / 1000,
        share: f.us / busyUs,
        ...(via ? { via: `${via[0]} (${Math.round((via[1] / f.us) * 100)} %)` } : {}),
      }
    }),
    byOrigin: [...origins]
      .sort((a, b) => b[1] - a[1])
      .map(([origin, us]) => ({ origin, share: us / busyUs })),
  }
}
