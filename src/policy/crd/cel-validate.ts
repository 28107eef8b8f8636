/**
 * Evaluates a compiled rule tree over an object, as apiextensions-apiserver's CEL validator does:
 * each rule where its node has a value; a transition rule (one reading `oldSelf`) only on UPDATE
 * and where the old object has a value at the same place (map keys, and the items of
 * `x-kubernetes-list-type: map` lists by their keys, correlate; atomic list items do not).
 * Failures are worded as kube-apiserver words them: `spec.sessionStorage: Invalid value: tls is
 * only supported when provider is redis` (an object's or list's value is not shown, a scalar's
 * is: `spec.proxyReadTimeout: Invalid value: "-1s": …`).
 */

import { isRecord } from '../kube/object.ts'
import { violation } from '../messages/field-errors.ts'
import type { FieldViolation } from '../messages/field-errors.ts'
import { celString, isCelError } from './cel-program.ts'
import { listTypeOf } from './cel-rules.ts'
import type { CompiledRule, RuleNode } from './cel-rules.ts'
import { toCel } from './cel-values.ts'
import { EXT, isScalarSchema, typeOf } from './structural.ts'

interface Outcome {
  readonly violations: FieldViolation[]
  readonly warnings: string[]
}

/** Violations of every rule in `tree` over `value` (the old value given on UPDATE). */
export function celViolations(tree: RuleNode, value: unknown, old: unknown): Outcome {
  const outcome: Outcome = { violations: [], warnings: [] }
  walk(tree, value, old, '', outcome)
  return outcome
}

function walk(node: RuleNode, value: unknown, old: unknown, path: string, out: Outcome): void {
  if (value === undefined || value === null) return
  if (node.rules.length > 0) {
    const self = toCel(value, node.schema)
    const oldSelf = old === undefined || old === null ? undefined : toCel(old, node.schema)
    for (const rule of node.rules) evaluate(rule, node, value, self, oldSelf, path, out)
  }
  if (Array.isArray(value)) {
    if (node.items === undefined) return
    const items = node.items
    value.forEach((item: unknown, i) => {
      walk(items, item, oldItem(node, item, old), `${path}[${i}]`, out)
    })
    return
  }
  if (!isRecord(value)) return
  const oldRecord = isRecord(old) ? old : undefined
  for (const [name, child] of node.properties) {
    if (Object.hasOwn(value, name)) {
      walk(child, value[name], oldRecord?.[name], path === '' ? name : `${path}.${name}`, out)
    }
  }
  if (node.mapValues !== undefined) {
    for (const key of Object.keys(value)) {
      if (node.properties.has(key)) continue
      const old =
        oldRecord !== undefined && Object.hasOwn(oldRecord, key) ? oldRecord[key] : undefined
      walk(node.mapValues, value[key], old, `${path}[${key}]`, out)
    }
  }
}

/** The old list's item that a new item stands for: same map keys, or the same set member. */
function oldItem(node: RuleNode, item: unknown, old: unknown): unknown {
  if (!Array.isArray(old)) return undefined
  const type = listTypeOf(node.schema)
  if (type === 'set') return old.find((o: unknown) => JSON.stringify(o) === JSON.stringify(item))
  if (type !== 'map' || !isRecord(item)) return undefined
  const keys = node.schema[EXT.listMapKeys]
  if (!Array.isArray(keys)) return undefined
  return old.find(
    (o: unknown) =>
      isRecord(o) &&
      keys.every((k) => JSON.stringify(o[String(k)]) === JSON.stringify(item[String(k)])),
  )
}

function evaluate(
  rule: CompiledRule,
  node: RuleNode,
  value: unknown,
  self: unknown,
  oldSelf: unknown,
  path: string,
  out: Outcome,
): void {
  const source = rule.source
  if (source.optionalOldSelf === true) {
    // CEL optional types are not in @bufbuild/cel: say so rather than guess.
    out.warnings.push(
      `${path || '<root>'}: rule not evaluated offline (optionalOldSelf): ${source.rule}`,
    )
    return
  }
  if (rule.program.readsOldSelf && oldSelf === undefined) return // a transition rule on CREATE
  const bindings = rule.program.readsOldSelf ? { self, oldSelf } : { self }
  const result = rule.program.run(bindings)
  if (result === true) return
  const shown = isScalarSchema(node.schema) ? value : undefined
  if (isCelError(result) || typeof result !== 'boolean') {
    const why = isCelError(result) ? result.message : 'rule did not evaluate to a bool'
    out.violations.push(
      violation.invalid(
        path,
        typeOf(node.schema) || 'object',
        `${why} evaluating rule: ${ruleText(source)}`,
      ),
    )
    return
  }
  const field = joinPath(path, renderFieldPath(source.fieldPath ?? ''))
  const message = messageOf(rule, bindings)
  switch (source.reason) {
    case 'FieldValueForbidden':
      out.violations.push(violation.forbidden(field, message))
      return
    case 'FieldValueRequired':
      out.violations.push(violation.required(field, message))
      return
    case 'FieldValueDuplicate':
      // apimachinery's Duplicate shows neither the value nor the message (v1.37).
      out.violations.push({ type: 'FieldValueDuplicate', field, detail: '' })
      return
    default:
      out.violations.push(violation.invalid(field, shown, message))
  }
}

/** The message: messageExpression's when it yields a usable string, else message, else the rule. */
function messageOf(rule: CompiledRule, bindings: Readonly<Record<string, unknown>>): string {
  if (rule.messageProgram !== undefined) {
    const text = celString(rule.messageProgram.run(bindings))
    if (text !== undefined && text.trim() !== '' && !text.includes('\n')) return text
  }
  const message = rule.source.message?.trim() ?? ''
  return message === '' ? `failed rule: ${ruleText(rule.source)}` : message
}

function ruleText(rule: CompiledRule['source']): string {
  const message = rule.message?.trim() ?? ''
  return message === '' ? rule.rule.trim() : message
}

function joinPath(path: string, suffix: string): string {
  return path === '' ? suffix.replace(/^\./, '') : path + suffix
}

/** `.a.b['x.y']` as a field path suffix: `.a.b[x.y]`. */
function renderFieldPath(fieldPath: string): string {
  return fieldPath.replaceAll(/\[\s*'((?:[^'\\]|\\.)*)'\s*\]/g, (_, key: string) => `[${key}]`)
}
