/**
 * Valid VirtualMCPCompositeToolDefinition specs for the differential test: random workflows of
 * tool, elicitation and forEach steps that pass the release's CRD schema (id and name present,
 * enums respected, durations matching its pattern, objects where it says object) and every
 * structural rule of ToolHive's ValidateCompositeToolConfig, with templates and JSON Schemas
 * kept valid. Skippable steps (a condition, or onError continue) get defaultResults for exactly
 * the fields the workflow references in a way the rule counts; the references are recorded so
 * the defect generators can take one default away.
 */

import { FIELDS, PLAIN_TEMPLATES, REFERENCE_FORMS } from './composite-templates.ts'
import type { Random } from './random.ts'

// Specs are plain JSON objects the generators mutate.
export type Obj = Record<string, any>

export interface Reference {
  readonly id: string
  readonly field: string
  readonly counted: boolean
}

export interface Definition {
  readonly spec: Obj
  readonly steps: Obj[]
  readonly references: Reference[]
}

/** Step ids a template can reference (`.steps.<id>`), and ids it cannot. */
const REFERENCEABLE_IDS = ['fetch', 'lookup_user', 'step', 'Summarise', 'ä_schritt', '_hidden']
const OTHER_IDS = ['fetch-data', 'step.two', 'Step Three', 'x', '0', 'ümlaut-id']

export const VALID_TOOLS = ['github.create_issue', 'fetch', 'slack_post', 'a', '0', 'x-y.z_1']
export const DURATIONS = ['30s', '1m30s', '1.5h', '100ms', '0s', '2h45m', '10us', '5µs', '3ns']
export const ITEM_VARS = ['item', '_', 'X1', 'repo_2', '_index', 'Index']

const DEFAULT_VALUES: readonly unknown[] = ['', 'n/a', 0, false, null, [], {}, { k: 'v' }]

