/**
 * Which namespaces are being deleted, for the delete guard: a DELETE in a terminating namespace is
 * admitted before anything is listed, so namespace deletion never waits on referrer lists
 * (`admission/validation-facts.ts`). Namespaces are listed and watched by the same Reflector as
 * the ToolHive kinds, but at a fixed path (`/api/v1/namespaces`, a core resource every API server
 * serves): not through discovery, and not into the view's object cache.
 *
 * Memory: a cluster may have thousands of namespaces, and all that is asked of one is whether it
 * is terminating, so only the names of the terminating ones are held, in a Set (usually empty or
 * a handful). Every other namespace is trimmed on arrival (`trimNamespace`: its name and
 * `deletionTimestamp`) and dropped once its list page or watch event has been applied. A
 * `deletionTimestamp` is never taken back, so a name leaves the Set only when its namespace is
 * gone: a DELETED event, or a relist (after a watch that expired or failed) that no longer holds it.
 */

import type { Logger } from 'pino'
import type { KubeObject } from '../policy/kube/object.ts'
import { errorMessage } from '../policy/messages/render.ts'
import { isRefusal } from './kube-api.ts'
import type { KubeApi } from './kube-api.ts'
import { Reflector } from './reflector.ts'
import type { ReflectorOptions, ReflectorStore } from './reflector.ts'
import { NAMESPACES } from './resources.ts'
import { trimNamespace } from './trim.ts'

export interface NamespaceCacheOptions {
  /** Paging, watch length, backoff and hooks, as for the view's other reflectors. */
  readonly reflector?: ReflectorOptions
  /** Every list or watch failure (for metrics); a 429 asks to wait and is not one. */
  readonly onError?: (error: unknown) => void
}

export class NamespaceCache {
  /** The names of the namespaces that have a `deletionTimestamp`, and only those. */
  readonly #terminating = new Set<string>()
  readonly #reflector: Reflector
  readonly #logger: Logger
  #refusalLogged = false

  constructor(api: KubeApi, logger: Logger, options: NamespaceCacheOptions = {}) {
    this.#logger = logger
    this.#reflector = new Reflector(api, NAMESPACES, this.#store(), logger, {
      ...options.reflector,
      onError: (error) => {
        options.reflector?.onError?.(error)
        options.onError?.(error)
        // Retried with backoff all the same; said once, with what it costs, since RBAC does not
        // change by itself (an image upgraded without its ClusterRole).
        if (isRefusal(error) && !this.#refusalLogged) {
          this.#refusalLogged = true
          this.#logger.warn(
            `namespaces cannot be listed: ${errorMessage(error)}; a DELETE in a terminating namespace is checked for referrers like any other until the list succeeds`,
          )
        }
      },
    })
  }

  start(): void {
    this.#reflector.start()
  }

  stop(): Promise<void> {
    return this.#reflector.stop()
  }

  /**
   * Whether the namespace has a `deletionTimestamp`. False before the first list has completed
   * (or while it keeps failing): the delete guard then looks at the referrers, as it does for any
   * namespace that is not terminating.
   */
  isTerminating(namespace: string): boolean {
    return this.#terminating.has(namespace)
  }

  #store(): ReflectorStore {
    const terminating = this.#terminating
    const nameOf = (object: KubeObject) => {
      const name = object.metadata?.name
      return typeof name === 'string' && name !== '' ? name : undefined
    }
    const upsert = (object: KubeObject) => {
      const name = nameOf(object)
      if (name === undefined) return
      // `trimNamespace` keeps a deletionTimestamp only when it is set.
      if (object.metadata?.['deletionTimestamp'] === undefined) terminating.delete(name)
      else terminating.add(name)
    }
    return {
      keep: trimNamespace,
      replace(objects) {
        // A complete list: whatever is not terminating in it, or not in it, is not.
        terminating.clear()
        for (const object of objects) upsert(object)
      },
      upsert,
      remove(object) {
        const name = nameOf(object)
        if (name !== undefined) terminating.delete(name)
      },
    }
  }
}
