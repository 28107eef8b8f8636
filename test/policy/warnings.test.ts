import t from 'tap'
import { MAX_WARNING_LENGTH, shortWarning } from '../../src/policy/warnings.ts'

t.test('warnings are cut to 120 characters without splitting a character', async (t) => {
  const cases: { name: string; text: string; expected: string }[] = [
    { name: 'short text is kept', text: 'ok', expected: 'ok' },
    { name: 'exactly 120 is kept', text: 'x'.repeat(120), expected: 'x'.repeat(120) },
    { name: '121 is cut', text: 'x'.repeat(121), expected: `${'x'.repeat(119)}…` },
    {
      // The 119th unit would be the first half of 🙂; the whole pair goes instead.
      name: 'a surrogate pair at the cut',
      text: `${'x'.repeat(118)}🙂tail`,
      expected: `${'x'.repeat(118)}…`,
    },
  ]
  for (const { name, text, expected } of cases) {
    const short = shortWarning(text)
    t.equal(short, expected, name)
    t.ok(short.length <= MAX_WARNING_LENGTH, `${name}: fits`)
  }
})
