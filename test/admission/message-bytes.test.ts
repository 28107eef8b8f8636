/**
 * Every limit stated in bytes is counted in UTF-8 bytes, every limit stated in characters stays
 * characters (docs/wire.md): for arbitrary Unicode (4-byte emoji, CJK, line separators, lone
 * surrogates, controls that escape to six characters), a denial's message stays within 4096
 * bytes and never ends inside a character, and the warnings of an admitted write with violations
 * (Warn) stay within the 4096 characters the API server passes on in all, violations and the
 * rule's own warnings together.
 */

import fc from 'fast-check'
import t from 'tap'
import { respond } from '../../src/admission/enforcement.ts'
import type { Enforcement } from '../../src/admission/enforcement.ts'
import type { FieldViolation, ViolationType } from '../../src/policy/messages/field-errors.ts'

const SEED = 50
const SUBJECT = { group: 'toolhive.stacklok.dev', kind: 'MCPWebhookConfig', name: 'hooks' }
const RUNS = 60

/** Text biased towards what costs the most bytes or escapes the longest. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 600, size: 'large' }),
  fc.string({
    unit: fc.constantFrom('😀', '中', 'é', '\u2028', '\x01', '"', '\ud800', 'a'),
    maxLength: 1500,
    size: 'max',
  }),
)

const violationArb: fc.Arbitrary<FieldViolation> = fc.record({
  type: fc.constantFrom<ViolationType>(
    'FieldValueInvalid',
    'FieldValueRequired',
    'FieldValueForbidden',
    'FieldValueNotSupported',
  ),
  field: fc.oneof(text, fc.constant('')),
  value: fc.oneof(text, fc.array(text, { maxLength: 3 })),
  detail: text,
})

const input = fc.record({
  violations: fc.array(violationArb, { minLength: 1, maxLength: 30, size: 'large' }),
  warnings: fc.array(text, { maxLength: 60, size: 'large' }),
})

const mode = (validationActions: Enforcement['validationActions']): Enforcement => ({
  validationActions,
  mutationMode: 'apply',
})

/** Code points, as Go counts runes (a lone surrogate reaches Go as one U+FFFD). */
const runes = (text: string) => text.replace(/[\ud800-\udbff][\udc00-\udfff]/g, '_').length

/** Whether `rendered` has a lone surrogate that the input did not: a character cut in two. */
function cutInside(rendered: string, inputs: readonly string[]): boolean {
  return !rendered.isWellFormed() && inputs.every((input) => input.isWellFormed())
}

t.test('a denial message is at most 4096 UTF-8 bytes, never cut inside a character', (t) => {
  fc.assert(
    fc.property(input, ({ violations, warnings }) => {
      const response = respond(
        'uid',
        {
          rule: 'webhook-config',
          verdict: { kind: 'refused', violations, warnings, subject: SUBJECT },
        },
        'validate',
        mode(['Deny']),
      )
      const message = response.status?.message ?? ''
      const inputs = violations.flatMap((v) => [v.field, v.detail, JSON.stringify(v.value)])
      return Buffer.byteLength(message) <= 4096 && !cutInside(message, inputs)
    }),
    { seed: SEED, numRuns: RUNS },
  )
  t.pass('held for every input')
  t.end()
})

t.test('Warn: violations and warnings together are at most 4096 characters', (t) => {
  fc.assert(
    fc.property(input, ({ violations, warnings }) => {
      const response = respond(
        'uid',
        {
          rule: 'webhook-config',
          verdict: { kind: 'refused', violations, warnings, subject: SUBJECT },
        },
        'validate',
        mode(['Warn']),
      )
      const sent = response.warnings ?? []
      const total = sent.reduce((sum, warning) => sum + runes(warning), 0)
      return response.allowed && sent.length > 0 && total <= 4096
    }),
    { seed: SEED, numRuns: RUNS },
  )
  t.pass('held for every input')
  t.end()
})

t.test('Warn: long violations and long warnings, the case that once doubled the total', (t) => {
  const violations = Array.from({ length: 20 }, (_, i) => ({
    type: 'FieldValueInvalid' as const,
    field: `spec.validating[${i}].url`,
    value: '中'.repeat(300),
    detail: 'must be https',
  }))
  const warnings = Array.from({ length: 40 }, (_, i) => `warning ${i}: ${'😀'.repeat(100)}`)
  const response = respond(
    'uid',
    {
      rule: 'webhook-config',
      verdict: { kind: 'refused', violations, warnings, subject: SUBJECT },
    },
    'validate',
    mode(['Warn']),
  )
  const sent = response.warnings ?? []
  const units = sent.reduce((total, warning) => total + warning.length, 0)
  t.ok(units <= 4096, `${units} characters in all`)
  t.match(
    sent.at(-1),
    /^and \d+ more warnings$/,
    'the rule’s warnings that did not fit are counted',
  )
  t.match(
    sent[0],
    /^spec\.validating\[0\]\.url: Invalid value: "中+"…\(\d+ more bytes\): must be https$/,
  )
  t.end()
})
