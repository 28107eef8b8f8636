/**
 * The structural rules of a composite tool's workflow steps, ported from ToolHive's
 * ValidateWorkflowSteps (docs/enforcement.md, "Composite tool definitions"): ids, step types and
 * what each type needs, forEach limits, dependencies, error and elicitation handlers, and no
 * dependency cycle. Upstream stops at the first error; every violation is reported here, each at
 * its field.
 */

import type { StepConfig } from './composite-decode.ts'
import { violation } from './messages/field-errors.ts'
import type { FieldViolation } from './messages/field-errors.ts'

const STEP_TYPES = ['tool', 'elicitation', 'forEach']
const ERROR_ACTIONS = ['abort', 'continue', 'retry']
const RESPONSE_ACTIONS = ['abort', 'continue', 'skip_remaining']
/** Upstream's IsValidToolReference: `workload.tool`, `workload_tool` or `tool`. */
const TOOL_REFERENCE = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/
const GO_IDENTIFIER = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const MAX_PARALLEL = 50
const MAX_ITERATIONS = 1000
/** Step ids a cycle's detail names at most before it elides the rest. */
const CYCLE_IDS_SHOWN = 10

/**
 * Each id's step (its first, should it be used twice): what `dependsOn` and templates name. An id
 * missing or used twice is a violation.
 */
export function stepIndexById(
  steps: readonly StepConfig[],
  path: string,
  violations: FieldViolation[],
): ReadonlyMap<string, number> {
  const byId = new Map<string, number>()
  steps.forEach(({ id = '' }, i) => {
    if (id === '') violations.push(violation.required(`${path}[${i}].id`))
    else if (byId.has(id)) violations.push(violation.duplicate(`${path}[${i}].id`, id))
    else byId.set(id, i)
  })
  return byId
}

/** Every violation of the steps at `path` (`spec.steps`) but the templates' and defaults'. */
export function stepViolations(
  steps: readonly StepConfig[],
  path: string,
  byId: ReadonlyMap<string, number>,
): FieldViolation[] {
  const violations: FieldViolation[] = []
  steps.forEach((step, i) => {
    stepRules(step, `${path}[${i}]`, byId, violations)
  })
  violations.push(...cycleViolations(steps, path, byId))
  return violations
}

function stepRules(
  step: StepConfig,
  at: string,
  byId: ReadonlyMap<string, number>,
  out: FieldViolation[],
): void {
  const { type = '', tool = '', message = '' } = step
  if (type === '' && tool !== '' && message !== '') {
    out.push(
      violation.required(`${at}.type`, 'a step with both tool and message needs an explicit type'),
    )
  } else if (type === '' || type === 'tool') {
    out.push(...toolReference(`${at}.tool`, tool, 'when type is tool'))
  } else if (type === 'elicitation') {
    if (message === '') out.push(violation.required(`${at}.message`, 'when type is elicitation'))
    for (const handler of ['onDecline', 'onCancel'] as const) {
      const handling = step[handler]
      if (handling === undefined) continue
      const { action = '' } = handling
      if (action === '') out.push(violation.required(`${at}.${handler}.action`))
      else if (!RESPONSE_ACTIONS.includes(action))
        out.push(violation.notSupported(`${at}.${handler}.action`, action, RESPONSE_ACTIONS))
    }
  } else if (type === 'forEach') {
    forEachRules(step, at, out)
  } else {
    out.push(violation.notSupported(`${at}.type`, type, STEP_TYPES))
  }
  step.dependsOn?.forEach((id, j) => {
    if (!byId.has(id))
      out.push(violation.invalid(`${at}.dependsOn[${j}]`, id, 'references unknown step'))
  })
  const { action = '', retryCount = 0 } = step.onError ?? {}
  if (action !== '' && !ERROR_ACTIONS.includes(action))
    out.push(violation.notSupported(`${at}.onError.action`, action, ERROR_ACTIONS))
  if (action === 'retry' && retryCount < 1)
    out.push(
      violation.invalid(
        `${at}.onError.retryCount`,
        retryCount,
        'must be at least 1 when action is retry',
      ),
    )
}

function forEachRules(step: StepConfig, at: string, out: FieldViolation[]): void {
  if (step.tool) out.push(violation.forbidden(`${at}.tool`, 'a forEach step must not have a tool'))
  if (step.message)
    out.push(violation.forbidden(`${at}.message`, 'a forEach step must not have a message'))
  if (!step.collection) out.push(violation.required(`${at}.collection`, 'for forEach steps'))
  const inner = step.step
  if (inner === undefined) {
    out.push(violation.required(`${at}.step`, 'for forEach steps'))
  } else if (inner.type && inner.type !== 'tool') {
    out.push(violation.notSupported(`${at}.step.type`, inner.type, ['tool']))
  } else {
    out.push(...toolReference(`${at}.step.tool`, inner.tool ?? '', 'for tool inner steps'))
  }
  const { itemVar = '', maxParallel = 0, maxIterations = 0 } = step
  if (itemVar !== '' && !GO_IDENTIFIER.test(itemVar))
    out.push(violation.invalid(`${at}.itemVar`, itemVar, 'must be a valid Go identifier'))
  else if (itemVar === 'index') out.push(violation.invalid(`${at}.itemVar`, itemVar, 'is reserved'))
  out.push(...bounded(`${at}.maxParallel`, maxParallel, MAX_PARALLEL))
  out.push(...bounded(`${at}.maxIterations`, maxIterations, MAX_ITERATIONS))
}

