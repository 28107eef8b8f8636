/**
 * Counts writes per object and field manager over a window, from the watch stream: every event is
 * one write, attributed to the managers whose managedFields entry it changed (the newest entry
 * when a manager wrote twice within the same second, which managedFields cannot tell apart).
 * Pure helpers (`writersOf`) are exported beside the watching.
 */

import https from 'node:https'
import type { ControlPlane } from './control-plane.ts'

type Any = Record<string, any>

/** `kind ns/name` → field manager → writes. */
export type WriteCounts = Map<string, Map<string, number>>

export interface WatchedResource {
  readonly kind: string
  /** Cluster-wide list path, e.g. `/apis/apps/v1/deployments`. */
  readonly path: string
}

/** Which managers a write changed, given the managedFields before and after it. */
export function writersOf(before: unknown, after: unknown): string[] {
  const entries = (fields: unknown): Any[] => (Array.isArray(fields) ? (fields as Any[]) : [])
  const id = (entry: Any) =>
    `${entry['manager']}|${entry['operation']}|${entry['subresource'] ?? ''}`
  const previous = new Map(entries(before).map((entry) => [id(entry), entry['time']]))
  const changed = entries(after)
    .filter((entry) => previous.get(id(entry)) !== entry['time'])
    .map((entry) => String(entry['manager']))
  if (changed.length > 0) return [...new Set(changed)]
  const newest = entries(after).reduce<string | undefined>(
    (latest, entry) =>
      typeof entry['time'] === 'string' && (latest === undefined || entry['time'] > latest)
        ? entry['time']
        : latest,
    undefined,
  )
  const same = entries(after)
    .filter((entry) => entry['time'] === newest)
    .map((entry) => String(entry['manager']))
  return same.length > 0 ? [...new Set(same)] : ['(unknown)']
}

/** Watches `resources` for `ms` and counts every write by object and manager. */
export async function countWrites(
  plane: ControlPlane,
  resources: readonly WatchedResource[],
  ms: number,
): Promise<WriteCounts> {
  const counts: WriteCounts = new Map()
  const stop = new AbortController()
  const timer = setTimeout(() => {
    stop.abort()
  }, ms)
  try {
    await Promise.all(
      resources.map(async (resource) => {
        const list = JSON.parse(await request(plane, resource.path, stop.signal)) as Any
        const managed = new Map<string, unknown>()
        for (const item of (list['items'] ?? []) as Any[])
          managed.set(keyOf(resource.kind, item), item['metadata']?.managedFields)
        let rv = String(list['metadata']?.resourceVersion ?? '')
        const onEvent = (event: Any) => {
          const object = event['object'] as Any
          if (event['type'] === 'ERROR')
            throw new Error(`watch ${resource.path}: ${object['message']}`)
          rv = String(object['metadata']?.resourceVersion ?? rv)
          if (event['type'] === 'BOOKMARK') return
          const key = keyOf(resource.kind, object)
          const fields = object['metadata']?.managedFields
          const writers =
            event['type'] === 'DELETED' ? ['(delete)'] : writersOf(managed.get(key), fields)
          managed.set(key, fields)
          const byManager = counts.get(key) ?? new Map<string, number>()
          for (const writer of writers) byManager.set(writer, (byManager.get(writer) ?? 0) + 1)
          counts.set(key, byManager)
        }
        // The API server may end a watch at any time: resume from the last event seen, as a
        // reflector does, until the window closes.
        while (!stop.signal.aborted) {
          const path = `${resource.path}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`
          await stream(plane, path, stop.signal, onEvent)
        }
      }),
    )
  } finally {
    clearTimeout(timer)
  }
  return counts
}

/** Total writes of one manager over all objects. */
export function writesBy(counts: WriteCounts, manager: string): number {
  let total = 0
  for (const byManager of counts.values()) total += byManager.get(manager) ?? 0
  return total
}

/** Total writes to one object. */
export function writesTo(counts: WriteCounts, key: string): number {
  let total = 0
  for (const n of counts.get(key)?.values() ?? []) total += n
  return total
}

function keyOf(kind: string, object: Any): string {
  return `${kind} ${object['metadata']?.namespace ?? ''}/${object['metadata']?.name ?? ''}`
}

function options(plane: ControlPlane, signal: AbortSignal): https.RequestOptions {
  return {
    ca: plane.pki.caPem,
    cert: plane.pki.adminCertPem,
    key: plane.pki.adminKeyPem,
    signal,
    headers: { accept: 'application/json' },
  }
}

function request(plane: ControlPlane, path: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    https
      .get(`${plane.server}${path}`, options(plane, signal), (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('error', () => undefined)
        response.once('close', () => {
          if (response.complete) resolve(Buffer.concat(chunks).toString('utf8'))
          else reject(new Error(`GET ${path}: no complete answer`))
        })
      })
      .on('error', reject)
  })
}

/** Streams watch events until `signal` ends it or the server closes it; an event handler's throw rejects. */
function stream(
  plane: ControlPlane,
  path: string,
  signal: AbortSignal,
  onEvent: (event: Any) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      resolve()
    }
    https
      .get(`${plane.server}${path}`, options(plane, signal), (response) => {
        let buffered = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          buffered += chunk
          let newline
          while ((newline = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, newline)
            buffered = buffered.slice(newline + 1)
            if (line.trim() === '') continue
            try {
              onEvent(JSON.parse(line) as Any)
            } catch (error) {
              response.destroy()
              reject(error instanceof Error ? error : new Error(String(error)))
            }
          }
        })
        // An aborted response may close without 'end' or 'error': settle on 'close'.
        response.on('error', () => undefined)
        response.once('close', done)
      })
      .on('error', (error) => {
        if (signal.aborted) done()
        else reject(error)
      })
  })
}
