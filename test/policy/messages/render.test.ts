import t from 'tap'
import { violation } from '../../../src/policy/messages/field-errors.ts'
import {
  MESSAGE_LIMITS,
  excerpt,
  formatViolations,
  quoteValue,
  renderLogFields,
  renderName,
  renderText,
  renderValue,
  renderViolations,
  renderWarnings,
  terminalText,
} from '../../../src/policy/messages/render.ts'

const bytes = (text: string) => Buffer.byteLength(text, 'utf8')
const VALUE = MESSAGE_LIMITS.valueChars

t.test('quoted values: redacted, %q, and at most 256 characters', async (t) => {
  t.equal(quoteValue('http://admin:hunter2@host'), '"http://REDACTED@host"')
  t.equal(quoteValue('tab\there'), '"tab\\there"')
  t.equal(quoteValue('x'.repeat(VALUE)), `"${'x'.repeat(VALUE)}"`)
  t.equal(
    quoteValue('x'.repeat(6_000_000)),
    `"${'x'.repeat(VALUE)}"…(${6_000_000 - VALUE} more bytes)`,
  )
  // Escapes count in full and are never split; what is left is counted in UTF-8 bytes.
  t.equal(quoteValue(`${'x'.repeat(254)}\n\né`), `"${'x'.repeat(254)}\\n"…(3 more bytes)`)
  t.equal(
    quoteValue(`http://admin:hunter2@${'h'.repeat(1000)}`),
    `"http://REDACTED@${'h'.repeat(VALUE - 16)}"…(${1000 - VALUE + 16} more bytes)`,
    'redacted before it is cut, so a cut cannot expose a password',
  )
  t.equal(excerpt('{"a":"b"}', 5), '{"a":…(4 more bytes)')
  t.equal(excerpt('{"a":"b"}', 9), '{"a":"b"}')
})

t.test('values of every type: a secret is never shown, the quotes always close', async (t) => {
  const cases: [unknown, string][] = [
    [3, '3'],
    [true, 'true'],
    ['https://h/?token=abc', '"https://h/?token=REDACTED"'],
    ['https://h/cb#access_token=abc', '"https://h/cb#REDACTED"'],
    ['//user:pw@h', '"//REDACTED@h"'],
    ['https:///user:pw@h', '"https:///REDACTED@h"'],
    ['https://us er:pw@h', '"https://REDACTED@h"'],
    [{ url: 'https://u:p@h', n: 1 }, '{"url":"https://REDACTED@h","n":1}'],
    [{ password: 'hunter2', token: 7 }, '{"password":"REDACTED","token":7}'],
    [['https://h#x', 'ok'], '["https://h#REDACTED","ok"]'],
    [null, 'null'],
  ]
  for (const [value, rendered] of cases)
    t.equal(renderValue(value), rendered, JSON.stringify(value))
  t.equal(renderValue(undefined), 'undefined')
})

