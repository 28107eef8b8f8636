/**
 * Which status fields another field manager owns, read from `metadata.managedFields` (DESIGN §6).
 * The reconciler leaves such fields to their owner: a write that another controller undoes is a
 * fight whoever is right. Pure: managedFields in, condition types out.
 *
 * managedFields' `fieldsV1` is a trie of the fields a manager set: `f:<field>` for a struct field,
 * `k:<json>` for a list-map item named by its keys (conditions are keyed by `type`), `.` for the
 * node itself. A manager owns a condition when its trie names that condition's key at all: any
 * part it set is a part our write could undo.
 */

import { isRecord } from './kube.ts'

/** The condition types (of `status.conditions`) that a manager other than `self` owns any part of. */
export function conditionTypesOwnedByOthers(managedFields: unknown, self: string): Set<string> {
  const owned = new Set<string>()
  if (!Array.isArray(managedFields)) return owned
  for (const entry of managedFields as unknown[]) {
    if (!isRecord(entry) || entry.manager === self) continue
    const status = isRecord(entry.fieldsV1) ? entry.fieldsV1['f:status'] : undefined
    const conditions = isRecord(status) ? status['f:conditions'] : undefined
    if (!isRecord(conditions)) continue
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
