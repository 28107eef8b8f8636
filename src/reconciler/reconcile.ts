/**
 * reconcile(key): decide from the cached object whether any of this controller's conditions is
 * missing or stale (policy/status-conditions.ts); only then read the object live, with its
 * managedFields, and apply the conditions that are the reconciler's to write (absent, or wholly
 * its own: policy/kube/field-ownership.ts). A condition the operator writes itself is left to it, so
 * beside an operator that manages these conditions nothing is written; beside one that does not,
 * they are stamped. A conflict on apply (an owner appeared between the read and the write) drops
 * the named conditions and tries again.
 */

import type { Logger } from 'pino'
import type { KubeApi } from '../cluster/kube-api.ts'
import type { KubeView } from '../cluster/kube-view.ts'
import { VIEW_RESOURCES, resourcePath } from '../cluster/resources.ts'
import { parseKeyString } from '../cluster/view.ts'
import {
  conditionTypesClaimedBy,
  conditionTypesToLeave,
  conflictingConditionTypes,
} from '../policy/kube/field-ownership.ts'
import { TOOLHIVE_KIND_TABLE } from '../policy/kinds.ts'
import type { ToolHiveKind } from '../policy/kinds.ts'
import { isRecord } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { desiredStatus, mergeConditions, statusNeedsWrite } from '../policy/status-conditions.ts'
import type { ReconcileOutcome } from './queue.ts'
import { FIELD_MANAGER, applyStatus } from './status-client.ts'

/** The kinds whose status this controller stamps: those with conditions in the kind table. */
export const RECONCILED_KINDS: readonly ToolHiveKind[] = TOOLHIVE_KIND_TABLE.flatMap((entry) =>
  entry.conditions.length > 0 ? [entry.kind] : [],
)

/** Conflicts in a row before giving up for now (each one drops at least one condition). */
const MAX_CONFLICTS = 3

/** How long one read or write may take: a stuck request must not hold the queue's worker. */
const REQUEST_DEADLINE_MS = 5_000

interface ReconcileDeps {
  readonly api: Pick<KubeApi, 'get' | 'write'>
  readonly view: Pick<KubeView, 'cached'>
  readonly logger: Logger
  /** Aborted when leadership is lost: no write may start after that, and one under way is abandoned. */
  readonly leadership: AbortSignal
  readonly now?: () => string
  readonly onWrite?: (kind: string) => void
  /** Called with each condition type left to another field manager. */
  readonly onYield?: (kind: string, conditionType: string) => void
}

export function createReconcile(deps: ReconcileDeps): (key: string) => Promise<ReconcileOutcome> {
  const now = deps.now ?? (() => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'))
  return async (text) => {
    const key = parseKeyString(text, RECONCILED_KINDS)
    const resource = VIEW_RESOURCES.find((candidate) => candidate.kind === key?.kind)
    if (!key || !resource) return { result: 'done' }
    // The cache has no managedFields: it only says whether a closer look is worth a read.
    const cached = await deps.view.cached(key)
    const wanted = cached && desiredStatus(cached)
    if (!wanted || !statusNeedsWrite(cached.status, wanted)) return { result: 'done' }
    // A function, not a property read: leadership can end during any await below.
    const leading = () => !deps.leadership.aborted
    if (!leading()) return { result: 'done' }

    // Each request ends when leadership does, or at its deadline.
    const bounded = () =>
      AbortSignal.any([deps.leadership, AbortSignal.timeout(REQUEST_DEADLINE_MS)])
    let live: KubeObject | undefined
    try {
      live = await deps.api.get(resourcePath(resource, key), {}, bounded())
    } catch (error) {
      if (!leading()) return { result: 'done' }
      return { result: 'retry', error: error instanceof Error ? error : new Error(String(error)) }
    }
    if (!live) return { result: 'done' }
    const desired = desiredStatus(live)?.conditions ?? []
    const current = isRecord(live.status) ? live.status.conditions : undefined
    const yielded = conditionTypesToLeave(
      live.metadata?.managedFields,
      FIELD_MANAGER,
      current,
      desired,
    )
    let own = desired.filter((condition) => !yielded.has(condition.type))
    for (const type of yielded) deps.onYield?.(key.kind, type)
    // Conditions left to another writer but still partly claimed go back exactly as they are.
    // (Not those named by a conflict below: their current values are not known.)
    const claimed = conditionTypesClaimedBy(live.metadata?.managedFields, FIELD_MANAGER)
    const kept = (Array.isArray(current) ? (current as unknown[]) : []).filter(
      (condition) =>
        isRecord(condition) &&
        typeof condition.type === 'string' &&
        yielded.has(condition.type) &&
        claimed.has(condition.type),
    )

    for (let conflicts = 0; ; conflicts++) {
      if (own.length === 0 || !statusNeedsWrite(live.status, { conditions: own }))
        return { result: 'done' }
      if (!leading()) return { result: 'done' }
      const status = { conditions: [...mergeConditions(current, own, now()), ...kept] }
      const outcome = await applyStatus(deps.api, resource, key, status, bounded())
      // Abandoned with leadership: whether it landed is the next leader's to find out.
      if (outcome.result === 'retry' && !leading()) return { result: 'done' }
      switch (outcome.result) {
        case 'written':
          deps.onWrite?.(key.kind)
          deps.logger.debug({ key: text, conditions: own.map((c) => c.type) }, 'status written')
          return { result: 'done' }
        case 'gone':
          return { result: 'done' }
        case 'conflict': {
          const taken = conflictingConditionTypes(outcome.fields)
          const before = own.length
          own = own.filter((condition) => !taken.has(condition.type))
          for (const type of taken) deps.onYield?.(key.kind, type)
          // Nothing of ours was named, or conflicts keep coming: read again later.
          if (own.length === before || conflicts + 1 >= MAX_CONFLICTS)
            return {
              result: 'retry',
              error: new Error(`apply conflict on ${outcome.fields.join(', ')}`),
            }
          break
        }
        case 'retry':
          return { result: 'retry', error: new Error(outcome.reason) }
        case 'refused':
          deps.logger.error(
            { key: text, reason: outcome.reason },
            'status write refused; not retrying',
          )
          return { result: 'done' }
      }
    }
  }
}
