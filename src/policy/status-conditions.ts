/**
 * docs/enforcement.md#status-conditions: the status conditions the reconciler stamps on ToolHive
 * resources. Pure: the caller passes the time. Only conditions: the top-level
 * `status.observedGeneration` says the operator has acted on a generation, which the reconciler
 * cannot claim, and `configHash` is the operator's. Each condition carries its own
 * `observedGeneration`. The reconciler applies these with its own field manager and leaves out any
 * type another manager owns (kube/field-ownership.ts).
 */

import { renderViolations } from './messages/render.ts'
import { groupOf, isRecord } from './kube/object.ts'
import type { JsonObject, KubeObject } from './kube/object.ts'
import { TOOLHIVE_GROUP, TOOLHIVE_KIND_TABLE, toolHiveKind } from './kinds.ts'
import type { KindTable, StatusRule } from './kinds.ts'
import { cappedTransportOf } from './proxy-owner.ts'
import { validateWebhookConfig } from './webhook-config.ts'

type ConditionStatus = 'True' | 'False' | 'Unknown'

/** A metav1.Condition. */
interface Condition {
  readonly type: string
  readonly status: ConditionStatus
  readonly reason: string
  readonly message: string
  /** RFC 3339 time at which `status` last changed. */
  readonly lastTransitionTime: string
  readonly observedGeneration?: number
}

/** A condition as computed from the object; the transition time is decided when merging. */
type DesiredCondition = Omit<Condition, 'lastTransitionTime'>

export interface DesiredStatus {
  readonly conditions: readonly DesiredCondition[]
}

/**
 * metav1.Condition's limit on `message`, counted in UTF-8 bytes (the stricter reading); messages
 * are rendered within the 4 KiB of a denial (messages/render.ts), well inside it.
 */
export const MAX_CONDITION_MESSAGE_BYTES = 32_768

/** The condition types this reconciler owns (docs/enforcement.md#status-conditions). */
export const CONDITION_TYPES = {
  stdioReplicaCapped: 'StdioReplicaCapped',
  sessionStorageWarning: 'SessionStorageWarning',
  valid: 'Valid',
} as const

/** Every status/reason/message of the table in docs/enforcement.md#status-conditions, verbatim. */
const CONDITIONS = {
  stdioCapped: {
    type: CONDITION_TYPES.stdioReplicaCapped,
    status: 'True',
    reason: 'StdioTransportCapAt1',
    message:
      'stdio transport requires exactly 1 replica; deployment will use 1 regardless of spec.replicas',
  },
  stdioNotCapped: {
    type: CONDITION_TYPES.stdioReplicaCapped,
    status: 'False',
    reason: 'StdioReplicaCapNotActive',
    message: 'stdio replica cap is not active',
  },
  sessionStorageMissing: {
    type: CONDITION_TYPES.sessionStorageWarning,
    status: 'True',
    reason: 'SessionStorageMissingForReplicas',
    message:
      'replicas > 1 but sessionStorage.provider is not redis; sessions are not shared across replicas',
  },
  sessionStorageConfigured: {
    type: CONDITION_TYPES.sessionStorageWarning,
    status: 'False',
    reason: 'SessionStorageConfigured',
    message: 'Redis session storage is configured',
  },
  sessionStorageNotApplicable: {
    type: CONDITION_TYPES.sessionStorageWarning,
    status: 'False',
    reason: 'SessionStorageWarningNotApplicable',
    message: 'session storage warning is not active',
  },
  valid: {
    type: CONDITION_TYPES.valid,
    status: 'True',
    reason: 'ValidationSucceeded',
    message: 'Spec validation passed',
  },
  invalid: {
    type: CONDITION_TYPES.valid,
    status: 'False',
    reason: 'ValidationFailed',
    message: '',
  },
} as const satisfies Record<string, DesiredCondition>

/**
 * The conditions docs/enforcement.md#status-conditions wants on a ToolHive object (any version), or
 * undefined for other kinds.
 */
export function desiredStatus(
  object: KubeObject,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): DesiredStatus | undefined {
  const untrusted: unknown = object
  if (!isRecord(untrusted) || groupOf(untrusted.apiVersion) !== TOOLHIVE_GROUP) return undefined
  const spec = isRecord(untrusted.spec) ? untrusted.spec : {}
  const metadata = untrusted.metadata
  const generation = isRecord(metadata) ? generationOf(metadata.generation) : undefined
  // A copy each time: the caller may keep or change what it gets without touching CONDITIONS.
  const stamp = (condition: DesiredCondition): DesiredCondition =>
    generation === undefined ? { ...condition } : { ...condition, observedGeneration: generation }
  const status = (conditions: DesiredCondition[]): DesiredStatus => ({
    conditions: conditions.map(stamp),
  })
  const entry = toolHiveKind(untrusted.kind, kinds)
  // A kind with no conditions of ours is never written to, not even with an empty list.
  if (!entry || entry.conditions.length === 0) return undefined
  return status(entry.conditions.map((rule) => STATUS_RULES[rule](untrusted, spec)))
}