t.test('a message within the limits is the plain aggregate', async (t) => {
  const few = [violation.required('spec.a'), violation.invalid('spec.b', 'x', 'bad')]
  const rendered = renderViolations(few)
  t.equal(rendered.message, formatViolations(few))
  t.same(rendered.causes, [
    { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.a' },
    { reason: 'FieldValueInvalid', message: 'Invalid value: "x": bad', field: 'spec.b' },
  ])
  t.equal(renderViolations([violation.required('spec.a')]).message, 'spec.a: Required value')
})

t.test('past 20 violations the message says how many more', async (t) => {
  const many = Array.from({ length: 1000 }, (_, i) => violation.required(`spec.items[${i}].name`))
  const { message, causes } = renderViolations(many)
  t.equal(causes.length, MESSAGE_LIMITS.violations)
  t.match(message, /^\[spec\.items\[0\]\.name: Required value, .*, and 980 more errors\]$/)
  t.equal(renderViolations(many.slice(0, 21)).message.endsWith(', and 1 more error]'), true)
})

t.test('long values and details stay within 1 KiB each and 4 KiB in all', async (t) => {
  const huge = 'é'.repeat(3_000_000)
  const many = Array.from({ length: 50 }, (_, i) =>
    violation.invalid(`spec.items[${i}].url`, huge, `bad: ${huge}`),
  )
  const { message, causes } = renderViolations(many)
  t.ok(bytes(message) <= MESSAGE_LIMITS.messageBytes, `${bytes(message)} bytes`)
  t.ok(causes.length >= 3, `${causes.length} listed`)
  t.ok(causes.every((c) => bytes(c.message) <= MESSAGE_LIMITS.violationBytes))
  t.match(message, /"é+"…\(5999488 more bytes\): bad: é+…, /)
  t.match(message, new RegExp(`and ${50 - causes.length} more errors\\]$`))
})

t.test('one violation with a huge detail is cut to 1 KiB', async (t) => {
  const { message } = renderViolations([violation.forbidden('spec.x', 'y'.repeat(6_000_000))])
  t.ok(bytes(message) <= MESSAGE_LIMITS.violationBytes, `${bytes(message)} bytes`)
  t.match(message, /^spec\.x: Forbidden: y+…$/)
})

t.test('hostile field paths and details are escaped, redacted and cut', async (t) => {
  const { message, causes } = renderViolations([
    violation.invalid(`metadata.annotations[${'k'.repeat(10_000)}]`, 'v', 'bad'),
    violation.forbidden('spec.x', 'see https://u:p@h\n\x1b[31mforged'),
  ])
  t.ok(causes[0]!.field.length < 300, 'a long field is cut')
  t.equal(causes[1]!.message, 'Forbidden: see https://REDACTED@h\\n\\x1b[31mforged')
  t.notOk(message.includes('\n') || message.includes('\x1b'), 'one line, no escape')
})

t.test('free text is redacted, escaped and cut to a byte budget', async (t) => {
  const cases: [string, string][] = [
    ['failed to read http://u:hunter2@h', 'failed to read http://REDACTED@h'],
    ['GET https://h/api?token=t0k: refused', 'GET https://h/api?token=REDACTED refused'],
    ['a\nb\rc\x1b[2Jd\u0085e\u202ef', 'a\\nb\\rc\\x1b[2Jd\\u0085e\\u202ef'],
  ]
  for (const [text, rendered] of cases) t.equal(renderText(text), rendered, JSON.stringify(text))
  const cut = renderText('€'.repeat(2000), 100)
  t.ok(bytes(cut) <= 100)
  t.ok(cut.endsWith('€…'), 'cut between characters')
  t.ok(bytes(renderText('\x1b'.repeat(3_000_000))) <= MESSAGE_LIMITS.messageBytes)
  t.equal(renderName('n'.repeat(1000)).length < 300, true)
})

t.test('warnings: redacted, one line, 120 characters each, 4096 in all', async (t) => {
  const cases: [string, string][] = [
    ['short', 'short'],
    ['x'.repeat(120), 'x'.repeat(120)],
    ['x'.repeat(121), `${'x'.repeat(119)}…`],
    // The 119th unit would be the first half of 🙂; the whole pair goes instead.
    [`${'x'.repeat(118)}🙂tail`, `${'x'.repeat(118)}…`],
    // Redacted before the cut: a cut inside the user-info cannot leave the password behind.
    [`${'w'.repeat(100)} https://admin:hunter2@host`, `${'w'.repeat(100)} https://REDACTED@h…`],
    ['kept: https://h/?token=abc', 'kept: https://h/?token=REDACTED'],
    ['two\nlines', 'two\\nlines'],
  ]
  for (const [warning, rendered] of cases) {
    t.same(renderWarnings([warning]), [rendered], JSON.stringify(warning))
  }
  t.same(renderWarnings(['a', 'a', 'b']), ['a', 'b'], 'duplicates dropped')
  const many = Array.from({ length: 1000 }, (_, i) => `${i}`.padEnd(300, '.'))
  const kept = renderWarnings(many)
  t.ok(kept.join('').length <= MESSAGE_LIMITS.warningsChars)
  t.ok(kept.every((w) => w.length <= MESSAGE_LIMITS.warningChars))
  t.equal(kept.at(-1), `and ${1000 - kept.length + 1} more warnings`)
})

t.test('terminal text: printable as is, anything else quoted', async (t) => {
  const cases: [string, string][] = [
    ['demo', 'demo'],
    ['with space "and quotes"', 'with space "and quotes"'],
    ['é-ok', 'é-ok'],
    ['a\nOK: forged', '"a\\nOK: forged"'],
    ['\x1b[31mred', '"\\x1b[31mred"'],
    ['\u009bc', '"\\u009bc"'],
    ['rtl\u202eevil', '"rtl\\u202eevil"'],
  ]
  for (const [text, shown] of cases) t.equal(terminalText(text), shown, JSON.stringify(text))
  t.ok(terminalText('n'.repeat(10_000)).length < 300)
})

t.test('log fields: every string redacted and bounded, errors rendered', async (t) => {
  const error = Object.assign(new Error('GET https://admin:pw@h/?token=t failed'), { code: 'E1' })
  const fields = renderLogFields({
    uid: 'u'.repeat(1 << 20),
    name: 'n',
    server: 'https://admin:hunter2@kube:6443/?token=abc',
    reason: `spec.url: Invalid value: "https://h/?token=REDACTED": ${'r'.repeat(10_000)}`,
    err: error,
    nested: {
      list: Array.from({ length: 30 }, () => '//u:p@h'),
      deep: { a: { b: { c: { d: 1 } } } },
    },
    count: 3,
    none: null,
  })
  t.ok((fields['uid'] as string).length < 300, 'a 1 MiB uid is cut')
  t.equal(fields['name'], 'n')
  t.equal(fields['server'], 'https://REDACTED@kube:6443/?token=REDACTED')
  t.ok(bytes(fields['reason'] as string) <= MESSAGE_LIMITS.messageBytes)
  t.match(fields['reason'], /^spec\.url: Invalid value: "https:\/\/h\/\?token=REDACTED": r+…$/)
  const err = fields['err'] as Record<string, unknown>
  t.equal(err['type'], 'Error')
  t.equal(err['code'], 'E1')
  t.equal(err['message'], 'GET https://REDACTED@h/?token=REDACTED failed')
  t.notMatch(err['stack'], /pw|token=t /)
  const nested = fields['nested'] as { list: string[]; deep: unknown }
  t.equal(nested.list.length, MESSAGE_LIMITS.violations + 1)
  t.equal(nested.list[0], '//REDACTED@h')
  t.equal(nested.list.at(-1), 'and 10 more')
  t.same(nested.deep, { a: { b: { c: '[nested too deeply]' } } })
  t.equal(fields['count'], 3)
  t.equal(fields['none'], null)
  const bare = renderLogFields({ err: Object.assign(new Error('x'), { stack: undefined }) })
  t.same(bare['err'], { type: 'Error', message: 'x' })
})