function toolReference(field: string, tool: string, when: string): FieldViolation[] {
  if (tool === '') return [violation.required(field, when)]
  if (TOOL_REFERENCE.test(tool)) return []
  return [
    violation.invalid(
      field,
      tool,
      'must be a valid tool name (letters, digits, ".", "_" and "-", starting with a letter or digit)',
    ),
  ]
}

function bounded(field: string, value: number, max: number): FieldViolation[] {
  if (value < 0) return [violation.invalid(field, value, 'must be non-negative')]
  if (value > max) return [violation.invalid(field, value, `must be at most ${max}`)]
  return []
}

/**
 * One violation per set of steps that depend on each other in a circle (a strongly connected
 * component with a cycle), at the `dependsOn` of its lowest-index step, naming a shortest cycle
 * through it. Upstream names one step from which a cycle is reachable; that step reaches one of
 * these. Iterative throughout: a definition may chain thousands of steps.
 */
function cycleViolations(
  steps: readonly StepConfig[],
  path: string,
  byId: ReadonlyMap<string, number>,
): FieldViolation[] {
  const edges = steps.map(({ dependsOn = [] }) =>
    dependsOn.flatMap((id) => {
      const target = byId.get(id)
      return target === undefined ? [] : [target]
    }),
  )
  const violations: FieldViolation[] = []
  for (const component of stronglyConnected(edges)) {
    // The lowest index; no spread: a component may hold more steps than a call takes arguments.
    const start = component.reduce((lowest, node) => Math.min(lowest, node))
    if (component.length === 1 && !edges[start]?.includes(start)) continue
    const cycle = shortestCycle(start, edges, new Set(component)).map((i) => steps[i]?.id ?? '')
    const shown =
      cycle.length > CYCLE_IDS_SHOWN + 1
        ? [
            ...cycle.slice(0, CYCLE_IDS_SHOWN),
            `… (${cycle.length - 1 - CYCLE_IDS_SHOWN} more)`,
            cycle[0],
          ]
        : cycle
    violations.push({
      ...violation.forbidden(`${path}[${start}].dependsOn`, ''),
      detail: `dependency cycle detected: ${shown.join(' -> ')}`,
    })
  }
  return violations.sort((a, b) => indexOf(a.field) - indexOf(b.field))
}

function indexOf(field: string): number {
  return Number(/\[(\d+)\]\.dependsOn$/.exec(field)?.[1])
}

/** Tarjan's strongly connected components, with an explicit stack. */
function stronglyConnected(edges: readonly (readonly number[])[]): number[][] {
  const order = new Array<number>(edges.length).fill(-1)
  const low = new Array<number>(edges.length).fill(0)
  const onStack = new Array<boolean>(edges.length).fill(false)
  const stack: number[] = []
  const components: number[][] = []
  let counter = 0
  const enter = (node: number) => {
    order[node] = low[node] = counter++
    stack.push(node)
    onStack[node] = true
  }
  for (let root = 0; root < edges.length; root++) {
    if (order[root] !== -1) continue
    enter(root)
    const frames: { node: number; next: number }[] = [{ node: root, next: 0 }]
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { node: number; next: number }
      const { node } = frame
      const targets = edges[node] ?? []
      if (frame.next < targets.length) {
        const target = targets[frame.next++] as number
        if (order[target] === -1) {
          enter(target)
          frames.push({ node: target, next: 0 })
        } else if (onStack[target]) {
          low[node] = Math.min(low[node] as number, order[target] as number)
        }
        continue
      }
      frames.pop()
      const parent = frames[frames.length - 1]
      if (parent !== undefined)
        low[parent.node] = Math.min(low[parent.node] as number, low[node] as number)
      if (low[node] !== order[node]) continue
      const component: number[] = []
      for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
        onStack[member] = false
        component.push(member)
        if (member === node) break
      }
      components.push(component)
    }
  }
  return components
}

/** A shortest cycle from `start` back to it inside `component`, as step indices (`[a, b, a]`). */
function shortestCycle(
  start: number,
  edges: readonly (readonly number[])[],
  component: ReadonlySet<number>,
): number[] {
  const previous = new Map<number, number>([[start, start]])
  const queue = [start]
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head] as number
    for (const target of edges[node] ?? []) {
      if (target === start) {
        const back: number[] = []
        for (let at = node; at !== start; at = previous.get(at) as number) back.push(at)
        return [start, ...back.reverse(), start]
      }
      if (!component.has(target) || previous.has(target)) continue
      previous.set(target, node)
      queue.push(target)
    }
  }
  return [start, start]
}
