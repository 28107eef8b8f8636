/**
 * The structural rules of ToolHive's ValidateCompositeToolConfig, each as ways to break it on an
 * otherwise valid definition without breaking anything else (no template or JSON Schema made
 * invalid, nothing the CRD schema refuses). A step-level defect gets a fresh valid step of the
 * kind it needs (keeping the step's id and dependencies), then breaks it.
 */

import type { Definition, Obj } from './composite-valid.ts'
import { forEachStep, skippable } from './composite-valid.ts'
import type { Random } from './random.ts'

export type Scope = 'spec' | 'step' | 'tool' | 'elicitation' | 'forEach'

export interface Defect {
  readonly rule: string
  readonly scope: Scope
  /**
   * The defect changes the step's id: the generator first makes sure no step depends on the step
   * and it depends on none, so the old id leaves no dangling dependency behind (a second defect).
   */
  readonly changesId?: boolean
  /** Each breaks the spec (scope `spec`) or the chosen step; a name says how. */
  readonly variants: readonly (readonly [string, (target: Obj, context: Context) => void])[]
}

export interface Context {
  readonly definition: Definition
  readonly index: number
  readonly random: Random
}

const set =
  (field: string, value: unknown) =>
  (target: Obj): void => {
    target[field] = value
  }
const unset =
  (field: string) =>
  (target: Obj): void => {
    Reflect.deleteProperty(target, field)
  }
const setInner =
  (field: string, value: unknown) =>
  (target: Obj): void => {
    if (value === undefined) Reflect.deleteProperty(target['step'], field)
    else target['step'][field] = value
  }

const INVALID_TOOLS = ['-x', '.x', '_x', 'a b', 'tool!', 'ünï', 'a/b', 'x\n', ' x', 'a:b', 'é']
const INVALID_ITEM_VARS = ['1x', 'a-b', 'ß', 'item var', 'x.y', '$x', 'é', 'x\n']

