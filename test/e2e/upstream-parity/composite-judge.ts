/**
 * How the differential test reads ToolHive's composite-tool error against our violations.
 * ValidateCompositeToolConfig joins the top-level errors with "; " after "validation failed: "
 * (and stops at the first inside the steps and inside defaultResults); each part starts with the
 * element it names. Ours name elements as field paths, the same or deeper (Go's `spec.steps[2]:
 * forEach step must not have 'tool' field` is ours at `spec.steps[2].tool`). Two parts need
 * translating: a missing default is Go's `spec.steps[<id>].defaultResults[<field>]` and ours at
 * the step's index; a cycle is Go's `spec.steps: dependency cycle detected involving step "x"`,
 * x found by iterating a Go map (any step that reaches the cycle), and ours at the `dependsOn` of
 * a step on the cycle. And one is ours to warn about, not to refuse: `parameters` is a JSON
 * Schema, whose checks (upstream's `type` must be "object" among them) the port only warns about
 * (docs/enforcement.md, "Composite tool definitions").
 */

import { goQuote } from '../../../src/policy/go/quote.ts'
import type { Obj } from './composite-valid.ts'

export interface GoFinding {
  readonly text: string
  /** Ours warns about it: a warning starts with its path. */
  readonly warned: boolean
  /** The paths ours may name it at (several only for a defaultResults id two steps share). */
  readonly paths: readonly string[]
  /** For a cycle: the step Go names. */
  readonly cycleFrom?: string
}

const CYCLE = /^spec\.steps: dependency cycle detected involving step (".*")$/s
const DEFAULT =
  /^spec\.steps\[(.*?)\]\.defaultResults\[(.*?)\] is required: step (".*?") may be skipped/s
const PATH = /^spec(?:\.[A-Za-z]+|\[\d+\])*/
const WARNED = ['spec.parameters']

function stepIds(spec: Obj): string[] {
  return Array.isArray(spec['steps']) ? spec['steps'].map((step: Obj) => String(step['id'])) : []
}

/** The parts of Go's error and what each names. */
export function goFindings(error: string, spec: Obj): GoFinding[] {
  const ids = stepIds(spec)
  const indicesOf = (quoted: string): number[] =>
    ids.flatMap((id, i) => (goQuote(id) === quoted ? [i] : []))
  return error
    .replace(/^validation failed: /, '')
    .split(/; (?=spec[.[:])/)
    .map((text) => {
      const cycle = CYCLE.exec(text)
      if (cycle) {
        const from = ids[indicesOf(cycle[1]!)[0] ?? -1]
        return {
          text,
          warned: false,
          paths: [],
          ...(from === undefined ? {} : { cycleFrom: from }),
        }
      }
      const missing = DEFAULT.exec(text)
      if (missing)
        return {
          text,
          warned: false,
          paths: indicesOf(missing[3]!).map(
            (i) => `spec.steps[${i}].defaultResults[${missing[2]}]`,
          ),
        }
      const path = PATH.exec(text)?.[0] ?? text
      return { text, warned: WARNED.some((warned) => within(path, warned)), paths: [path] }
    })
}

/** `ours` is `go`'s element or inside it (a path segment boundary follows). */
export function within(ours: string, go: string): boolean {
  return ours === go || (ours.startsWith(go) && /^[.[]/.test(ours.slice(go.length)))
}

/** The step indices each step depends on (unknown ids dropped). */
function graph(spec: Obj): number[][] {
  const ids = stepIds(spec)
  return (spec['steps'] as Obj[]).map((step) =>
    ((step['dependsOn'] ?? []) as string[]).flatMap((id) => {
      const i = ids.indexOf(id)
      return i < 0 ? [] : [i]
    }),
  )
}

/** Whether step `to` can be reached from step `from` by one or more dependsOn edges. */
function reaches(edges: readonly number[][], from: number, to: number): boolean {
  const seen = new Set<number>()
  const stack = [...(edges[from] ?? [])]
  while (stack.length > 0) {
    const next = stack.pop()!
    if (next === to) return true
    if (seen.has(next)) continue
    seen.add(next)
    stack.push(...(edges[next] ?? []))
  }
  return false
}

/** Our path names a cycle: `spec.steps[i].dependsOn` of a step on one. */
function cycleStep(path: string, spec: Obj): number | undefined {
  const match = /^spec\.steps\[(\d+)\]\.dependsOn$/.exec(path)
  if (!match) return undefined
  const i = Number(match[1])
  return reaches(graph(spec), i, i) ? i : undefined
}

/**
 * One of our paths answers Go's finding; for a finding ours warns about, one of our warnings
 * (which start with the path they are about).
 */
export function answered(
  finding: GoFinding,
  ours: { readonly paths: readonly string[]; readonly warnings: readonly string[] },
  spec: Obj,
): boolean {
  if (finding.warned)
    return ours.warnings.some((warning) =>
      finding.paths.some((go) => within(/^[^:]*/.exec(warning)![0], go)),
    )
  if (finding.cycleFrom !== undefined) {
    const from = stepIds(spec).indexOf(finding.cycleFrom)
    return ours.paths.some((path) => {
      const on = cycleStep(path, spec)
      return on !== undefined && (on === from || reaches(graph(spec), from, on))
    })
  }
  return ours.paths.some((path) => finding.paths.some((go) => within(path, go)))
}

/** Our path is explained by one of Go's findings (for an input with one defect only). */
export function explained(path: string, findings: readonly GoFinding[], spec: Obj): boolean {
  return findings.some((finding) => {
    if (finding.warned) return false
    if (finding.cycleFrom !== undefined) return cycleStep(path, spec) !== undefined
    return finding.paths.some((go) => within(path, go))
  })
}
