/**
 * What mcp-admission's own log says about a run: when each watched resource synced (seconds after
 * the process started), and any warnings or errors. The log without its per-review lines is kept
 * beside the results, for reading what the figures cannot say.
 */

import { readFile, writeFile } from 'node:fs/promises'

export interface ServiceLogSummary {
  /** Each reflector's first complete list: resource, objects, seconds after start. */
  readonly synced: {
    readonly resource: string
    readonly objects: number
    readonly seconds: number
  }[]
  /** Distinct warning and error messages, with how often each came. */
  readonly warnings: { readonly message: string; readonly count: number }[]
}

const PER_REVIEW = /"msg":"admission (patched|allowed|denied)"/

/**
 * Reads the log of a stopped instance, started at `startedAtMs` (epoch ms), and writes it without
 * the per-review lines to `keepAs`.
 */
export async function summariseServiceLog(
  logFile: string,
  startedAtMs: number,
  keepAs: string,
): Promise<ServiceLogSummary> {
  const lines = (await readFile(logFile, 'utf8').catch(() => '')).split('\n')
  const kept = lines.filter((line) => !PER_REVIEW.test(line))
  await writeFile(keepAs, kept.join('\n'))
  const synced: ServiceLogSummary['synced'][number][] = []
  const warnings = new Map<string, number>()
  for (const line of kept) {
    if (!line.startsWith('{')) continue
    let entry: {
      level?: unknown
      time?: unknown
      msg?: unknown
      resource?: unknown
      objects?: unknown
    }
    try {
      entry = JSON.parse(line) as typeof entry
    } catch {
      continue
    }
    const time = typeof entry.time === 'string' ? Date.parse(entry.time) : Number(entry.time)
    if (entry.msg === 'synced' && typeof entry.resource === 'string')
      synced.push({
        resource: entry.resource,
        objects: Number(entry.objects),
        seconds: (time - startedAtMs) / 1000,
      })
    if (
      entry.level === 'warn' ||
      entry.level === 'error' ||
      entry.level === 40 ||
      entry.level === 50
    ) {
      const message = String(entry.msg)
      warnings.set(message, (warnings.get(message) ?? 0) + 1)
    }
  }
  return {
    synced,
    warnings: [...warnings].map(([message, count]) => ({ message, count })),
  }
}
