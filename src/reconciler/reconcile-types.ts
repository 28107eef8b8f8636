/**
 * What reconcile (reconcile.ts) and its validation-status step (validation-status.ts) share: what
 * they are given, and what one reconcile came to.
 */

import type { Logger } from 'pino'
import type { KubeApi } from '../cluster/kube-api.ts'
import type { KubeView } from '../cluster/kube-view.ts'

/**
 * What one reconcile came to. `retry` runs the key again after a backoff (the queue's contract);
 * every other result settles it until the object changes.
 */
export type ReconcileOutcome =
  /** Nothing of ours to write: current already, gone, or every condition left to its owner. */
  | { readonly result: 'unchanged' }
  | { readonly result: 'written'; readonly conditions: readonly string[] }
  /** `Invalid` written, or the reconciler's own `Invalid` removed (validation-status.ts). */
  | { readonly result: 'written'; readonly validationStatus: 'Invalid' | 'removed' }
  /** Leadership ended: whether a write landed is the next leader's to find out. */
  | { readonly result: 'abandoned' }
  /** The API server refused the write itself (not a conflict): retrying would not help. */
  | { readonly result: 'refused'; readonly reason: string }
  | { readonly result: 'retry'; readonly error: Error }

export interface ReconcileDeps {
  readonly api: Pick<KubeApi, 'get' | 'write'>
  /** The cache, and where each kind is served now (its status is read and applied there). */
  readonly view: Pick<KubeView, 'cached' | 'resourceOf'>
  readonly logger: Logger
  /** Aborted when leadership is lost: no write may start after that, and one under way is abandoned. */
  readonly leadership: AbortSignal
  readonly now?: () => string
  readonly onWrite?: (kind: string) => void
  /** Called with each condition type, or status field, left to another field manager. */
  readonly onYield?: (kind: string, conditionType: string) => void
}
