/**
 * reconcile(key), in three named steps with one outcome value:
 * 1. `staleTarget`: from the cached object, is any of this controller's conditions missing or
 *    stale (policy/status-conditions.ts), or its validation status (policy/composite-status.ts)?
 *    Most keys end here, without a request.
 * 2. `readLive` + `planConditions`: read the object live, with its managedFields, and keep the
 *    conditions that are the reconciler's to write (absent, or wholly its own:
 *    policy/kube/field-ownership.ts). A condition the operator writes itself is left to it, so
 *    beside an operator that manages these conditions nothing is written; beside one that does
 *    not, they are stamped.
 * 3. `applyConditions`: server-side apply; a conflict (an owner appeared between the read and the
 *    write) drops the named conditions and tries again.
 * A kind with a validation status instead of conditions takes steps 2 and 3 in
 * validation-status.ts.
 */

import { resourcePath } from '../cluster/resources.ts'
import type { ViewResource } from '../cluster/resources.ts'
import { parseKeyString } from '../cluster/view.ts'
import type { ObjectKey } from '../cluster/view.ts'
import {
  conditionTypesClaimedBy,
  conditionTypesToLeave,
  conflictingConditionTypes,
} from '../policy/kube/field-ownership.ts'
import { desiredValidationStatus, validationStatusNeedsWrite } from '../policy/composite-status.ts'
import { TOOLHIVE_KIND_TABLE, entryOf, writesStatus } from '../policy/kinds.ts'
import type { ToolHiveKind } from '../policy/kinds.ts'
import { isRecord } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { errorMessage } from '../policy/messages/render.ts'
import { desiredStatus, mergeConditions, statusNeedsWrite } from '../policy/status-conditions.ts'
import type { DesiredStatus } from '../policy/status-conditions.ts'
import { FIELD_MANAGER, applyStatus } from './status-client.ts'
import type { ReconcileDeps, ReconcileOutcome } from './reconcile-types.ts'

export type { ReconcileDeps, ReconcileOutcome } from './reconcile-types.ts'
import { reconcileValidationStatus } from './validation-status.ts'

/** The kinds whose status this controller writes: conditions or a validation status. */
export const RECONCILED_KINDS: readonly ToolHiveKind[] = TOOLHIVE_KIND_TABLE.flatMap((entry) =>
  writesStatus(entry) ? [entry.kind] : [],
)

/** Conflicts in a row before giving up for now (each one drops at least one condition). */
const MAX_CONFLICTS = 3

/** How long one read or write may take: a stuck request must not hold the queue's worker. */
const REQUEST_DEADLINE_MS = 5_000

const UNCHANGED = { result: 'unchanged' } as const
const ABANDONED = { result: 'abandoned' } as const

/** A key whose cached object wants a status write. */
interface Target {
  readonly text: string
  readonly key: ObjectKey & { readonly kind: ToolHiveKind }
  readonly resource: ViewResource
  /** The kind's status is a validation verdict (validation-status.ts), not conditions. */
  readonly validation: boolean
}

/** The conditions to apply, and those to send back untouched. */
interface ConditionPlan {
  readonly current: unknown
  /** Ours to write (desired, minus those another field manager owns). */
  readonly own: DesiredStatus['conditions']
  /** Left to another writer but still partly claimed by us: sent back exactly as they are. */
  readonly kept: readonly unknown[]
}

