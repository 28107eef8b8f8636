/**
 * A collection read page by page (`limit`/`continue`), as kubectl's chunked lists read it: each
 * page is handed over and dropped before the next is asked for, so reading a cluster of any size
 * holds one page of raw objects at a time.
 */

import { isDnsLabel, isDnsSubdomain } from '../policy/kube/names.ts'
import { isRecord } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import type { KubeApi } from './kube-api.ts'

/** kubectl's chunk size. */
export const LIST_PAGE_SIZE = 500

/**
 * The most pages one list is read in: 5 million objects at kubectl's chunk size. A `continue`
 * token that never repeats but never ends (a broken or hostile API server) is stopped here, so a
 * read of a list always ends.
 */
export const MAX_LIST_PAGES = 10_000

/**
 * An item of a list that cannot be an object as stored: not an object, or without the
 * `metadata.name` (and in a namespaced list `metadata.namespace`) every stored object has, or with
 * one the API server would never have stored (a namespace that is not a DNS-1123 label, a name
 * that is not a DNS-1123 subdomain, as every kind read page by page requires). Only a broken or
 * hostile API server sends one; it is handed over with why, never dropped.
 */
export interface MalformedItem {
  /** Its position in the whole list, from 0. */
  readonly index: number
  /** What of its namespace and name could be read, else ''. */
  readonly namespace: string
  readonly name: string
  readonly problem: string
}

/** One page: its objects, and the items that are not objects as stored. */
export interface ListPage {
  readonly objects: KubeObject[]
  readonly malformed: MalformedItem[]
}

interface PageOptions {
  /** `apiVersion` and `kind` set on every item: the API server leaves them out of a list's items. */
  readonly apiVersion: string
  readonly kind: string
  /** Whether every item must name a namespace. */
  readonly namespaced: boolean
  readonly labelSelector?: string
  readonly limit?: number
  /** Ends the read, a page under way or a wait between pages (a deadline). */
  readonly signal?: AbortSignal | undefined
}

/**
 * The items of every page of `path`, one page at a time; throws KubeApiError on a failed read, and
 * an Error when the list does not end: a `continue` token seen before in it (the API server would
 * send the same pages again, forever) or more than MAX_LIST_PAGES pages.
 */
export async function* listPages(
  api: Pick<KubeApi, 'get'>,
  path: string,
  options: PageOptions,
): AsyncGenerator<ListPage> {
  // Every token of this list, to catch a loop of any length: at most MAX_LIST_PAGES of them.
  const seen = new Set<string>()
  let token: string | undefined
  let read = 0
  do {
    if (seen.size >= MAX_LIST_PAGES)
      throw new Error(`the list did not end after ${MAX_LIST_PAGES} pages`)
    const page = await api.get(
      path,
      {
        limit: options.limit ?? LIST_PAGE_SIZE,
        continue: token,
        labelSelector: options.labelSelector,
      },
      options.signal,
    )
    if (page === undefined) throw new Error(`GET ${path}: 404 not found`)
    if (!Array.isArray(page.items)) throw new Error(`GET ${path}: the answer is not a list`)
    const objects: KubeObject[] = []
    const malformed: MalformedItem[] = []
    for (const item of page.items as unknown[]) {
      const index = read++
      const problem = itemProblem(item, options.namespaced)
      if (problem !== undefined) malformed.push({ index, ...namesOf(item), problem })
      else
        objects.push({
          ...(item as KubeObject),
          apiVersion: options.apiVersion,
          kind: options.kind,
        })
    }
    yield { objects, malformed }
    const next = isRecord(page.metadata) ? page.metadata.continue : undefined
    token = typeof next === 'string' && next !== '' ? next : undefined
    if (token !== undefined) {
      if (seen.has(token))
        throw new Error('the list did not end: the API server sent the same continue token twice')
      seen.add(token)
    }
  } while (token !== undefined)
}

/** Why `item` cannot be a stored object; undefined when it can. */
export function itemProblem(item: unknown, namespaced: boolean): string | undefined {
  if (!isRecord(item))
    return `not an object (${item === null ? 'null' : Array.isArray(item) ? 'an array' : typeof item})`
  const metadata = item.metadata
  if (metadata === undefined) return 'no metadata'
  if (!isRecord(metadata)) return 'metadata is not an object'
  if (!isName(metadata.name)) return 'no metadata.name'
  if (namespaced && !isName(metadata.namespace)) return 'no metadata.namespace'
  if (!isDnsSubdomain(metadata.name)) return 'metadata.name is not a DNS-1123 subdomain'
  if (namespaced && !isDnsLabel(String(metadata.namespace)))
    return 'metadata.namespace is not a namespace name (a DNS-1123 label)'
  return undefined
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value !== ''
}

function namesOf(item: unknown): { namespace: string; name: string } {
  const metadata = isRecord(item) && isRecord(item.metadata) ? item.metadata : {}
  const text = (value: unknown) => (typeof value === 'string' ? value : '')
  return { namespace: text(metadata.namespace), name: text(metadata.name) }
}
