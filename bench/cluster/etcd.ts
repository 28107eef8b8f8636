/**
 * Bulk storage for the large populations: objects written straight into the API server's etcd,
 * in the API server's own storage layout (`/registry/<group>/<resource>/<namespace>/<name>`, JSON,
 * which its storage decoder reads beside protobuf), through etcd's JSON gateway, 128 puts per
 * transaction. The API server's watch cache takes them from etcd's watch like any other write, so
 * they are listed, watched and read exactly as objects created through it.
 *
 * Why: through the REST API a custom resource costs the API server a few milliseconds of CPU to
 * create (decoding, schema validation, managed fields, encoding), so 200,000 objects would take
 * most of the run's time budget on a two-core machine. The first size is still created through
 * the API server, and its rate reported.
 */

import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { childrenOf } from '../proc.ts'
import type { ApiClient } from './client.ts'
import { must } from './client.ts'

/** etcd's default `--max-txn-ops`. */
const OPS_PER_TXN = 128
const TXNS_IN_FLIGHT = 4

/** The etcd the API server started by this process uses, read from its command line. */
export function etcdUrlOfApiServer(): string {
  for (const pid of childrenOf(process.pid)) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      const flag = args.find((arg) => arg.startsWith('--etcd-servers='))
      if (flag) return flag.slice('--etcd-servers='.length).split(',')[0]!
    } catch {
      // ended meanwhile
    }
  }
  throw new Error('no kube-apiserver child with --etcd-servers')
}

/** The storage key of a namespaced object of `resource` (plural) in `group` ('' for core). */
export function storageKey(
  group: string,
  resource: string,
  namespace: string,
  name: string,
): string {
  return `/registry/${group === '' ? '' : `${group}/`}${resource}/${namespace}/${name}`
}

/**
 * `managedFields` as the API server records a create by `manager`: every field set, maps by key,
 * lists whole (the fixtures' CRDs and ConfigMap data have no keyed lists). Stored objects carry
 * them, so list pages are as large as for objects created through the API.
 */
function managedFields(object: KubeObject, manager: string, time: string): unknown[] {
  const fields = (value: unknown): Record<string, unknown> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return {}
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [`f:${key}`, fields(inner)]),
    )
  }
  const { metadata, ...rest } = object
  const described = {
    ...rest,
    apiVersion: undefined,
    kind: undefined,
    metadata: { labels: metadata?.labels, annotations: metadata?.annotations },
  }
  // Through JSON: undefined fields go, as they would from the request.
  const cleaned = JSON.parse(JSON.stringify(described)) as Record<string, unknown>
  return [
    {
      manager,
      operation: 'Update',
      apiVersion: object.apiVersion,
      time,
      fieldsType: 'FieldsV1',
      fieldsV1: fields(cleaned),
    },
  ]
}

export interface Stored {
  readonly key: string
  readonly object: KubeObject
}

/** `object` completed with what the API server would have set on create. */
export function asCreated(object: KubeObject, time: string, generation: boolean): KubeObject {
  const metadata = {
    ...object.metadata,
    uid: randomUUID(),
    creationTimestamp: time,
    ...(generation ? { generation: 1 } : {}),
    managedFields: managedFields(object, 'toolhive-operator', time),
  }
  return { ...object, metadata }
}

/** Puts every object, several transactions at a time; returns how many, and etcd's revision. */
export async function putAll(
  etcdUrl: string,
  objects: Iterable<Stored>,
): Promise<{ count: number; revision: number }> {
  const b64 = (text: string) => Buffer.from(text).toString('base64')
  let batch: unknown[] = []
  let count = 0
  let failure: Error | undefined
  let revision = 0
  const inFlight = new Set<Promise<void>>()
  const send = (ops: unknown[]): void => {
    const done = (async () => {
      const response = await fetch(`${etcdUrl}/v3/kv/txn`, {
        method: 'POST',
        body: JSON.stringify({ success: ops }),
        signal: AbortSignal.timeout(60_000),
      })
      if (!response.ok)
        throw new Error(`etcd txn: HTTP ${response.status}: ${await response.text()}`)
      const answer = (await response.json()) as { header?: { revision?: string } }
      revision = Math.max(revision, Number(answer.header?.revision ?? 0))
    })().catch((error: unknown) => {
      failure ??= error instanceof Error ? error : new Error(String(error))
    })
    inFlight.add(done)
    void done.finally(() => inFlight.delete(done))
  }
  for (const { key, object } of objects) {
    if (failure) break
    batch.push({ requestPut: { key: b64(key), value: b64(JSON.stringify(object)) } })
    count++
    if (batch.length === OPS_PER_TXN) {
      send(batch)
      batch = []
      if (inFlight.size >= TXNS_IN_FLIGHT) await Promise.race(inFlight)
    }
  }
  if (batch.length > 0 && !failure) send(batch)
  await Promise.all(inFlight)
  if (failure) throw failure
  return { count, revision }
}

/**
 * Waits until the API server's watch cache of `collection` has reached etcd's `revision` and lists
 * at least `expected` objects: the cache takes in bulk writes from etcd's watch some time after
 * they are stored, and until then paginated lists (and mcp-admission's start) would wait on it.
 */
export async function waitUntilCached(
  api: ApiClient,
  collection: string,
  revision: number,
  expected: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = performance.now() + timeoutMs
  const query = `limit=1&resourceVersion=${revision}&resourceVersionMatch=NotOlderThan`
  let last = ''
  for (;;) {
    const response = await api.send('GET', `${collection}?${query}`)
    if (response.status === 200) {
      const page = JSON.parse(response.body) as {
        items: unknown[]
        metadata: { remainingItemCount?: number }
      }
      const listed = page.items.length + (page.metadata.remainingItemCount ?? 0)
      if (listed >= expected) return
      last = `lists ${listed} of ${expected}`
    } else if (response.status === 504 || response.status === 429) {
      // "Too large resource version": the cache has not caught up yet.
      last = response.body.slice(0, 200)
    } else must(response, `list ${collection}`)
    if (performance.now() > deadline)
      throw new Error(`the API server's cache of ${collection} did not catch up: ${last}`)
    await sleep(500)
  }
}
