import t from 'tap'
import { formatViolations, violation } from '../../src/policy/field-errors.ts'
import {
  MESSAGE_LIMITS,
  boundMessage,
  boundViolations,
  boundWarnings,
} from '../../src/policy/message-bounds.ts'

const bytes = (text: string) => Buffer.byteLength(text, 'utf8')

t.test('a message within the limits is the plain aggregate', async (t) => {
  const few = [violation.required('spec.a'), violation.invalid('spec.b', 'x', 'bad')]
  t.same(boundViolations(few), { message: formatViolations(few), listed: few })
  const one = [violation.required('spec.a')]
  t.equal(boundViolations(one).message, 'spec.a: Required value')
})

t.test('past 20 violations the message says how many more', async (t) => {
  const many = Array.from({ length: 1000 }, (_, i) => violation.required(`spec.items[${i}].name`))
  const { message, listed } = boundViolations(many)
  t.equal(listed.length, MESSAGE_LIMITS.violations)
  t.match(message, /^\[spec\.items\[0\]\.name: Required value, .*, and 980 more errors\]$/)
  t.equal(boundViolations(many.slice(0, 21)).message.endsWith(', and 1 more error]'), true)
})

t.test('long values and details stay within 1 KiB each and 4 KiB in all', async (t) => {
  const huge = 'é'.repeat(3_000_000)
  const many = Array.from({ length: 50 }, (_, i) =>
    violation.invalid(`spec.items[${i}].url`, huge, `bad: ${huge}`),
  )
  const { message, listed } = boundViolations(many)
  t.ok(bytes(message) <= MESSAGE_LIMITS.messageBytes, `${bytes(message)} bytes`)
  t.ok(listed.length >= 3, `${listed.length} listed`)
  t.match(message, /"é+"…\(5999488 more bytes\): bad: é+…, /)
  t.match(message, new RegExp(`and ${50 - listed.length} more errors\\]$`))
})

t.test('one violation with a huge detail is cut to 1 KiB', async (t) => {
  const { message } = boundViolations([violation.forbidden('spec.x', 'y'.repeat(6_000_000))])
  t.ok(bytes(message) <= MESSAGE_LIMITS.violationBytes, `${bytes(message)} bytes`)
  t.match(message, /^spec\.x: Forbidden: y+…$/)
})

t.test('free text is redacted and cut to a byte budget', async (t) => {
  t.equal(boundMessage('failed to read http://u:hunter2@h'), 'failed to read http://REDACTED@h')
  const cut = boundMessage('€'.repeat(2000), 100)
  t.ok(bytes(cut) <= 100)
  t.ok(cut.endsWith('€…'), 'cut between characters')
})

t.test('warnings are kept to the 4096 characters the API server passes on', async (t) => {
  const few = ['a', 'b']
  t.same(boundWarnings(few), few)
  const many = Array.from({ length: 1000 }, (_, i) => `${i}`.padEnd(120, '.'))
  const kept = boundWarnings(many)
  t.ok(kept.join('').length <= MESSAGE_LIMITS.warningChars)
  t.equal(kept.at(-1), `and ${1000 - kept.length + 1} more warnings`)
})
