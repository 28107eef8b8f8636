/**
 * The read-only cluster view policies may consult (docs/architecture.md#architecture). Its three
 * implementations (informer cache, live read, in-memory) are two classes: KubeView (the informer
 * cache, with live reads) and MemoryView (in-memory, used by the CLI, the embedded default and unit
 * tests).
 */

import type { KubeObject } from '../policy/kube/object.ts'
import type { ToolHiveKind } from '../policy/kinds.ts'
import { errorMessage } from '../policy/messages/render.ts'
import type { Referrer } from '../policy/references.ts'

/**
 * The kinds a view can be asked for. A cluster's view caches only the ToolHive kinds: RunConfig
 * ConfigMaps and Deployments are read live (a file view holds all of them).
 */
export type ViewKind = ToolHiveKind | 'ConfigMap' | 'Deployment'

export interface ObjectKey {
  readonly kind: ViewKind
  readonly namespace: string
  readonly name: string
}

/** The key of a ToolHive object, which references may name. */
export type ToolHiveKey = ObjectKey & { readonly kind: ToolHiveKind }

export interface ReadOptions {
  /**
   * Bypass any cache and read what the API server holds now
   * (docs/enforcement.md#read-live-not-from-the-cache).
   */
  readonly live?: boolean
  /** Answer from the cache alone: a miss is `undefined`, never a read (ignored with `live`). */
  readonly cacheOnly?: boolean
  /** Ends a live read: admission gives every read a deadline inside the webhook's timeout. */
  readonly signal?: AbortSignal
}

/**
 * A live read that did not succeed. Admission answers it in-band with this message rather than
 * deciding from the cache (docs/enforcement.md#read-live-not-from-the-cache); the writer (the
 * operator) retries.
 */
export class ClusterReadError extends Error {
  override name = 'ClusterReadError'
  /** What could not be read, as people name it (`MCPServer team-a/fetch`). */
  readonly what: string
  /**
   * The read was cut off by the caller's deadline (its signal aborted with a TimeoutError): the
   * API server was slow, not wrong. A proxy Deployment write by the operator may then be admitted
   * with its own stamps (docs/enforcement.md#a-slow-api-server).
   */
  readonly deadlineMissed: boolean
  constructor(
    what: string,
    cause: unknown,
    options: { readonly deadlineMissed?: boolean; readonly because?: string } = {},
  ) {
    const because = options.because === undefined ? '' : ` (${options.because})`
    super(`cannot read ${what} from the API server: ${errorMessage(cause)}${because}`, { cause })
    this.what = what
    this.deadlineMissed = options.deadlineMissed ?? false
  }
}

export interface ClusterView {
  /** The object, or undefined when it does not exist. */
  get(key: ObjectKey, options?: ReadOptions): Promise<KubeObject | undefined>
  /**
   * The objects in the target's namespace whose references (the kind table's) name it, one per
   * field that does, sorted by kind, name and path.
   */
  referrersOf(target: ToolHiveKey, options?: ReadOptions): Promise<Referrer[]>
  /**
   * Whether the namespace is being deleted (it has a `deletionTimestamp`), from the view's cache
   * of namespaces; false when it is not known to be.
   */
  isTerminating(namespace: string): boolean
  /** Whether the cluster serves `kind` now (an in-memory view: the kinds it was given). */
  serves(kind: ToolHiveKind): boolean
  /**
   * True once the view reflects the cluster: every served kind's cache has listed (for `kind`, that
   * kind's cache alone). Always true for in-memory views.
   */
  isSynced(kind?: ToolHiveKind): boolean
  /**
   * The view can answer correctly now (readiness): it knows what the cluster serves, and each
   * served kind is cached or read from the API server instead. Always true for in-memory views.
   */
  isReady(): boolean
}

/** `kind/namespace/name`: the key views index by and the reconciler's queue carries. */
export function keyString(key: ObjectKey): string {
  return `${key.kind}/${key.namespace}/${key.name}`
}

/** The key `keyString` wrote for one of `kinds`, or undefined for any other text. */
export function parseKeyString<K extends ViewKind>(
  text: string,
  kinds: readonly K[],
): (ObjectKey & { readonly kind: K }) | undefined {
  // Kinds, namespaces and names never contain '/', so the three parts are unambiguous.
  const [kind, namespace, name, ...rest] = text.split('/')
  if (!kind || namespace === undefined || !name || rest.length > 0) return undefined
  if (!(kinds as readonly string[]).includes(kind)) return undefined
  return { kind: kind as K, namespace, name }
}
