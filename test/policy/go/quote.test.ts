import t from 'tap'
import { goQuote, goQuoteBytes } from '../../../src/policy/go/quote.ts'
import { isGoPrintable } from '../../../src/policy/go/printable.ts'

t.test("strconv.Quote: the cases of Go's strconv/quote_test.go (quotetests)", async (t) => {
  const cases: [string, string][] = [
    ['\x07\b\f\r\n\t\v', '"\\a\\b\\f\\r\\n\\t\\v"'],
    ['\\', '"\\\\"'],
    ['\u263a', '"☺"'],
    ['\u{10ffff}', '"\\U0010ffff"'],
    ['\x04', '"\\x04"'],
    // Non-printable but graphic runes.
    ['!\u00a0!\u2000!\u3000!', '"!\\u00a0!\\u2000!\\u3000!"'],
    ['\x7f', '"\\x7f"'],
  ]
  // Named by the expected output: the inputs hold line separators and control characters.
  for (const [input, quoted] of cases) t.equal(goQuote(input), quoted, quoted)
  // {"abc\xffdef", `"abc\xffdef"`}: a byte that is not UTF-8 exists only in a byte string.
  t.equal(goQuoteBytes('abc\xffdef'), '"abc\\xffdef"')
})

t.test('strconv.Quote: more cases, checked against Go 1.26.8', async (t) => {
  const cases: [string, string][] = [
    ['', '""'],
    ['"quoted"', '"\\"quoted\\""'],
    ['https://host\\x', '"https://host\\\\x"'],
    ['\x00', '"\\x00"'],
    ['\u2028', '"\\u2028"'],
    ['\u00ad', '"\\u00ad"'],
    ['é µ μ 😀', '"é µ μ 😀"'],
    // Assigned in Unicode 16, after Go 1.26's Unicode 15.0: Go escapes it.
    ['\u{1fae9}', '"\\U0001fae9"'],
    // A lone surrogate cannot reach Go: the API server decodes it as U+FFFD.
    ['\ud800x', '"\ufffdx"'],
  ]
  // Named by the expected output: the inputs hold line separators and control characters.
  for (const [input, quoted] of cases) t.equal(goQuote(input), quoted, quoted)
  t.equal(goQuoteBytes('\xc3\xa9\xc3'), '"é\\xc3"', 'a cut UTF-8 sequence')
  t.equal(goQuoteBytes('\xed\xa0\x80'), '"\\xed\\xa0\\x80"', 'an encoded surrogate is not UTF-8')
})

t.test('strconv.IsPrint', async (t) => {
  t.ok(isGoPrintable(0x20), 'the ASCII space')
  t.notOk(isGoPrintable(0xa0), 'other spaces are not')
  t.ok(isGoPrintable(0x263a))
  t.notOk(isGoPrintable(0x1fae9), 'assigned after Unicode 15.0')
  t.ok(isGoPrintable(0x1fae8), 'assigned in Unicode 15.0')
})

// No clock here (a timed assertion fails on a loaded machine): quadratic quoting of 6 MB would not
// finish within the test's timeout (.taprc), which fails it.
t.test('a huge value is quoted, not for ever', async (t) => {
  t.equal(goQuote('a'.repeat(6_000_000)).length, 6_000_002)
})
