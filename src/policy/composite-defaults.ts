/**
 * The templates of a composite tool (docs/enforcement.md, "Composite tool definitions"): each is
 * parsed as Go's text/template parses it with ToolHive's functions. One that does not parse is a
 * warning, not a denial (the parser's port is not proven to agree with Go's on every text), and
 * gives no references. The references the others make feed upstream's defaultResults rule: a step
 * that may be skipped (it has a `condition`, or `onError.action: continue`) needs a default for
 * every field of its output that another step's templates or the tool's output read.
 */

import type { CompositeToolConfig, OutputProperty, StepConfig } from './composite-decode.ts'
import { goQuote } from './go/quote.ts'
import { parseGoTemplate } from './go/template.ts'
import { violation } from './messages/field-errors.ts'
import type { FieldViolation } from './messages/field-errors.ts'

/** ToolHive's template functions (pkg/templates FuncMap), besides Go's builtins. */
const TEMPLATE_FUNCTIONS = ['json', 'quote', 'fromJson']
/** Readers a missing default's detail names at most. */
const READERS_SHOWN = 3
/**
 * Template text parsed per tool, in UTF-16 units. Real workflows hold a few KiB; parsing runs on
 * the event loop every webhook shares (about 0.7 ms a KiB), so a multi-megabyte definition must not
 * stall the Fail webhooks' answers. A template past it is warned about and read for nothing: a
 * default it would ask for is not asked for (a missed denial, never a false one).
 */
export const TEMPLATE_BUDGET = 128 * 1024

interface Findings {
  readonly violations: FieldViolation[]
  readonly warnings: string[]
}

/** What the templates of one tool may still parse. */
interface Budget {
  left: number
  /** Warned once per tool. */
  exceeded: boolean
}

/** The findings so far, and the budget left. */
type Parsing = Findings & { readonly budget: Budget }

/** A field of a step's output that a template reads: `.steps.<step>.output.<field>`. */
interface OutputRead {
  readonly step: string
  readonly field: string
}

/** A default some readers need and the step (`index`, `step`) does not give. */
interface MissingDefault {
  readonly index: number
  readonly step: string
  readonly field: string
  readonly readers: string[]
}

/** The template warnings of the tool at `path`, and the defaults its skippable steps lack. */
export function templateFindings(config: CompositeToolConfig, path: string): Findings {
  const found: Parsing = {
    violations: [],
    warnings: [],
    budget: { left: TEMPLATE_BUDGET, exceeded: false },
  }
  const steps = config.steps ?? []
  const reads = steps.map((step, i) => stepReads(step, `${path}.steps[${i}]`, found))
  const skippable = new Set(steps.filter(mayBeSkipped).map(({ id = '' }) => id))
  if (skippable.size === 0) return found
  // Upstream keys defaults by step id: an id is skippable when any step holding it is, and of
  // steps sharing one (already a violation), the last one's defaults count.
  const holders = new Map<string, { index: number; defaults: object }>()
  steps.forEach(({ id = '', defaultResults = {} }, index) => {
    if (skippable.has(id)) holders.set(id, { index, defaults: defaultResults })
  })
  const outputReads = propertyReads(config.output?.properties, `${path}.output`, found)
  const missing = new Map<string, MissingDefault>()
  const need = (read: OutputRead, reader: string) => {
    const holder = holders.get(read.step)
    if (holder === undefined || Object.hasOwn(holder.defaults, read.field)) return
    const key = `${holder.index}.${read.field}`
    const known = missing.get(key)
    if (known === undefined) missing.set(key, { index: holder.index, ...read, readers: [reader] })
    else if (!known.readers.includes(reader)) known.readers.push(reader)
  }
  reads.forEach((stepReads, i) => {
    for (const read of stepReads) need(read, `step ${goQuote(steps[i]?.id ?? '')}`)
  })
  for (const read of outputReads) need(read, 'the output')
  for (const { index, step, field, readers } of missing.values()) {
    found.violations.push(
      violation.required(
        `${path}.steps[${index}].defaultResults[${field}]`,
        `step ${goQuote(step)} may be skipped and field ${goQuote(field)} is referenced by ${listed(readers)}`,
      ),
    )
  }
  return found
}

