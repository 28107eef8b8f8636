/**
 * The validation status the reconciler wants on a VirtualMCPCompositeToolDefinition: `Invalid`
 * with its errors while the structural rules find violations (what ToolHive's VirtualMCPServer
 * controller reads to fail a server that references it), the fields absent otherwise — never
 * `Valid` — and the errors bounded so the status stays small.
 */

import t from 'tap'
import {
  boundValidationErrors,
  desiredValidationStatus,
  validationStatusNeedsWrite,
} from '../../src/policy/composite-status.ts'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import type { ToolHiveKindEntry } from '../../src/policy/kinds.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8')

/** A definition as the ported rules accept it, with `steps` in place of its two steps. */
function definition(steps?: unknown[], kind = 'VirtualMCPCompositeToolDefinition'): KubeObject {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind,
    metadata: { name: 'triage', namespace: 'team', generation: 3 },
    spec: {
      name: 'triage',
      description: 'Triage an issue',
      steps: steps ?? [
        { id: 'fetch', type: 'tool', tool: 'github.get_issue' },
        { id: 'label', type: 'tool', tool: 'github.add_label' },
      ],
    },
  }
}

const DUPLICATE_STEPS = [
  { id: 'a', type: 'tool', tool: 'github.get_issue' },
  { id: 'a', type: 'tool', tool: 'github.add_label' },
]

t.test('violations: Invalid with one error a line, as the operator joins them', async (t) => {
  t.same(desiredValidationStatus(definition(DUPLICATE_STEPS)), {
    validationStatus: 'Invalid',
    validationErrors: ['spec.steps[1].id: Duplicate value: "a"'],
  })
  const alpha = { ...definition(DUPLICATE_STEPS), apiVersion: 'toolhive.stacklok.dev/v1alpha1' }
  t.equal(desiredValidationStatus(alpha)?.validationStatus, 'Invalid', 'at either version')
})

t.test('no violation: nothing of ours (the fields absent), never Valid', async (t) => {
  t.equal(desiredValidationStatus(definition()), undefined)
})

t.test('only kinds whose table entry names a rule, and only ToolHive objects', async (t) => {
  t.equal(desiredValidationStatus(definition(DUPLICATE_STEPS, 'MCPToolConfig')), undefined)
  t.equal(desiredValidationStatus(definition(DUPLICATE_STEPS, 'VirtualMCPServer')), undefined)
  const foreign = { ...definition(DUPLICATE_STEPS), apiVersion: 'example.com/v1' }
  t.equal(desiredValidationStatus(foreign), undefined)
  t.equal(desiredValidationStatus({ kind: 'VirtualMCPCompositeToolDefinition' }), undefined)
  // A table without the rule: the same object wants nothing.
  const table = TOOLHIVE_KIND_TABLE.map(
    (entry) =>
      Object.fromEntries(
        Object.entries(entry).filter(([key]) => key !== 'validationStatus'),
      ) as unknown as ToolHiveKindEntry,
  )
  t.equal(desiredValidationStatus(definition(DUPLICATE_STEPS), table), undefined)
})

t.test('a write is needed when the stored status differs, or may be ours to remove', async (t) => {
  const desired = { validationStatus: 'Invalid', validationErrors: ['e1', 'e2'] } as const
  t.ok(validationStatusNeedsWrite(undefined, desired), 'no status yet')
  t.ok(validationStatusNeedsWrite({ validationStatus: 'Valid' }, desired), 'another verdict')
  t.ok(validationStatusNeedsWrite({ validationStatus: 'Unknown' }, desired))
  t.ok(
    validationStatusNeedsWrite({ validationStatus: 'Invalid', validationErrors: ['e1'] }, desired),
    'other errors',
  )
  t.ok(
    validationStatusNeedsWrite(
      { validationStatus: 'Invalid', validationErrors: ['e2', 'e1'] },
      desired,
    ),
    'the same errors in another order',
  )
  t.ok(
    validationStatusNeedsWrite(
      { validationStatus: 'Invalid', validationErrors: 'e1; e2' },
      desired,
    ),
    'malformed errors count as absent',
  )
  t.notOk(
    validationStatusNeedsWrite(
      { validationStatus: 'Invalid', validationErrors: ['e1', 'e2'] },
      desired,
    ),
    'equal: skipped',
  )
  t.notOk(
    validationStatusNeedsWrite(
      { validationStatus: 'Invalid', validationErrors: ['e1', 'e2'], conditions: [], x: 1 },
      desired,
    ),
    'fields it does not write are not compared',
  )

  t.ok(validationStatusNeedsWrite({ validationStatus: 'Invalid' }, undefined), 'maybe ours')
  t.notOk(validationStatusNeedsWrite({ validationStatus: 'Valid' }, undefined), 'not ours to judge')
  t.notOk(validationStatusNeedsWrite({}, undefined))
  t.notOk(validationStatusNeedsWrite('Invalid', undefined), 'a malformed status counts as absent')
})

t.test('errors are bounded: 20 at most, 1 KiB each, 4 KiB in all', async (t) => {
  const few = ['a', 'b']
  t.same(boundValidationErrors(few), few, 'short lists pass as they are')
  t.same(boundValidationErrors([]), [])

  const many = Array.from({ length: 25 }, (_, i) => `spec.steps[${i}].id: Required value`)
  const counted = boundValidationErrors(many)
  t.equal(counted.length, 21)
  t.same(counted.slice(0, 20), many.slice(0, 20))
  t.equal(counted[20], 'and 5 more errors')
  t.equal(boundValidationErrors(many.slice(0, 21))[20], 'and 1 more error')

  const long = 'x'.repeat(5000)
  const [cut] = boundValidationErrors([long])
  t.ok(cut !== undefined && utf8(cut) <= 1024, 'one error at most 1 KiB')
  t.match(cut, /…$/, 'marked as cut')

  const wide = Array.from({ length: 10 }, (_, i) => `${i}: ${'é'.repeat(400)}`)
  const bytes = boundValidationErrors(wide)
  t.ok(
    utf8(bytes.join('; ')) <= 4096,
    `joined as the operator joins them: ${utf8(bytes.join('; '))}`,
  )
  t.match(bytes.at(-1), /^and \d+ more errors$/)
  t.equal(bytes.length - 1 + Number(/\d+/.exec(bytes.at(-1) ?? '')?.[0]), 10, 'every one counted')

  t.same(
    boundValidationErrors(['line one\nline two']),
    ['line one\\nline two'],
    'one line each: control characters escaped',
  )
})
