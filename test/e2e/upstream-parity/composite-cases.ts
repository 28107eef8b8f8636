/**
 * Every composite definition the differential test judges, from one seed: valid workflows; each
 * structural rule of ValidateCompositeToolConfig broken alone, on several steps of several
 * workflows; the defaultResults rule in every counted and uncounted place; dependsOn cycles of
 * every length and acyclic graphs of the same sizes; combinations of several defects; and what
 * the CRD admits but Go's types cannot hold, or its validation panics on.
 */

import type { Defect } from './composite-defects.ts'
import { DEFECTS, stepFor } from './composite-defects.ts'
import { defaultsCases } from './composite-defaults.ts'
import { decodingCases } from './composite-decoding.ts'
import { acyclic, cycles } from './composite-graphs.ts'
import type { Definition, Obj } from './composite-valid.ts'
import { fillDefaults, skippable, validDefinition } from './composite-valid.ts'
import type { Random } from './random.ts'
import { seeded } from './random.ts'

export interface CompositeCase {
  readonly name: string
  /**
   * `one`: exactly one rule broken; `cycle`: one or more dependency cycles only; `decode`: Go's
   * types cannot hold it; `panic`: Go's validation panics on it (composite-decoding.ts).
   */
  readonly defects: 'none' | 'one' | 'several' | 'cycle' | 'decode' | 'panic'
  readonly spec: Obj
}

const PLACEMENTS = 3

/** Breaks `defect` (its variant `variant`) on step `index` of `definition`, or on the spec. */
function breakRule(
  definition: Definition,
  defect: Defect,
  variant: number,
  index: number,
  random: Random,
): void {
  const [, apply] = defect.variants[variant]!
  if (defect.scope === 'spec') {
    apply(definition.spec, { definition, index, random })
    return
  }
  const old = definition.steps[index]!
  if (defect.changesId) {
    for (const step of definition.steps)
      if (step['dependsOn'])
        step['dependsOn'] = step['dependsOn'].filter((id: string) => id !== old['id'])
    delete old['dependsOn']
  }
  const step = stepFor(defect.scope, old, random)
  definition.steps[index] = step
  // The replaced step's condition is gone: its defaults are recomputed with everyone else's.
  fillDefaults(definition, random)
  apply(step, { definition, index, random })
}

/** A valid definition of 2 to 7 steps, at least one of which cannot be skipped. */
function base(random: Random): Definition {
  const definition = validDefinition(random, random.int(2, 7))
  const [first] = definition.steps
  if (definition.steps.every(skippable) && first) {
    delete first['condition']
    delete first['onError']
    fillDefaults(definition, random)
  }
  return definition
}

function singleDefects(random: Random): CompositeCase[] {
  const cases: CompositeCase[] = []
  for (const defect of DEFECTS)
    defect.variants.forEach(([how], variant) => {
      for (let placement = 0; placement < (defect.scope === 'spec' ? 1 : PLACEMENTS); placement++) {
        const definition = base(random)
        // A duplicated id copies another step that cannot be skipped (base() leaves one).
        const candidates = definition.steps
          .map((_, i) => i)
          .filter((i) => definition.steps.some((step, j) => j !== i && !skippable(step)))
        const index = random.pick(candidates)
        breakRule(definition, defect, variant, index, random)
        cases.push({
          name: `${defect.rule} (${how})${defect.scope === 'spec' ? '' : ` at step ${index}`}`,
          defects: 'one',
          spec: definition.spec,
        })
      }
    })
  return cases
}

function combinations(random: Random, count: number): CompositeCase[] {
  const cases: CompositeCase[] = []
  const breakable = DEFECTS.filter((defect) => !defect.changesId)
  while (cases.length < count) {
    const definition = base(random)
    const chosen = random.shuffled(breakable).slice(0, random.int(2, 4))
    const indices = random.shuffled(definition.steps.map((_, i) => i))
    const names: string[] = []
    for (const defect of chosen) {
      if (defect.scope !== 'spec' && indices.length === 0) continue
      const index = defect.scope === 'spec' ? 0 : indices.pop()!
      const variant = random.int(0, defect.variants.length - 1)
      breakRule(definition, defect, variant, index, random)
      names.push(
        `${defect.rule} (${defect.variants[variant]![0]})${defect.scope === 'spec' ? '' : ` at step ${index}`}`,
      )
    }
    if (names.length >= 2)
      cases.push({ name: names.join(' + '), defects: 'several', spec: definition.spec })
  }
  return cases
}

/**
 * Cycles with other defects: the top-level ones Go reports beside the cycle, a step's that it
 * reports instead (its steps pass ends before the cycle pass).
 */
function cyclesWithMore(random: Random): CompositeCase[] {
  return cycles(random)
    .filter((_, i) => i % 5 === 0)
    .map(({ name, spec }, i) => {
      const steps = spec['steps'] as Obj[]
      const more = [
        ['no name', () => (spec['name'] = '')],
        ['no description', () => Reflect.deleteProperty(spec, 'description')],
        [
          'an unknown dependency',
          () => {
            const step = random.pick(steps)
            step['dependsOn'] = [...(step['dependsOn'] ?? []), 'missing']
          },
        ],
        ['an invalid tool', () => (random.pick(steps)['tool'] = 'not a tool')],
      ] as const
      const [what, apply] = more[i % more.length]!
      apply()
      return { name: `${name} with ${what}`, defects: 'several' as const, spec }
    })
}

export function compositeCases(): CompositeCase[] {
  const random = seeded(0x5eed_c0de)
  const cases: CompositeCase[] = []
  for (let i = 0; i < 150; i++)
    cases.push({ name: `valid workflow ${i}`, defects: 'none', spec: validDefinition(random).spec })
  cases.push(...singleDefects(random))
  for (const { name, missing, spec } of defaultsCases(random))
    cases.push({ name, defects: missing ? 'one' : 'none', spec })
  for (const { name, spec, cycles: count } of [...cycles(random), ...acyclic(random)])
    cases.push({ name, defects: count === 0 ? 'none' : 'cycle', spec })
  cases.push(...combinations(random, 120))
  cases.push(...cyclesWithMore(random))
  cases.push(...decodingCases())
  return cases
}
