/**
 * CEL expressions of `x-kubernetes-validations`, compiled once with @bufbuild/cel (the CEL
 * standard library and its strings extension: `has`, `size`, `all`, `exists`, `filter`,
 * `duration`, `matches`, `startsWith`, `split`, `lowerAscii`, … — all the ToolHive CRDs use).
 * The libraries Kubernetes adds (lists, regex, url, quantity, ip, cidr, format, semver, optional
 * types) are not provided: a rule that calls one of their functions is refused when the CRD is
 * read, so no rule is ever half-evaluated. Rules are parsed, not type-checked against the schema
 * as the API server does when the CRD is created (a CRD the cluster accepted needs neither).
 */

import {
  CelScalar,
  celEnv,
  celError,
  celFunc,
  isCelError,
  objectType,
  parse,
  plan,
} from '@bufbuild/cel'
import type { CelResult } from '@bufbuild/cel'
import { strings } from '@bufbuild/cel/ext'
import { create } from '@bufbuild/protobuf'
import { DurationSchema } from '@bufbuild/protobuf/wkt'
import { parseGoDuration } from '../go/duration.ts'

/**
 * `duration(string)` as cel-go reads it: Go's time.ParseDuration (CEL-ES takes `''` for zero),
 * failing with cel-go's words, which the API server puts in a rule's runtime error.
 */
const goDuration = celFunc('duration', [CelScalar.STRING], objectType(DurationSchema), (text) => {
  const parsed = parseGoDuration(text)
  if (!parsed.ok)
    throw celError("type conversion error from 'string' to 'google.protobuf.Duration'")
  const seconds = parsed.nanoseconds / 1_000_000_000n
  return create(DurationSchema, {
    seconds,
    nanos: Number(parsed.nanoseconds - seconds * 1_000_000_000n),
  })
})

const env = celEnv({ funcs: [...strings, goDuration] })

export interface CelProgram {
  /** Evaluates with `self` (and `oldSelf` for a transition rule) bound. */
  readonly run: (bindings: Readonly<Record<string, unknown>>) => CelResult
  /** Whether the expression reads `oldSelf`: a transition rule. */
  readonly readsOldSelf: boolean
}

export type CompileResult =
  | { readonly ok: true; readonly program: CelProgram }
  | { readonly ok: false; readonly error: string }

/**
 * Compiled expressions by their text. CRDs repeat rules wherever they embed the same type (the
 * 14 ToolHive CRDs hold 347 rules, 86 of them distinct), and a compiled program keeps no state,
 * so each text is parsed and planned once per process. Bounded by the CRDs read.
 */
const compiled = new Map<string, CompileResult>()

/** Parses and plans `expression`, or says why it cannot be evaluated here. */
export function compileCel(expression: string): CompileResult {
  let result = compiled.get(expression)
  if (result === undefined) {
    result = compileUncached(expression)
    compiled.set(expression, result)
  }
  return result
}

function compileUncached(expression: string): CompileResult {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(expression)
  } catch (error) {
    return { ok: false, error: (error as Error).message }
  }
  const names = { functions: new Set<string>(), identifiers: new Set<string>() }
  collectNames(parsed.expr, names)
  const missing = [...names.functions].filter(
    (f) => !isOperator(f) && env.funcs.find(f) === undefined,
  )
  if (missing.length > 0) {
    return {
      ok: false,
      error: `undeclared reference to ${missing.map((f) => `'${f}'`).join(', ')} (a Kubernetes CEL library not provided offline)`,
    }
  }
  const planned = plan(env, parsed) as (bindings: Record<string, unknown>) => CelResult
  return {
    ok: true,
    program: {
      run: (bindings) => planned(bindings),
      readsOldSelf: names.identifiers.has('oldSelf'),
    },
  }
}

/** Operators (`_==_`, `@in`, `!_`) are the planner's own, not library functions. */
function isOperator(name: string): boolean {
  return name.startsWith('_') || name.startsWith('@') || name.startsWith('!')
}

/** Every function called and identifier read, found by walking the parsed expression. */
function collectNames(
  node: unknown,
  names: { functions: Set<string>; identifiers: Set<string> },
): void {
  if (typeof node !== 'object' || node === null) return
  if (Array.isArray(node)) {
    for (const child of node) collectNames(child, names)
    return
  }
  const kind = (
    node as { exprKind?: { case?: string; value?: { function?: string; name?: string } } }
  ).exprKind
  if (kind?.case === 'callExpr' && typeof kind.value?.function === 'string')
    names.functions.add(kind.value.function)
  if (kind?.case === 'identExpr' && typeof kind.value?.name === 'string')
    names.identifiers.add(kind.value.name)
  for (const [key, value] of Object.entries(node)) {
    if (key !== '$typeName' && typeof value === 'object') collectNames(value, names)
  }
}

/** A CEL result as the string a rule's verdict or message must be, or undefined. */
export function celString(result: CelResult): string | undefined {
  return typeof result === 'string' ? result : undefined
}

export { isCelError }
