/**
 * The defaultResults rule: a step ToolHive may skip (a condition, or onError continue) must
 * declare a default for every output field the workflow references in a counted place: another
 * step's condition, arguments (top-level string values) or message, its own condition, or an
 * output value at any depth. Each reference form of composite-templates.ts is put in each place,
 * with and without the default; the same forms in places the rule does not read (a forEach's
 * collection or inner step, a nested argument value, an output default, the description) need
 * none.
 */

import { FIELDS, REFERENCE_FORMS } from './composite-templates.ts'
import type { Definition, Obj } from './composite-valid.ts'
import { fillDefaults, forEachStep, validDefinition } from './composite-valid.ts'
import type { Random } from './random.ts'

export interface DefaultsCase {
  readonly name: string
  readonly missing: boolean
  readonly spec: Obj
}

const TARGET = 'target_step'

type Place = (definition: Definition, text: string, target: number, random: Random) => void

/** Another step than the target, replaced when the place needs a kind of step. */
function other(definition: Definition, target: number, replace?: Obj): Obj {
  const index = (target + 1) % definition.steps.length
  const step = definition.steps[index]!
  if (replace === undefined) return step
  const fresh: Obj = {
    id: step['id'],
    ...(step['dependsOn'] ? { dependsOn: step['dependsOn'] } : {}),
  }
  definition.steps[index] = { ...fresh, ...replace }
  return definition.steps[index]
}

function outputProperties(definition: Definition): Obj {
  definition.spec['output'] ??= { properties: {} }
  return definition.spec['output'].properties
}

const COUNTED: readonly (readonly [string, Place])[] = [
  ['another step condition', (d, text, t) => (other(d, t)['condition'] = text)],
  ['own condition', (d, text, t) => (d.steps[t]!['condition'] = text)],
  [
    'arguments',
    (d, text, t) => {
      const step = other(d, t)
      step['arguments'] = { ...step['arguments'], ref: text }
    },
  ],
  ['own arguments', (d, text, t) => (d.steps[t]!['arguments'] = { ref: text })],
  ['elicitation message', (d, text, t) => other(d, t, { type: 'elicitation', message: text })],
  ['tool step message', (d, text, t) => other(d, t, { type: 'tool', tool: 'x', message: text })],
  [
    'forEach arguments',
    (d, text, t, random) =>
      other(d, t, { ...forEachStep(random, [], []), arguments: { ref: text } }),
  ],
  ['output value', (d, text) => (outputProperties(d)['ref'] = { type: 'string', value: text })],
  [
    'nested output value',
    (d, text) =>
      (outputProperties(d)['outer'] = {
        type: 'object',
        properties: {
          middle: { type: 'object', properties: { ref: { type: 'string', value: text } } },
        },
      }),
  ],
]

const NOT_COUNTED: readonly (readonly [string, Place])[] = [
  [
    'forEach collection',
    (d, text, t, random) => other(d, t, { ...forEachStep(random, [], []), collection: text }),
  ],
  [
    'forEach inner step arguments',
    (d, text, t) =>
      other(d, t, {
        type: 'forEach',
        collection: '{{ json .params.items }}',
        step: { tool: 'x', arguments: { ref: text } },
      }),
  ],
  ['nested argument value', (d, text, t) => (other(d, t)['arguments'] = { nested: { ref: text } })],
  [
    'output default',
    (d, text) => (outputProperties(d)['ref'] = { type: 'string', value: 'v', default: text }),
  ],
  ['description', (d, text) => (d.spec['description'] = text)],
]

/** A valid definition whose step `target` has the id TARGET and may be skipped. */
function withSkippableTarget(
  random: Random,
  place: string,
): { definition: Definition; target: number } {
  const definition = validDefinition(random, random.int(2, 6))
  const target = random.int(0, definition.steps.length - 1)
  const step = definition.steps[target]!
  const old = step['id']
  step['id'] = TARGET
  for (const s of definition.steps)
    if (s['dependsOn'])
      s['dependsOn'] = s['dependsOn'].map((id: string) => (id === old ? TARGET : id))
  // Its own condition makes it skippable when that is the place; otherwise either way.
  if (place !== 'own condition') {
    if (random.chance(0.5)) step['condition'] = '{{ .params.flag }}'
    else step['onError'] = { action: 'continue' }
  }
  return { definition, target }
}

export function defaultsCases(random: Random): DefaultsCase[] {
  const cases: DefaultsCase[] = []
  const places = [
    ...COUNTED.map(([name, put]) => [name, put, true] as const),
    ...NOT_COUNTED.map(([name, put]) => [name, put, false] as const),
  ]
  for (const [place, put, placeCounted] of places) {
    for (const form of REFERENCE_FORMS) {
      const counted = placeCounted && form.counted
      for (const missing of counted ? [false, true] : [false]) {
        const { definition, target } = withSkippableTarget(random, place)
        const field = random.pick(FIELDS)
        put(definition, form.text(TARGET, field), target, random)
        definition.references.push({ id: TARGET, field, counted })
        fillDefaults(definition, random)
        const step = definition.steps[target]!
        if (missing) {
          Reflect.deleteProperty(step['defaultResults'], field)
          if (Object.keys(step['defaultResults']).length === 0 && random.chance(0.5))
            delete step['defaultResults']
        }
        cases.push({
          name: `${form.name} reference in ${place}, ${counted ? (missing ? 'default missing' : 'default given') : 'not counted'}`,
          missing,
          spec: definition.spec,
        })
      }
    }
  }
  return cases
}
