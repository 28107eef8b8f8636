import t from 'tap'
import { parseGoDuration } from '../../../src/policy/go/duration.ts'

const SECOND = 1_000_000_000n
const MINUTE = 60n * SECOND
const HOUR = 60n * MINUTE
const MILLISECOND = 1_000_000n
const MICROSECOND = 1_000n
const MAX = (1n << 63n) - 1n
const MIN = -(1n << 63n)

t.test("time.ParseDuration: Go's parseDurationTests (src/time/time_test.go)", async (t) => {
  const cases: [string, bigint][] = [
    // simple
    ['0', 0n],
    ['5s', 5n * SECOND],
    ['30s', 30n * SECOND],
    ['1478s', 1478n * SECOND],
    // sign
    ['-5s', -5n * SECOND],
    ['+5s', 5n * SECOND],
    ['-0', 0n],
    ['+0', 0n],
    // decimal
    ['5.0s', 5n * SECOND],
    ['5.6s', 5n * SECOND + 600n * MILLISECOND],
    ['5.s', 5n * SECOND],
    ['.5s', 500n * MILLISECOND],
    ['1.0s', SECOND],
    ['1.00s', SECOND],
    ['1.004s', SECOND + 4n * MILLISECOND],
    ['1.0040s', SECOND + 4n * MILLISECOND],
    ['100.00100s', 100n * SECOND + MILLISECOND],
    // different units
    ['10ns', 10n],
    ['11us', 11n * MICROSECOND],
    ['12µs', 12n * MICROSECOND], // U+00B5
    ['12μs', 12n * MICROSECOND], // U+03BC
    ['13ms', 13n * MILLISECOND],
    ['14s', 14n * SECOND],
    ['15m', 15n * MINUTE],
    ['16h', 16n * HOUR],
    // composite durations
    ['3h30m', 3n * HOUR + 30n * MINUTE],
    ['10.5s4m', 4n * MINUTE + 10n * SECOND + 500n * MILLISECOND],
    ['-2m3.4s', -(2n * MINUTE + 3n * SECOND + 400n * MILLISECOND)],
    [
      '1h2m3s4ms5us6ns',
      HOUR + 2n * MINUTE + 3n * SECOND + 4n * MILLISECOND + 5n * MICROSECOND + 6n,
    ],
    ['39h9m14.425s', 39n * HOUR + 9n * MINUTE + 14n * SECOND + 425n * MILLISECOND],
    // large value
    ['52763797000ns', 52763797000n],
    // more than 9 digits after decimal point, see https://golang.org/issue/6617
    ['0.3333333333333333333h', 20n * MINUTE],
    // 9007199254740993 = 1<<53+1 cannot be stored precisely in a float64
    ['9007199254740993ns', (1n << 53n) + 1n],
    // largest duration that can be represented by int64 in nanoseconds
    ['9223372036854775807ns', MAX],
    ['9223372036854775.807us', MAX],
    ['9223372036s854ms775us807ns', MAX],
    ['-9223372036854775808ns', MIN],
    ['-9223372036854775.808us', MIN],
    ['-9223372036s854ms775us808ns', MIN],
    // largest negative round trip value, see https://golang.org/issue/48629
    ['-2562047h47m16.854775808s', MIN],
    // huge string; issue 15011.
    ['0.100000000000000000000h', 6n * MINUTE],
    // This value tests the first overflow check in leadingFraction.
    ['0.830103483285477580700h', 49n * MINUTE + 48n * SECOND + 372539827n],
  ]
  for (const [input, nanoseconds] of cases) {
    t.same(parseGoDuration(input), { ok: true, nanoseconds }, input)
  }
})

t.test("time.ParseDuration: Go's parseDurationErrorTests", async (t) => {
  // Go checks that the error contains the quoted input; inputs with bytes that are not UTF-8
  // ("\x85\x85", "\xffff") cannot come from JSON and are left out.
  const cases: [string, string][] = [
    ['', '""'],
    ['3', '"3"'],
    ['-', '"-"'],
    ['s', '"s"'],
    ['.', '"."'],
    ['-.', '"-."'],
    ['.s', '".s"'],
    ['+.s', '"+.s"'],
    ['1d', '"1d"'],
    ['\uFFFD', '"\\xef\\xbf\\xbd"'],
    ['\uFFFD hello \uFFFD world', '"\\xef\\xbf\\xbd hello \\xef\\xbf\\xbd world"'],
    // overflow
    ['9223372036854775810ns', '"9223372036854775810ns"'],
    ['9223372036854775808ns', '"9223372036854775808ns"'],
    ['-9223372036854775809ns', '"-9223372036854775809ns"'],
    ['9223372036854776us', '"9223372036854776us"'],
    ['3000000h', '"3000000h"'],
    ['9223372036854775.808us', '"9223372036854775.808us"'],
    ['9223372036854ms775us808ns', '"9223372036854ms775us808ns"'],
  ]
  for (const [input, quoted] of cases) {
    const result = parseGoDuration(input)
    t.ok(!result.ok && result.error.includes(quoted), `${JSON.stringify(input)}: ${quoted}`)
  }
})

t.test("Go's exact error messages (Go 1.26.8)", async (t) => {
  const cases: [string, string][] = [
    ['1x', 'time: unknown unit "x" in duration "1x"'],
    ['1', 'time: missing unit in duration "1"'],
    ['', 'time: invalid duration ""'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['1é', 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'],
    ['\x00', 'time: invalid duration "\\x00"'],
  ]
  for (const [input, error] of cases) t.same(parseGoDuration(input), { ok: false, error }, input)
})

t.test('issue 17: durations Go accepts', async (t) => {
  const cases: [string, bigint][] = [
    ['+5s', 5n * SECOND],
    ['-0s', 0n],
    ['30000000μs', 30n * SECOND], // U+03BC Greek mu
    ['30000000µs', 30n * SECOND], // U+00B5 micro sign
    ['-5s', -5n * SECOND],
    ['1.s', SECOND],
  ]
  for (const [input, nanoseconds] of cases) {
    t.same(parseGoDuration(input), { ok: true, nanoseconds }, input)
  }
})

// No clock here: a timed assertion fails on a loaded machine. A parser quadratic in these lengths
// (10^12 steps and more) would not finish within the test's timeout (.taprc), which fails it.
t.test('a huge duration string is rejected, not parsed for ever', async (t) => {
  t.notOk(parseGoDuration(`0.${'1'.repeat(6_000_000)}`).ok)
  t.notOk(parseGoDuration(`${'1s'.repeat(500_000)}x`).ok)
})
