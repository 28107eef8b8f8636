/**
 * docs/enforcement.md#mcpwebhookconfig: MCPWebhookConfig CREATE/UPDATE. Every violation is reported
 * at once, in document order (validating before mutating, each webhook's fields in schema order).
 */

import { violation } from './messages/field-errors.ts'
import type { FieldViolation } from './messages/field-errors.ts'
import { isRecord } from './kube/object.ts'
import { excerpt, quoteValue } from './messages/render.ts'
import type { ValidationInput, ValidationResult } from './result.ts'
import { isSet, wrongType } from './kube/value-checks.ts'
import { checkWebhookSpec } from './webhook-spec.ts'
import type { Findings } from './webhook-spec.ts'

export const AT_LEAST_ONE_WEBHOOK = 'at least one validating or mutating webhook must be defined'
const WEBHOOK_LISTS = ['validating', 'mutating'] as const
const NAME_MAX_CHARS = 63

/** Validates an MCPWebhookConfig on CREATE/UPDATE; other operations have nothing to check. */
export function validateWebhookConfig(input: ValidationInput): ValidationResult {
  const found: Findings = { violations: [], warnings: [] }
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return found
  const spec: unknown = isRecord(input.object) ? input.object.spec : undefined
  if (isSet(spec) && !isRecord(spec))
    return { violations: [wrongType('spec', spec, 'object')], warnings: [] }

  const webhooks: { field: string; webhook: unknown }[] = []
  let malformedList = false
  for (const list of WEBHOOK_LISTS) {
    const value = isRecord(spec) ? spec[list] : undefined
    if (!isSet(value)) continue
    if (!Array.isArray(value)) {
      found.violations.push(wrongType(`spec.${list}`, value, 'array'))
      malformedList = true
      continue
    }
    value.forEach((webhook: unknown, i) => webhooks.push({ field: `spec.${list}[${i}]`, webhook }))
  }
  // A malformed list already says what is wrong; "define at least one" would only add noise.
  if (webhooks.length === 0 && !malformedList) {
    found.violations.push(violation.required('spec', AT_LEAST_ONE_WEBHOOK))
  }

  const names = new NameRegistry()
  for (const { field, webhook } of webhooks) {
    if (!isRecord(webhook)) {
      found.violations.push(wrongType(field, webhook, 'object'))
      continue
    }
    found.violations.push(...names.check(`${field}.name`, webhook.name))
    checkWebhookSpec(field, webhook, found)
  }
  return found
}

/**
 * Upper-cases, maps `-` to `_`, then every character outside `[A-Z0-9_]` to `_`. Upper-casing is
 * per code point and kept only when it yields one code point, like Go's unicode.ToUpper, so that
 * `ß` becomes `_` (not `SS`) and the result has one character per character of the name.
 */
export function sanitiseWebhookName(name: string): string {
  // The usual name (ASCII letters, digits, `-`, `_`): the same result without per-character work.
  if (PLAIN_NAME.test(name)) return name.toUpperCase().replaceAll('-', '_')
  let out = ''
  for (const char of name) {
    const upper = char.toUpperCase()
    const mapped = Array.from(upper).length === 1 ? upper : char
    out += /^[A-Z0-9_]$/.test(mapped) ? mapped : '_'
  }
  return out
}

const PLAIN_NAME = /^[A-Za-z0-9_-]*$/

/**
 * Webhook names are unique across both lists, not per list: the sanitised name alone becomes part
 * of file and variable identifiers, so `a` in validating and `a` in mutating would clash there.
 */
class NameRegistry {
  readonly #byName = new Map<string, string>()
  readonly #bySanitised = new Map<string, { name: string; field: string }>()

  check(field: string, name: unknown): FieldViolation[] {
    if (!isSet(name) || name === '') return [violation.required(field)]
    if (typeof name !== 'string') return [wrongType(field, name, 'string')]
    const violations: FieldViolation[] = []
    if (Array.from(name).length > NAME_MAX_CHARS) {
      violations.push(
        violation.invalid(field, name, `must be no more than ${NAME_MAX_CHARS} characters`),
      )
    }
    const sanitised = sanitiseWebhookName(name)
    const sameName = this.#byName.get(name)
    const sameSanitised = this.#bySanitised.get(sanitised)
    if (sameName !== undefined) {
      violations.push({ ...violation.duplicate(field, name), detail: `also used by ${sameName}` })
    } else if (sameSanitised !== undefined) {
      violations.push({
        ...violation.duplicate(field, name),
        detail: `collides with ${quoteValue(sameSanitised.name)} (${sameSanitised.field}) after sanitising to ${excerpt(sanitised, NAME_MAX_CHARS)}`,
      })
    } else {
      this.#byName.set(name, field)
      this.#bySanitised.set(sanitised, { name, field })
    }
    return violations
  }
}