export function createReconcile(deps: ReconcileDeps): (key: string) => Promise<ReconcileOutcome> {
  const now = deps.now ?? (() => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'))
  return async (text) => {
    const target = await staleTarget(deps.view, text)
    if (!target) return UNCHANGED
    // Each request ends when leadership does, or at its deadline.
    const bounded = () =>
      AbortSignal.any([deps.leadership, AbortSignal.timeout(REQUEST_DEADLINE_MS)])
    if (leadershipLost(deps)) return ABANDONED
    const read = await readLive(deps.api, target, bounded())
    if (leadershipLost(deps)) return ABANDONED
    if ('error' in read) return { result: 'retry', error: read.error }
    if (!read.live) return UNCHANGED
    if (target.validation) return reconcileValidationStatus(deps, target, read.live, bounded)
    const plan = planConditions(read.live)
    for (const type of plan.yielded) deps.onYield?.(target.key.kind, type)
    return applyConditions(deps, target, read.live, plan, now, bounded)
  }
}

/** A function, not a property read: leadership can end during any await. */
function leadershipLost(deps: Pick<ReconcileDeps, 'leadership'>): boolean {
  return deps.leadership.aborted
}

/**
 * Step 1: the key, when its cached object lacks a condition of ours or holds a stale one, or its
 * stored validation status is not what its rule says (or is an `Invalid` that may be ours to
 * remove).
 */
async function staleTarget(view: ReconcileDeps['view'], text: string): Promise<Target | undefined> {
  const key = parseKeyString(text, RECONCILED_KINDS)
  // A kind no longer served has no objects left to stamp.
  const resource = key && view.resourceOf(key.kind)
  if (!key || !resource) return undefined
  // The cache has no managedFields: it only says whether a closer look is worth a read.
  const cached = await view.cached(key)
  if (!cached) return undefined
  const validation = entryOf(key.kind).validationStatus !== undefined
  if (validation)
    return validationStatusNeedsWrite(cached.status, desiredValidationStatus(cached))
      ? { text, key, resource, validation }
      : undefined
  const wanted = desiredStatus(cached)
  return wanted && statusNeedsWrite(cached.status, wanted)
    ? { text, key, resource, validation }
    : undefined
}

/** Step 2a: the object as the API server holds it, managedFields included. */
async function readLive(
  api: ReconcileDeps['api'],
  { key, resource }: Target,
  signal: AbortSignal,
): Promise<{ readonly live: KubeObject | undefined } | { readonly error: Error }> {
  try {
    return { live: await api.get(resourcePath(resource, key), {}, signal) }
  } catch (error) {
    return { error: error instanceof Error ? error : new Error(errorMessage(error)) }
  }
}

/** Step 2b: which desired conditions are ours to write, and which we send back as they are. */
function planConditions(live: KubeObject): ConditionPlan & { readonly yielded: Set<string> } {
  const desired = desiredStatus(live)?.conditions ?? []
  const current = isRecord(live.status) ? live.status.conditions : undefined
  const managed = live.metadata?.managedFields
  const yielded = conditionTypesToLeave(managed, FIELD_MANAGER, current, desired)
  const claimed = conditionTypesClaimedBy(managed, FIELD_MANAGER)
  // Not those a conflict names later: their current values are not known.
  const kept = (Array.isArray(current) ? (current as unknown[]) : []).filter(
    (condition) =>
      isRecord(condition) &&
      typeof condition.type === 'string' &&
      yielded.has(condition.type) &&
      claimed.has(condition.type),
  )
  const own = desired.filter((condition) => !yielded.has(condition.type))
  return { current, own, kept, yielded }
}

/** Step 3: apply our conditions; a conflict hands the named ones over and tries again. */
async function applyConditions(
  deps: ReconcileDeps,
  { text, key, resource }: Target,
  live: KubeObject,
  plan: ConditionPlan,
  now: () => string,
  bounded: () => AbortSignal,
): Promise<ReconcileOutcome> {
  let own = plan.own
  for (let conflicts = 0; ; conflicts++) {
    if (own.length === 0 || !statusNeedsWrite(live.status, { conditions: own })) return UNCHANGED
    if (leadershipLost(deps)) return ABANDONED
    const status = { conditions: [...mergeConditions(plan.current, own, now()), ...plan.kept] }
    const outcome = await applyStatus(deps.api, resource, key, status, bounded())
    if (outcome.result === 'retry' && leadershipLost(deps)) return ABANDONED
    switch (outcome.result) {
      case 'written': {
        const conditions = own.map((c) => c.type)
        deps.onWrite?.(key.kind)
        deps.logger.debug({ key: text, conditions }, 'status written')
        return { result: 'written', conditions }
      }
      case 'gone':
        return UNCHANGED
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
        return { result: 'refused', reason: outcome.reason }
    }
  }
}
