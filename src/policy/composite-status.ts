/**
 * The `status.validationStatus` and `status.validationErrors` the reconciler wants on an object
 * of a kind whose table entry names a validation-status rule (`kinds.ts`:
 * VirtualMCPCompositeToolDefinition). ToolHive's VirtualMCPServer controller reads them from every
 * definition a server references: `Invalid` fails the server (condition
 * `CompositeToolRefsValidated` False, the errors joined by `; ` in its message), anything else
 * lets it proceed. Nothing in ToolHive writes them, so the reconciler does (docs/enforcement.md).
 *
 * It writes `Invalid` or nothing, never `Valid`: the rules ported here are the structural ones
 * (`composite-tool.ts`); templates and JSON Schemas are not ported with parity, so an object
 * without a violation of ours has not been shown valid, and `Valid` would claim more than was
 * checked. Without a violation the desired status is "nothing of ours": both fields absent, which
 * the reconciler reaches by removing what it wrote itself and leaving anyone else's value alone.
 * Pure.
 */

import { compositeToolDefinitionErrors } from './composite-tool.ts'
import { utf8Length } from './go/bytes.ts'
import { TOOLHIVE_GROUP, TOOLHIVE_KIND_TABLE, toolHiveKind } from './kinds.ts'
import type { KindTable, ValidationStatusRule } from './kinds.ts'
import { groupOf, isRecord } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'
import { MESSAGE_LIMITS, renderText } from './messages/render.ts'

export const INVALID = 'Invalid'

/** The status fields the reconciler writes, by their names in `status`. */
export const VALIDATION_STATUS_FIELDS = ['validationStatus', 'validationErrors'] as const

export interface DesiredValidationStatus {
  readonly validationStatus: typeof INVALID
  readonly validationErrors: readonly string[]
}

/**
 * Bounds of `validationErrors`, those of a denial message (messages/render.ts): at most 20
 * errors of 1 KiB each and 4 KiB in all, counted as the operator joins them (`; `), so the
 * VirtualMCPServer's condition message that repeats them stays well inside its 32 KiB.
 */
const LIMITS = {
  errors: MESSAGE_LIMITS.violations,
  errorBytes: MESSAGE_LIMITS.violationBytes,
  totalBytes: MESSAGE_LIMITS.messageBytes,
  /** Room kept for the closing `and 1234567 more errors` and its separator. */
  reservedBytes: 32,
} as const

const SEPARATOR = '; '

/** Each rule a kind's table entry may name, as the rendered violations of one object. */
const VALIDATION_RULES: Record<ValidationStatusRule, (object: KubeObject) => readonly string[]> = {
  compositeToolDefinition: compositeToolDefinitionErrors,
}

/**
 * The status the reconciler wants on `object`: `Invalid` with its errors when its kind's rule
 * finds violations; undefined ("nothing of ours") when it finds none, and for any other kind.
 */
export function desiredValidationStatus(
  object: KubeObject,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): DesiredValidationStatus | undefined {
  if (groupOf(object.apiVersion) !== TOOLHIVE_GROUP) return undefined
  const rule = toolHiveKind(object.kind, kinds)?.validationStatus
  if (rule === undefined) return undefined
  const errors = VALIDATION_RULES[rule](object)
  if (errors.length === 0) return undefined
  return { validationStatus: INVALID, validationErrors: boundValidationErrors(errors) }
}

/**
 * Whether the stored status differs from what the reconciler wants: `desired` not yet written
 * (another status, or other errors), or no violation while `Invalid` is stored (perhaps the
 * reconciler's own, to remove: only the object's managedFields can say). Malformed parts of the
 * stored status count as absent.
 */
export function validationStatusNeedsWrite(
  currentStatus: unknown,
  desired: DesiredValidationStatus | undefined,
): boolean {
  const status = isRecord(currentStatus) ? currentStatus : {}
  if (desired === undefined) return status.validationStatus === INVALID
  return (
    status.validationStatus !== desired.validationStatus ||
    !sameStrings(status.validationErrors, desired.validationErrors)
  )
}

/**
 * `errors` as stored: each redacted, escaped and cut to 1 KiB, then those that fit the count and
 * byte bounds, and `and N more errors` when any were left out.
 */
export function boundValidationErrors(errors: readonly string[]): string[] {
  const kept: string[] = []
  let bytes = LIMITS.reservedBytes
  for (const error of errors) {
    if (kept.length === LIMITS.errors) break
    const text = renderText(error, LIMITS.errorBytes)
    const cost = utf8Length(text) + (kept.length > 0 ? SEPARATOR.length : 0)
    if (bytes + cost > LIMITS.totalBytes) break
    kept.push(text)
    bytes += cost
  }
  const omitted = errors.length - kept.length
  if (omitted > 0) kept.push(`and ${omitted} more ${omitted === 1 ? 'error' : 'errors'}`)
  return kept
}

function sameStrings(current: unknown, desired: readonly string[]): boolean {
  return (
    Array.isArray(current) &&
    current.length === desired.length &&
    desired.every((error, index) => current[index] === error)
  )
}
