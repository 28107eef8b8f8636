/**
 * ToolHive's composite tools (docs/enforcement.md, "Composite tool definitions"): a
 * VirtualMCPCompositeToolDefinition, and a VirtualMCPServer's inline `spec.config.compositeTools`.
 * Their CRD holds no rule, so nothing checks a workflow until the operator reconciles it or the
 * vmcp loads it: a `dependsOn` cycle, a duplicate step id or a tool step without a tool becomes a
 * vmcp that does not start. This is a port of upstream's ValidateCompositeToolConfig: its
 * structural rules are violations, every one reported at its field (upstream stops at the first
 * inside the steps); its template and JSON Schema checks, whose ports are not proven equal to
 * Go's libraries, are warnings.
 */

import { decodeCompositeTool } from './composite-decode.ts'
import { templateFindings } from './composite-defaults.ts'
import { parameterWarnings, schemaWarnings } from './composite-schemas.ts'
import { stepIndexById, stepViolations } from './composite-steps.ts'
import { isRecord, jsonEqual } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'
import { isSet } from './kube/value-checks.ts'
import { violation } from './messages/field-errors.ts'
import type { FieldViolation } from './messages/field-errors.ts'
import { formatViolation } from './messages/render.ts'
import { keptWarning, ratchet } from './ratchet.ts'
import type { ValidationInput, ValidationResult } from './result.ts'

/**
 * Every structural violation of one composite tool config at `path` ("spec" or
 * "spec.config.compositeTools[0]"), and warnings for what is not ported with parity (templates,
 * JSON Schemas).
 */
export function compositeToolFindings(
  tool: unknown,
  path: string,
): { violations: FieldViolation[]; warnings: string[] } {
  const { config, violations: unreadable, unreadable: fields } = decodeCompositeTool(tool, path)
  const found: FieldViolation[] = []
  if (!config.name) found.push(violation.required(`${path}.name`))
  if (!config.description) found.push(violation.required(`${path}.description`))
  const steps = config.steps ?? []
  if (steps.length === 0)
    found.push(violation.required(`${path}.steps`, 'must have at least one step'))
  if (config.timeout !== undefined && config.timeout.nanoseconds < 0n)
    found.push(violation.invalid(`${path}.timeout`, config.timeout.text, 'cannot be negative'))
  const warnings = parameterWarnings(config.parameters, `${path}.parameters`)
  const byId = stepIndexById(steps, `${path}.steps`, found)
  found.push(...stepViolations(steps, `${path}.steps`, byId))
  steps.forEach((step, i) => {
    warnings.push(...schemaWarnings(step.schema, `${path}.steps[${i}].schema`))
  })
  const templates = templateFindings(config, path)
  found.push(...templates.violations)
  warnings.push(...templates.warnings)
  // What Go could not decode is reported as such; a rule reading the field, or what lies under
  // it, would only repeat it.
  const readable = found.filter((one) => !under(one.field, fields))
  return { violations: [...unreadable, ...readable], warnings }
}

/** Whether `field` is one of `fields` or lies under one (`a.b[0]` under `a.b`). */
function under(field: string, fields: ReadonlySet<string>): boolean {
  if (fields.size === 0) return false
  for (let end = 0; end <= field.length; end++) {
    const boundary = end === field.length || field[end] === '.' || field[end] === '['
    if (boundary && fields.has(field.slice(0, end))) return true
  }
  return false
}

/** The findings of a stored or written VirtualMCPCompositeToolDefinition, at `spec`. */
function definitionFindings(object: KubeObject): ValidationResult {
  return compositeToolFindings(object.spec, 'spec')
}

/**
 * The rule `composite-tool-definition`: a VirtualMCPCompositeToolDefinition's CREATE and UPDATE.
 * An UPDATE is denied only for violations the stored object did not have at the same value
 * (ratchet.ts); one that leaves `spec` as it was (labels, annotations, finalizers, status) or
 * writes an object being deleted is never denied, so metadata can always be edited and a
 * finalizer always removed.
 */
export function validateCompositeToolDefinition(input: ValidationInput): ValidationResult {
  const { operation, object, oldObject } = input
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || object === undefined)
    return { violations: [], warnings: [] }
  if (operation === 'UPDATE') {
    const reason = isSet(object.metadata?.deletionTimestamp)
      ? 'kept while the object is deleted'
      : oldObject !== undefined && jsonEqual(object.spec, oldObject.spec)
        ? 'pre-existing violation kept'
        : undefined
    if (reason !== undefined) {
      const found = definitionFindings(object)
      const kept = found.violations.map((one) => keptWarning(one, reason))
      return { violations: [], warnings: [...found.warnings, ...kept] }
    }
  }
  return ratchet(input, definitionFindings)
}

/**
 * The violations of a stored definition, rendered one per line (`spec.steps[1].id: Duplicate
 * value: "a"`), for status.validationErrors.
 */
export function compositeToolDefinitionErrors(object: KubeObject): string[] {
  return definitionFindings(object).violations.map(formatViolation)
}

/**
 * A VirtualMCPServer's inline composite tools: each one's findings, and a name used twice, as
 * warnings (the `workload` rule only warns). The operator validates them at reconcile and fails
 * the VirtualMCPServer on the first (condition Valid=False, reason ValidationFailed); a line
 * before each tool's violations says so, since each warning is cut at 120 characters.
 */
export function inlineCompositeToolWarnings(object: KubeObject): string[] {
  const spec = isRecord(object.spec) ? object.spec : {}
  const tools = isRecord(spec.config) ? spec.config.compositeTools : undefined
  if (!Array.isArray(tools)) return []
  const names = new Set<string>()
  const warnings: string[] = []
  tools.forEach((tool: unknown, i) => {
    const path = `spec.config.compositeTools[${i}]`
    const found = compositeToolFindings(tool, path)
    const name = isRecord(tool) && typeof tool.name === 'string' ? tool.name : ''
    const violations = names.has(name)
      ? [violation.duplicate(`${path}.name`, name), ...found.violations]
      : found.violations
    names.add(name)
    if (violations.length > 0)
      warnings.push(
        `${path} is invalid: the operator will fail this VirtualMCPServer (Valid=False)`,
        ...violations.map(formatViolation),
      )
    warnings.push(...found.warnings)
  })
  return warnings
}
