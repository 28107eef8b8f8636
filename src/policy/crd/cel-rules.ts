/**
 * A CRD version's `x-kubernetes-validations`, compiled once into a tree that mirrors the schema
 * but holds only the nodes with rules at or below them, so evaluating an object walks no more of
 * it than the rules need.
 */

import { compileCel } from './cel-program.ts'
import type { CelProgram } from './cel-program.ts'
import { EXT, itemsOf, mapValuesOf, propertiesOf, rulesOf } from './structural.ts'
import type { Schema, ValidationRule } from './structural.ts'

export interface CompiledRule {
  readonly source: ValidationRule
  readonly program: CelProgram
  readonly messageProgram?: CelProgram
}

export interface RuleNode {
  readonly schema: Schema
  readonly rules: readonly CompiledRule[]
  readonly properties: ReadonlyMap<string, RuleNode>
  readonly items?: RuleNode
  readonly mapValues?: RuleNode
}

/** A rule that cannot be evaluated: where it is in the schema, and why. */
export class RuleCompileError extends Error {
  override name = 'RuleCompileError'
}

/** The rule tree of a root schema, or undefined when it has no rules; throws RuleCompileError. */
export function compileRules(schema: Schema, path = ''): RuleNode | undefined {
  const rules = rulesOf(schema).map((rule) => compileRule(rule, path))
  const properties = new Map<string, RuleNode>()
  for (const [name, child] of Object.entries(propertiesOf(schema))) {
    const node = compileRules(child, path === '' ? name : `${path}.${name}`)
    if (node !== undefined) properties.set(name, node)
  }
  const itemSchema = itemsOf(schema)
  const items = itemSchema && compileRules(itemSchema, `${path}[*]`)
  const valueSchema = mapValuesOf(schema)
  const mapValues = valueSchema && compileRules(valueSchema, `${path}[*]`)
  if (rules.length === 0 && properties.size === 0 && !items && !mapValues) return undefined
  return {
    schema,
    rules,
    properties,
    ...(items ? { items } : {}),
    ...(mapValues ? { mapValues } : {}),
  }
}

function compileRule(rule: ValidationRule, path: string): CompiledRule {
  const where = `${path === '' ? '<root>' : path} ${EXT.validations}`
  const compiled = compileCel(rule.rule)
  if (!compiled.ok) {
    throw new RuleCompileError(
      `${where}: rule ${JSON.stringify(rule.rule)} does not compile: ${compiled.error}`,
    )
  }
  if (rule.messageExpression === undefined) return { source: rule, program: compiled.program }
  const message = compileCel(rule.messageExpression)
  if (!message.ok) {
    throw new RuleCompileError(
      `${where}: messageExpression ${JSON.stringify(rule.messageExpression)} does not compile: ${message.error}`,
    )
  }
  return { source: rule, program: compiled.program, messageProgram: message.program }
}

/** The list type of an array node (`atomic` when unset), for matching old items to new. */
export function listTypeOf(schema: Schema): string {
  const type = schema[EXT.listType]
  return typeof type === 'string' ? type : 'atomic'
}