export const DEFECTS: readonly Defect[] = [
  {
    rule: 'name is required',
    scope: 'spec',
    variants: [['empty', set('name', '')]],
  },
  {
    rule: 'description is required',
    scope: 'spec',
    variants: [
      ['absent', unset('description')],
      ['empty', set('description', '')],
    ],
  },
  {
    rule: 'parameters need type object',
    scope: 'spec',
    variants: [
      ['no type', set('parameters', { properties: { q: { type: 'string' } } })],
      ['only properties', set('parameters', { properties: {} })],
      ['type a list', set('parameters', { type: ['object'] })],
      ['type a number', set('parameters', { type: 1 })],
      ['type an object', set('parameters', { type: { object: true } })],
      ['type array', set('parameters', { type: 'array' })],
      ['type Object', set('parameters', { type: 'Object' })],
      ['type empty', set('parameters', { type: '' })],
    ],
  },
  {
    rule: 'id is required',
    scope: 'step',
    changesId: true,
    variants: [['empty', set('id', '')]],
  },
  {
    rule: 'id is duplicated',
    scope: 'step',
    changesId: true,
    variants: [
      [
        'as another step',
        (step, { definition, index }) => {
          // A step that cannot be skipped: two steps of one id, one skippable, would be a second
          // defect for the defaultResults rule (which keys steps by id).
          const other = definition.steps.find((s, i) => i !== index && !skippable(s))
          if (other === undefined) throw new Error('no step to duplicate')
          step['id'] = other['id']
        },
      ],
    ],
  },
  {
    rule: 'tool and message without a type',
    scope: 'tool',
    variants: [
      [
        'both',
        (step) => {
          delete step['type']
          step['message'] = 'Proceed?'
        },
      ],
    ],
  },
  {
    rule: 'tool is required',
    scope: 'tool',
    variants: [
      ['absent', unset('tool')],
      ['empty', set('tool', '')],
      [
        'absent with explicit type',
        (step) => {
          step['type'] = 'tool'
          delete step['tool']
        },
      ],
    ],
  },
  {
    rule: 'tool must be a valid tool name',
    scope: 'tool',
    variants: INVALID_TOOLS.map((tool) => [JSON.stringify(tool), set('tool', tool)] as const),
  },
  {
    rule: 'elicitation needs a message',
    scope: 'elicitation',
    variants: [
      ['absent', unset('message')],
      ['empty', set('message', '')],
    ],
  },
  {
    rule: 'forEach must not have tool or message',
    scope: 'forEach',
    variants: [
      ['tool', set('tool', 'fetch')],
      ['invalid tool', set('tool', 'not a tool')],
      ['message', set('message', 'hi')],
    ],
  },
  {
    rule: 'forEach needs a collection',
    scope: 'forEach',
    variants: [
      ['absent', unset('collection')],
      ['empty', set('collection', '')],
    ],
  },
  {
    rule: 'forEach needs a step',
    scope: 'forEach',
    variants: [['absent', unset('step')]],
  },
  {
    rule: 'forEach inner step must be a tool step',
    scope: 'forEach',
    variants: ['elicitation', 'forEach', 'bogus', 'Tool', ' tool'].map(
      (type) => [type, setInner('type', type)] as const,
    ),
  },
  {
    rule: 'forEach inner step needs a valid tool',
    scope: 'forEach',
    variants: [
      ['empty step', set('step', {})],
      ['absent', setInner('tool', undefined)],
      ['empty', setInner('tool', '')],
      ...INVALID_TOOLS.slice(0, 5).map(
        (tool) => [JSON.stringify(tool), setInner('tool', tool)] as const,
      ),
    ],
  },
  {
    rule: 'itemVar must be a Go identifier other than index',
    scope: 'forEach',
    variants: [...INVALID_ITEM_VARS, 'index'].map(
      (itemVar) => [JSON.stringify(itemVar), set('itemVar', itemVar)] as const,
    ),
  },
  {
    rule: 'maxParallel within 0..50',
    scope: 'forEach',
    variants: [-1, -1000, 51, 100, 1000, 2147483648].map(
      (value) => [String(value), set('maxParallel', value)] as const,
    ),
  },
  {
    rule: 'maxIterations within 0..1000',
    scope: 'forEach',
    variants: [-1, -50, 1001, 5000, 2147483648].map(
      (value) => [String(value), set('maxIterations', value)] as const,
    ),
  },
  {
    rule: 'dependsOn names a step',
    scope: 'step',
    variants: [
      ['unknown', (step) => (step['dependsOn'] = [...(step['dependsOn'] ?? []), 'missing'])],
      ['empty id', set('dependsOn', [''])],
      ['case differs', (step, { definition }) => (step['dependsOn'] = [upper(definition)])],
    ],
  },
  {
    rule: 'retry needs retryCount >= 1',
    scope: 'step',
    variants: [
      ['absent', set('onError', { action: 'retry' })],
      ['zero', set('onError', { action: 'retry', retryCount: 0, retryDelay: '1s' })],
      ['negative', set('onError', { action: 'retry', retryCount: -1 })],
    ],
  },
  {
    rule: 'elicitation handlers need an action',
    scope: 'elicitation',
    variants: [
      ['onDecline', set('onDecline', {})],
      ['onCancel', set('onCancel', {})],
    ],
  },
]

/** An id no step has: the first step's id in upper case (or with a suffix when that is the same). */
function upper(definition: Definition): string {
  const ids = new Set(definition.steps.map((step) => step['id'] as string))
  const first = definition.steps[0]!['id'] as string
  const candidate = first.toUpperCase() === first ? `${first}_X` : first.toUpperCase()
  return ids.has(candidate) ? `${candidate}_missing` : candidate
}

/** A fresh valid step of `scope`'s kind for the defect to break, keeping id and dependencies. */
export function stepFor(scope: Scope, step: Obj, random: Random): Obj {
  const kept: Obj = { id: step['id'] }
  if (step['dependsOn'] !== undefined) kept['dependsOn'] = step['dependsOn']
  switch (scope) {
    case 'elicitation':
      return { ...kept, type: 'elicitation', message: 'Proceed?' }
    case 'forEach':
      return { ...kept, ...forEachStep(random, [], []) }
    case 'tool':
    case 'step':
      return { ...kept, tool: random.pick(['fetch', 'github.create_issue']) }
    case 'spec':
      return step
  }
}