/** Upstream's stepMayBeSkipped. */
function mayBeSkipped(step: StepConfig): boolean {
  return Boolean(step.condition) || step.onError?.action === 'continue'
}

/**
 * Parses every template of the step at `at` that the vmcp parses, warning about those that do
 * not parse; returns the output reads of those upstream's defaults rule reads (condition,
 * arguments, message: not a forEach's collection or inner step).
 */
function stepReads(step: StepConfig, at: string, found: Parsing): OutputRead[] {
  const reads: OutputRead[] = []
  for (const [key, value] of Object.entries(step.arguments ?? {}))
    if (typeof value === 'string') reads.push(...parsed(`${at}.arguments[${key}]`, value, found))
  if (step.condition) reads.push(...parsed(`${at}.condition`, step.condition, found))
  if (step.message) reads.push(...parsed(`${at}.message`, step.message, found))
  if (step.type === 'forEach') {
    if (step.collection) parsed(`${at}.collection`, step.collection, found)
    for (const [key, value] of Object.entries(step.step?.arguments ?? {}))
      if (typeof value === 'string') parsed(`${at}.step.arguments[${key}]`, value, found)
  }
  return reads
}

/** The output reads of every `value` under `properties` (at `at`), nested ones included. */
function propertyReads(
  properties: Readonly<Record<string, OutputProperty>> | undefined,
  at: string,
  found: Parsing,
): OutputRead[] {
  const reads: OutputRead[] = []
  for (const [name, property] of Object.entries(properties ?? {})) {
    const field = `${at}.properties[${name}]`
    if (property.value) reads.push(...parsed(`${field}.value`, property.value, found))
    reads.push(...propertyReads(property.properties, field, found))
  }
  return reads
}

/** The output reads of the template `text` at `field`; none, and a warning, when it does not parse. */
function parsed(field: string, text: string, found: Parsing): OutputRead[] {
  const { budget } = found
  if (text.length > budget.left) {
    if (!budget.exceeded)
      found.warnings.push(
        `${field}: not checked: this tool's templates pass ${TEMPLATE_BUDGET / 1024} KiB; from here on none is parsed`,
      )
    budget.exceeded = true
    return []
  }
  budget.left -= text.length
  const result = parseGoTemplate(text, TEMPLATE_FUNCTIONS)
  if (!result.ok) {
    found.warnings.push(
      `${field}: invalid template: ${result.error}; the vmcp will refuse it at start-up`,
    )
    return []
  }
  // Upstream's reference walk dereferences the missing argument of `{{template "t"}}`: a vmcp
  // that has to check defaultResults stops with a panic on it (docs/enforcement.md).
  if (result.extractPanics)
    found.warnings.push(
      `${field}: {{template}} without an argument: the vmcp's defaultResults check crashes on it`,
    )
  const reads: OutputRead[] = []
  for (const reference of result.references) {
    // `.steps.<step>.output.<field>` and anything deeper: upstream splits on the first five dots.
    const [empty, steps, step, output, field] = reference.split('.', 5)
    if (empty === '' && steps === 'steps' && output === 'output' && field !== undefined)
      reads.push({ step: step as string, field })
  }
  return reads
}

/** `step "a"`, `step "a" and the output`, `step "a", step "b", step "c" and 2 more`. */
function listed(readers: readonly string[]): string {
  if (readers.length === 1) return readers[0] as string
  if (readers.length <= READERS_SHOWN)
    return `${readers.slice(0, -1).join(', ')} and ${readers[readers.length - 1] as string}`
  return `${readers.slice(0, READERS_SHOWN).join(', ')} and ${readers.length - READERS_SHOWN} more`
}
