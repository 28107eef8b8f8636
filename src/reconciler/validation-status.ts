/**
 * Steps 2b and 3 of reconcile (reconcile.ts) for a kind whose status is a validation verdict
 * rather than conditions (`validationStatus` in the kind table): from the live object, write
 * `status: {validationStatus: Invalid, validationErrors}` while its rule finds violations, and
 * once they are fixed remove the `Invalid` the reconciler wrote itself (a conditional merge patch:
 * status-client.ts says why not an apply without them). A field another
 * field manager owns is never written, nor removed: the write is skipped and counted as yielded.
 * Never `Valid` (policy/composite-status.ts says why), never `observedGeneration`.
 */

import type { ViewResource } from '../cluster/resources.ts'
import type { ObjectKey } from '../cluster/view.ts'
import {
  VALIDATION_STATUS_FIELDS,
  desiredValidationStatus,
  validationStatusNeedsWrite,
} from '../policy/composite-status.ts'
import type { DesiredValidationStatus } from '../policy/composite-status.ts'
import { statusFieldManagers } from '../policy/kube/field-ownership.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import type { ReconcileDeps, ReconcileOutcome } from './reconcile-types.ts'
import { FIELD_MANAGER, applyStatus, removeStatusFields } from './status-client.ts'

interface Target {
  readonly text: string
  readonly key: ObjectKey
  readonly resource: ViewResource
}

/** What the live object calls for: a write, or nothing (with the fields left to their owners). */
type Plan =
  | { readonly write: false; readonly yielded: readonly string[] }
  | { readonly write: true; readonly desired: DesiredValidationStatus | undefined }

export async function reconcileValidationStatus(
  deps: ReconcileDeps,
  { text, key, resource }: Target,
  live: KubeObject,
  signal: () => AbortSignal,
): Promise<ReconcileOutcome> {
  const plan = planValidationStatus(live)
  if (!plan.write) {
    for (const field of plan.yielded) deps.onYield?.(key.kind, field)
    return { result: 'unchanged' }
  }
  // No await since reconcile checked leadership after the read: the write starts as a leader's.
  const { desired } = plan
  const outcome = desired
    ? await applyStatus(
        deps.api,
        resource,
        key,
        { validationStatus: desired.validationStatus, validationErrors: desired.validationErrors },
        signal(),
      )
    : await removeStatusFields(
        deps.api,
        resource,
        { ...key, resourceVersion: resourceVersionOf(live) },
        VALIDATION_STATUS_FIELDS,
        signal(),
      )
  if (outcome.result === 'retry' && deps.leadership.aborted) return { result: 'abandoned' }
  switch (outcome.result) {
    case 'written': {
      const validationStatus = desired ? desired.validationStatus : 'removed'
      deps.onWrite?.(key.kind)
      deps.logger.debug({ key: text, validationStatus }, 'status written')
      return { result: 'written', validationStatus }
    }
    case 'gone':
      return { result: 'unchanged' }
    case 'conflict': {
      // Another manager took a field between the read and the write: it is theirs now, and
      // their write queues the object again.
      const taken = VALIDATION_STATUS_FIELDS.filter((field) =>
        outcome.fields.includes(`.status.${field}`),
      )
      if (taken.length === 0)
        return {
          result: 'retry',
          error: new Error(`apply conflict on ${outcome.fields.join(', ')}`),
        }
      for (const field of taken) deps.onYield?.(key.kind, field)
      return { result: 'unchanged' }
    }
    case 'retry':
      return { result: 'retry', error: new Error(outcome.reason) }
    case 'refused':
      deps.logger.error({ key: text, reason: outcome.reason }, 'status write refused; not retrying')
      return { result: 'refused', reason: outcome.reason }
  }
}

/** Step 2b: whether the live object still wants a write, and whether it is ours to make. */
function planValidationStatus(live: KubeObject): Plan {
  const desired = desiredValidationStatus(live)
  if (!validationStatusNeedsWrite(live.status, desired)) return { write: false, yielded: [] }
  const managed = live.metadata?.managedFields
  const owners = (field: string) => statusFieldManagers(managed, field)
  const yielded = VALIDATION_STATUS_FIELDS.filter((field) =>
    [...owners(field)].some((manager) => manager !== FIELD_MANAGER),
  )
  if (yielded.length > 0) return { write: false, yielded }
  // An `Invalid` no one else owns but that is not ours either (its owner's claim was dropped):
  // removing it is not ours to decide.
  if (desired === undefined && !owners('validationStatus').has(FIELD_MANAGER))
    return { write: false, yielded: [] }
  return { write: true, desired }
}

/** The version the removal is conditional on; an object read live always has one. */
function resourceVersionOf(live: KubeObject): string {
  const version = live.metadata?.resourceVersion
  return typeof version === 'string' ? version : ''
}
