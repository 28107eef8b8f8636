/**
 * A port of Go's time.ParseDuration (Go 1.26), which ToolHive's operator applies to a webhook
 * timeout (metav1.Duration): an optional sign, then `0` alone or one or more `<number><unit>`
 * with number `digits`, `digits.`, `digits.digits` or `.digits` and unit ns, us, µs (U+00B5),
 * μs (U+03BC), ms, s, m or h. The result must fit int64 nanoseconds. Errors carry Go's wording.
 */

import { toGoBytes } from './bytes.ts'

type GoDurationResult =
  | { readonly ok: true; readonly nanoseconds: bigint }
  | { readonly ok: false; readonly error: string }

const UNIT_NANOSECONDS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['µs', 1_000n], // U+00B5 micro sign
  ['μs', 1_000n], // U+03BC Greek small letter mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
])

const TWO_TO_63 = 1n << 63n

/** time.ParseDuration: nanoseconds, or Go's error message. */
export function parseGoDuration(text: string): GoDurationResult {
  const fail = (message: string): GoDurationResult => ({
    ok: false,
    error: `time: ${message} ${timeQuote(text)}`,
  })
  let s = text
  let negative = false
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s.startsWith('-')
    s = s.slice(1)
  }
  if (s === '0') return { ok: true, nanoseconds: 0n }
  if (s === '') return fail('invalid duration')
  let total = 0n
  let i = 0
  while (i < s.length) {
    if (!(s[i] === '.' || isDigit(s, i))) return fail('invalid duration')
    // The integer part; more than 2^63 overflows.
    const intStart = i
    let whole = 0n
    for (; isDigit(s, i); i++) {
      if (whole > TWO_TO_63 / 10n) return fail('invalid duration')
      whole = whole * 10n + BigInt(s.charCodeAt(i) - 48)
      if (whole > TWO_TO_63) return fail('invalid duration')
    }
    const hasInt = i > intStart
    // The fraction: digits past what 63 bits hold only stop adding precision.
    let fraction = 0n
    let scale = 1
    let hasFraction = false
    if (s[i] === '.') {
      i++
      const fractionStart = i
      let overflow = false
      for (; isDigit(s, i); i++) {
        if (overflow) continue
        if (fraction > (TWO_TO_63 - 1n) / 10n) {
          overflow = true
          continue
        }
        const next = fraction * 10n + BigInt(s.charCodeAt(i) - 48)
        if (next > TWO_TO_63) {
          overflow = true
          continue
        }
        fraction = next
        scale *= 10
      }
      hasFraction = i > fractionStart
    }
    if (!hasInt && !hasFraction) return fail('invalid duration') // ".s", "-.s"
    const unitStart = i
    while (i < s.length && s[i] !== '.' && !isDigit(s, i)) i++
    if (i === unitStart) return fail('missing unit in duration')
    const unitText = s.slice(unitStart, i)
    const unit = UNIT_NANOSECONDS.get(unitText)
    if (unit === undefined) return fail(`unknown unit ${timeQuote(unitText)} in duration`)
    if (whole > TWO_TO_63 / unit) return fail('invalid duration')
    let value = whole * unit
    if (fraction > 0n) {
      // Go computes this part in float64 ("nanosecond accurate for fractions of hours").
      value += BigInt(Math.trunc(Number(fraction) * (Number(unit) / scale)))
      if (value > TWO_TO_63) return fail('invalid duration')
    }
    total += value
    if (total > TWO_TO_63) return fail('invalid duration')
  }
  if (negative) return { ok: true, nanoseconds: -total }
  if (total > TWO_TO_63 - 1n) return fail('invalid duration')
  return { ok: true, nanoseconds: total }
}

function isDigit(s: string, i: number): boolean {
  const code = s.charCodeAt(i)
  return code >= 48 && code <= 57
}

/**
 * The time package's own quoting (not strconv.Quote): bytes outside printable ASCII as \xHH, `"`
 * and `\` backslashed, DEL kept.
 */
function timeQuote(text: string): string {
  const bytes = toGoBytes(text)
  let out = '"'
  for (let i = 0; i < bytes.length;) {
    // Runs of plain characters are copied at once: a value can be megabytes long.
    PLAIN_RUN.lastIndex = i
    const plain = PLAIN_RUN.exec(bytes)?.[0]
    if (plain !== undefined) {
      out += plain
      i += plain.length
      continue
    }
    const byte = bytes.charCodeAt(i)
    if (byte >= 0x80 || byte < 0x20) out += `\\x${byte.toString(16).padStart(2, '0')}`
    else out += `\\${String.fromCharCode(byte)}` // `"` or `\`
    i++
  }
  return `${out}"`
}

/** Printable ASCII and DEL, but `"` and `\`. */
const PLAIN_RUN = /[ !#-[\]-\x7f]+/y

/**
 * Milliseconds, or undefined when `text` is not a non-negative Go duration: the form our own
 * duration flags and a webhook's `timeout` take.
 */
export function parseDuration(text: string): number | undefined {
  const parsed = parseGoDuration(text)
  if (!parsed.ok || parsed.nanoseconds < 0n) return undefined
  return Number(parsed.nanoseconds) / 1e6
}