/** Each status rule a kind's table entry may name (`kinds.ts`). */
const STATUS_RULES: Record<StatusRule, (object: KubeObject, spec: JsonObject) => DesiredCondition> =
  {
    stdioReplicaCap: (object) => stdioCondition(object),
    sessionStorage: (_, spec) => sessionStorageCondition(spec),
    valid: (object) => validCondition(object),
  }

/**
 * The conditions this reconciler owns, in `desired` order, from the current `status.conditions`.
 * `lastTransitionTime` is kept when the same type had the same status, and is `now` otherwise.
 * Other types are left out: a server-side apply of the result leaves them to their own managers.
 */
export function mergeConditions(
  current: unknown,
  desired: readonly DesiredCondition[],
  now: string,
): Condition[] {
  const previous = conditionsByType(current)
  return desired.map((condition) => {
    const before = previous.get(condition.type)
    const kept = before?.lastTransitionTime
    const unchanged = before?.status === condition.status && typeof kept === 'string' && kept !== ''
    const merged: Condition = {
      type: condition.type,
      status: condition.status,
      reason: condition.reason,
      message: condition.message,
      lastTransitionTime: unchanged ? kept : now,
    }
    return condition.observedGeneration === undefined
      ? merged
      : { ...merged, observedGeneration: condition.observedGeneration }
  })
}

/**
 * True when applying `desired` would change `currentStatus`, ignoring `lastTransitionTime`. Only
 * fields `desired` sets are compared: comparing one it leaves out could never converge when
 * another manager owns that field. Malformed parts of the current status count as absent.
 */
export function statusNeedsWrite(currentStatus: unknown, desired: DesiredStatus): boolean {
  const status: JsonObject = isRecord(currentStatus) ? currentStatus : {}
  const current = conditionsByType(status.conditions)
  return desired.conditions.some((condition) => {
    const before = current.get(condition.type)
    return (
      before === undefined ||
      before.status !== condition.status ||
      before.reason !== condition.reason ||
      before.message !== condition.message ||
      (condition.observedGeneration !== undefined &&
        before.observedGeneration !== condition.observedGeneration)
    )
  })
}

function stdioCondition(object: KubeObject): DesiredCondition {
  const spec = isRecord(object.spec) ? object.spec : {}
  return cappedTransportOf(object) !== undefined && replicasOf(spec) > 1
    ? CONDITIONS.stdioCapped
    : CONDITIONS.stdioNotCapped
}

/**
 * Follows the table of docs/enforcement.md#status-conditions literally, stdio servers included: the
 * condition describes the spec as written, and the stdio cap has its own condition.
 */
function sessionStorageCondition(spec: JsonObject): DesiredCondition {
  if (replicasOf(spec) <= 1) return CONDITIONS.sessionStorageNotApplicable
  const storage = spec.sessionStorage
  return isRecord(storage) && storage.provider === 'redis'
    ? CONDITIONS.sessionStorageConfigured
    : CONDITIONS.sessionStorageMissing
}

function validCondition(object: KubeObject): DesiredCondition {
  const { violations } = validateWebhookConfig({
    operation: 'CREATE',
    object,
    oldObject: undefined,
  })
  if (violations.length === 0) return CONDITIONS.valid
  return {
    ...CONDITIONS.invalid,
    message: renderViolations(violations).message,
  }
}

/** `spec.replicas` when a whole number; anything else is treated as unset (0). */
function replicasOf(spec: JsonObject): number {
  const replicas = spec.replicas
  return typeof replicas === 'number' && Number.isInteger(replicas) ? replicas : 0
}

/** A generation the API server could have written: a non-negative safe integer. */
function generationOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/** The first condition object of each type; items that are not objects count as absent. */
function conditionsByType(conditions: unknown): Map<string, JsonObject> {
  const byType = new Map<string, JsonObject>()
  if (!Array.isArray(conditions)) return byType
  for (const item of conditions as unknown[]) {
    if (!isRecord(item)) continue
    const type = item.type
    if (typeof type === 'string' && !byType.has(type)) byType.set(type, item)
  }
  return byType
}
