/**
 * Which of its conditions the reconciler must leave alone, read from `metadata.managedFields`
 * (docs/enforcement.md#status): a write that another controller undoes is a fight whoever is right.
 * Pure: managedFields and conditions in, condition types out.
 *
 * managedFields' `fieldsV1` is a trie of the fields a manager set: `f:<field>` for a struct field,
 * `k:<json>` for a list-map item named by its keys (conditions are keyed by `type`), `.` for the
 * node itself. A manager owns a condition when its trie names that condition's key at all: any
 * part it set is a part our write could undo.
 */

import { isRecord } from './object.ts'

/** The fields of a condition the reconciler writes, as managedFields name them. */
const WRITTEN_FIELDS = ['f:type', 'f:status', 'f:reason', 'f:message', 'f:lastTransitionTime']

/**
 * The condition types among `desired` that are not the reconciler's to write on this object:
 *  - one another manager owns any part of;
 *  - one that exists but that `self` does not own whole: either someone else created it, or
 *    someone rewrote it with an update that removed a field `self` had set (such a removal leaves
 *    no owner behind, only `self`'s claim pruned). Writing it back would undo their write.
 * A condition that does not exist yet is the reconciler's to stamp.
 */
export function conditionTypesToLeave(
  managedFields: unknown,
  self: string,
  currentConditions: unknown,
  desired: readonly { readonly type: string; readonly observedGeneration?: number }[],
): Set<string> {
  const others = conditionTypesOwnedByOthers(managedFields, self)
  const present = new Set(
    (Array.isArray(currentConditions) ? (currentConditions as unknown[]) : [])
      .filter(isRecord)
      .map((condition) => condition.type),
  )
  const mine = conditionFieldsOwnedBy(managedFields, self)
  const leave = new Set<string>()
  for (const condition of desired) {
    if (others.has(condition.type)) leave.add(condition.type)
    else if (present.has(condition.type)) {
      const owned = mine.get(condition.type)
      const written =
        condition.observedGeneration === undefined
          ? WRITTEN_FIELDS
          : [...WRITTEN_FIELDS, 'f:observedGeneration']
      if (!owned || written.some((field) => !owned.has(field))) leave.add(condition.type)
    }
  }
  return leave
}

/**
 * The condition types `self` holds any claim on. A condition it leaves alone but still claims is
 * applied back exactly as it stands: dropping it from the apply would make the API server delete
 * the parts only `self` owned, undoing the other writer's condition.
 */
export function conditionTypesClaimedBy(managedFields: unknown, self: string): Set<string> {
  return new Set(conditionFieldsOwnedBy(managedFields, self).keys())
}

/** condition type → the fields of it that `manager` owns. */
function conditionFieldsOwnedBy(managedFields: unknown, manager: string): Map<string, Set<string>> {
  const owned = new Map<string, Set<string>>()
  for (const conditions of statusConditionTries(managedFields, (name) => name === manager)) {
    for (const [key, fields] of Object.entries(conditions)) {
      const type = listMapType(key)
      if (type === undefined || !isRecord(fields)) continue
      const set = owned.get(type) ?? new Set<string>()
      for (const field of Object.keys(fields)) set.add(field)
      owned.set(type, set)
    }
  }
  return owned
}

/** The `f:status` → `f:conditions` tries of the entries whose manager `matches`. */
function statusConditionTries(
  managedFields: unknown,
  matches: (manager: unknown) => boolean,
): Record<string, unknown>[] {
  if (!Array.isArray(managedFields)) return []
  const tries: Record<string, unknown>[] = []
  for (const entry of managedFields as unknown[]) {
    if (!isRecord(entry) || !matches(entry.manager)) continue
    const status = isRecord(entry.fieldsV1) ? entry.fieldsV1['f:status'] : undefined
    const conditions = isRecord(status) ? status['f:conditions'] : undefined
    if (isRecord(conditions)) tries.push(conditions)
  }
  return tries
}

/** The condition types (of `status.conditions`) that a manager other than `self` owns any part of. */
export function conditionTypesOwnedByOthers(managedFields: unknown, self: string): Set<string> {
  const owned = new Set<string>()
  for (const conditions of statusConditionTries(managedFields, (name) => name !== self)) {
    for (const [key, fields] of Object.entries(conditions)) {
      const type = listMapType(key)
      if (type !== undefined && isRecord(fields)) owned.add(type)
    }
  }
  return owned
}

/**
 * The condition types named by the fields of a server-side apply conflict, as the API server
 * reports them in `details.causes[].field`: `.status.conditions[type="Ready"].message`.
 */
export function conflictingConditionTypes(fields: readonly string[]): Set<string> {
  const types = new Set<string>()
  for (const field of fields) {
    const match = /^\.status\.conditions\[type=("(?:[^"\\]|\\.)*")\]/.exec(field)
    if (!match?.[1]) continue
    try {
      const type: unknown = JSON.parse(match[1])
      if (typeof type === 'string') types.add(type)
    } catch {
      // Not a quoted string after all: not a condition this reconciler writes.
    }
  }
  return types
}

/**
 * The managers whose managedFields entry sets `status.<field>`, a field owned whole (a string, or
 * an atomic list such as `validationErrors`: `f:status` → `f:<field>`).
 */
export function statusFieldManagers(managedFields: unknown, field: string): Set<string> {
  const managers = new Set<string>()
  if (!Array.isArray(managedFields)) return managers
  for (const entry of managedFields as unknown[]) {
    if (!isRecord(entry)) continue
    const status = isRecord(entry.fieldsV1) ? entry.fieldsV1['f:status'] : undefined
    // An entry without a manager's name is someone else's all the same.
    const manager = typeof entry.manager === 'string' ? entry.manager : ''
    if (isRecord(status) && Object.hasOwn(status, `f:${field}`)) managers.add(manager)
  }
  return managers
}

/** `k:{"type":"Ready"}` → `Ready`; undefined for any other key. */
function listMapType(key: string): string | undefined {
  if (!key.startsWith('k:')) return undefined
  try {
    const item: unknown = JSON.parse(key.slice(2))
    return isRecord(item) && typeof item.type === 'string' ? item.type : undefined
  } catch {
    return undefined
  }
}