export const PARAMETERS: readonly Obj[] = [
  { type: 'object' },
  { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  {
    type: 'object',
    properties: { count: { type: 'integer', minimum: 0 }, items: { type: 'array' } },
  },
  {},
]

const SCHEMAS: readonly Obj[] = [
  { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  { type: 'object' },
  { type: 'object', properties: { choice: { type: 'string', enum: ['a', 'b'] } } },
]

/** A template for a slot: a step reference (recorded) or a plain one. */
function template(random: Random, ids: readonly string[], references: Reference[]): string {
  if (ids.length === 0 || random.chance(0.4)) return random.pick(PLAIN_TEMPLATES)
  const form = random.pick(REFERENCE_FORMS)
  const [id, field] = [random.pick(ids), random.pick(FIELDS)]
  references.push({ id, field, counted: form.counted })
  return form.text(id, field)
}

function arguments_(random: Random, ids: readonly string[], references: Reference[]): Obj {
  const args: Obj = {}
  for (let i = random.int(1, 3); i > 0; i--) args[`arg${i}`] = template(random, ids, references)
  if (random.chance(0.3)) args['n'] = random.int(-5, 5)
  if (random.chance(0.2)) args['flag'] = random.chance(0.5)
  // Non-string values are passed as they are: not templates, not references.
  if (random.chance(0.2)) args['nested'] = { ref: '{{ .steps.fetch.output.result }}' }
  return args
}

/** A valid forEach step's own fields. */
export function forEachStep(random: Random, ids: readonly string[], references: Reference[]): Obj {
  const step: Obj = {
    type: 'forEach',
    // The collection and the inner step's arguments are not among the places the rule counts.
    collection:
      ids.length === 0 || random.chance(0.5)
        ? '{{ json .params.items }}'
        : random.pick(REFERENCE_FORMS).text(random.pick(ids), 'items'),
    step: { tool: random.pick(VALID_TOOLS) },
  }
  if (random.chance(0.5)) step['step'].type = 'tool'
  if (ids.length > 0 && random.chance(0.4))
    step['step'].arguments = {
      item: '{{ .forEach.item }}',
      ref: random.pick(REFERENCE_FORMS).text(random.pick(ids), 'count'),
    }
  if (random.chance(0.5)) step['itemVar'] = random.pick(ITEM_VARS)
  if (random.chance(0.5)) step['maxParallel'] = random.pick([0, 1, 10, 49, 50])
  if (random.chance(0.5)) step['maxIterations'] = random.pick([0, 1, 50, 100, 999, 1000])
  if (random.chance(0.3)) step['arguments'] = arguments_(random, ids, references)
  return step
}

/** A valid step of a random kind, without id, dependencies or skipping. */
function stepBody(random: Random, ids: readonly string[], references: Reference[]): Obj {
  const kind = random.pick(['tool', 'tool', 'tool', 'elicitation', 'forEach'])
  if (kind === 'forEach') return forEachStep(random, ids, references)
  if (kind === 'elicitation') {
    const step: Obj = { type: 'elicitation', message: template(random, ids, references) }
    if (random.chance(0.6)) step['schema'] = random.pick(SCHEMAS)
    for (const handler of ['onDecline', 'onCancel'])
      if (random.chance(0.4))
        step[handler] = { action: random.pick(['abort', 'continue', 'skip_remaining']) }
    // An elicitation step's tool is not looked at, whatever it holds.
    if (random.chance(0.1)) step['tool'] = random.pick(['not a tool', ...VALID_TOOLS])
    return step
  }
  const step: Obj = { tool: random.pick(VALID_TOOLS) }
  if (random.chance(0.5)) step['type'] = 'tool'
  if (random.chance(0.6)) step['arguments'] = arguments_(random, ids, references)
  // Fields of other kinds are not looked at on a tool step.
  if (random.chance(0.1)) Object.assign(step, { itemVar: 'index', maxParallel: 999 })
  if (random.chance(0.1)) step['onDecline'] = {}
  if (step['type'] === 'tool' && random.chance(0.2))
    step['message'] = template(random, ids, references)
  return step
}

/** A valid definition of `count` steps (1 to 7 when not given). */
export function validDefinition(random: Random, count = random.int(1, 7)): Definition {
  const references: Reference[] = []
  const names = random.shuffled([...REFERENCEABLE_IDS, ...OTHER_IDS])
  const ids = Array.from(
    { length: count },
    (_, i) => `${names[i % names.length]!}${i >= 12 ? i : ''}`,
  )
  const referenceable = ids.filter((id) => /^[\p{L}_][\p{L}\p{N}_]*$/u.test(id))
  // A random topological order: a step depends only on steps before it there.
  const order = random.shuffled(ids)
  const steps = ids.map((id) => {
    const step: Obj = { id, ...stepBody(random, referenceable, references) }
    const before = order.slice(0, order.indexOf(id))
    if (before.length > 0 && random.chance(0.5))
      step['dependsOn'] = random.shuffled(before).slice(0, random.int(1, before.length))
    if (random.chance(0.2)) step['timeout'] = random.pick(DURATIONS)
    if (random.chance(0.25)) step['condition'] = template(random, referenceable, references)
    if (random.chance(0.3)) step['onError'] = onError(random)
    return step
  })
  const spec: Obj = {
    name: random.pick(['triage', 'deploy-and-notify', 'x', 'Ünïcode workflow']),
    description: random.pick(['Does things.', 'x', 'Triage an issue, then notify.']),
    steps,
  }
  if (random.chance(0.4)) spec['parameters'] = random.pick(PARAMETERS)
  if (random.chance(0.3)) spec['timeout'] = random.pick(DURATIONS)
  if (random.chance(0.2)) spec['annotations'] = { readOnlyHint: true, title: 'T' }
  if (random.chance(0.5)) spec['output'] = output(random, referenceable, references)
  const definition = { spec, steps, references }
  fillDefaults(definition, random)
  // defaultResults on a step that cannot be skipped is allowed and never looked at.
  for (const step of steps)
    if (!skippable(step) && random.chance(0.1)) step['defaultResults'] = { unused: 1 }
  return definition
}

export function onError(random: Random): Obj {
  const action = random.pick(['abort', 'continue', 'retry', undefined])
  const handling: Obj = action === undefined ? {} : { action }
  if (action === 'retry' || random.chance(0.2)) handling['retryCount'] = random.int(1, 5)
  if (random.chance(0.3)) handling['retryDelay'] = random.pick(DURATIONS)
  return handling
}

export function output(random: Random, ids: readonly string[], references: Reference[]): Obj {
  const properties: Obj = {}
  for (let i = random.int(1, 3); i > 0; i--)
    properties[`p${i}`] = { type: 'string', value: template(random, ids, references) }
  if (random.chance(0.4))
    properties['nested'] = {
      type: 'object',
      description: 'nested',
      properties: { inner: { type: 'string', value: template(random, ids, references) } },
    }
  return random.chance(0.5) ? { properties } : { properties, required: Object.keys(properties) }
}

/** Whether ToolHive may skip the step: a condition, or onError continue. */
export function skippable(step: Obj): boolean {
  return (step['condition'] ?? '') !== '' || step['onError']?.action === 'continue'
}

/**
 * defaultResults for every counted reference to a skippable step (any JSON value, null too: the
 * key is what counts), sometimes with a field no reference needs.
 */
export function fillDefaults(definition: Definition, random: Random): void {
  for (const step of definition.steps) {
    delete step['defaultResults']
    if (!skippable(step)) continue
    const fields = definition.references
      .filter((reference) => reference.counted && reference.id === step['id'])
      .map((reference) => reference.field)
    if (random.chance(0.2)) fields.push('spare')
    if (fields.length > 0)
      step['defaultResults'] = Object.fromEntries(
        fields.map((field) => [field, random.pick(DEFAULT_VALUES)]),
      )
  }
}
