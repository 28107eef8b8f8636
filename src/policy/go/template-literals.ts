/**
 * The literals of a Go template as text/template/parse (Go 1.27) checks them with strconv: quoted
 * strings (Unquote), character constants (UnquoteChar) and numbers (newNumber: ParseUint,
 * ParseInt, ParseFloat, and fmt.Sscan for a complex `1+2i`). The lexer (template-lex.ts) decides
 * where a literal ends; these say whether Go can read it. Byte strings in and out (bytes.ts).
 */

import { fromGoBytes, toGoBytes } from './bytes.ts'
import { goQuoteBytes } from './quote.ts'

const INVALID_SYNTAX = 'invalid syntax'
const MAX_UINT64 = (1n << 64n) - 1n
const INT64_CUTOFF = 1n << 63n

/** strconv.Unquote of a string token (`"…"` or a raw `` `…` ``): its value, or undefined. */
export function unquote(token: string): string | undefined {
  if (token.startsWith('`')) return token.slice(1, -1).replaceAll('\r', '')
  // The lexer ended the token at its first unescaped quote, so only the escapes can be wrong.
  let value = ''
  for (let i = 1; i < token.length - 1;) {
    const char = unquoteChar(token, i, 0x22)
    if (char === undefined) return undefined
    value += char.bytes
    i = char.next
  }
  return value
}

/** newNumber for a character constant `'…'`: undefined when Go reads it, else its error. */
export function charConstantError(token: string): string | undefined {
  const char = unquoteChar(token, 1, 0x27)
  if (char === undefined) return INVALID_SYNTAX
  if (char.next !== token.length - 1) return `malformed character constant: ${fromGoBytes(token)}`
  return undefined
}

/**
 * newNumber for a number token: undefined when Go reads it (as an unsigned or signed 64-bit
 * integer, a float64, or an imaginary or complex number), else its error.
 */
export function numberError(token: string, complex: boolean): string | undefined {
  if (complex) return complexError(token)
  // An imaginary constant: Go keeps it (as a complex) when the rest is a float.
  if (token.endsWith('i') && parseGoFloat(token.slice(0, -1)) === 'ok') return undefined
  if (parseGoUint(token) !== undefined || parseGoInt(token)) return undefined
  if (parseGoFloat(token) !== 'ok') return `illegal number syntax: ${goQuoteBytes(token)}`
  // A float that looks like an integer is an integer too large for 64 bits.
  if (!/[.eEpP]/.test(token)) return `integer overflow: ${goQuoteBytes(token)}`
  return undefined
}

interface Char {
  /** The bytes the character stands for. */
  readonly bytes: string
  /** Where the rest of the literal starts. */
  readonly next: number
}

/** strconv.UnquoteChar of the literal's character at `at`; `quote` cannot appear bare. */
function unquoteChar(text: string, at: number, quote: number): Char | undefined {
  const c = text.charCodeAt(at)
  if (Number.isNaN(c) || c === quote) return undefined
  if (c !== 0x5c) {
    // A multi-byte rune is copied whole: its bytes are all above 0x7f.
    let next = at + 1
    if (c >= 0x80) while (text.charCodeAt(next) >= 0x80 && text.charCodeAt(next) < 0xc0) next++
    return { bytes: text.slice(at, next), next }
  }
  // The lexer ended the literal with a quote, so something follows the backslash.
  const escape = text.charAt(at + 1)
  const rest = at + 2
  const simple = SIMPLE_ESCAPES[escape]
  if (simple !== undefined) return { bytes: simple, next: rest }
  if (escape.charCodeAt(0) === quote || escape === '\\') return { bytes: escape, next: rest }
  const hexDigits = escape === 'x' ? 2 : escape === 'u' ? 4 : escape === 'U' ? 8 : 0
  if (hexDigits > 0) {
    const digits = text.slice(rest, rest + hexDigits)
    if (!new RegExp(`^[0-9a-fA-F]{${hexDigits}}$`).test(digits)) return undefined
    const value = Number.parseInt(digits, 16)
    const next = rest + hexDigits
    // \x is one byte, UTF-8 or not; \u and \U are a rune, encoded.
    if (escape === 'x') return { bytes: String.fromCharCode(value), next }
    if (value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return undefined
    return { bytes: toGoBytes(String.fromCodePoint(value)), next }
  }
  const octal = text.slice(at + 1, at + 4)
  if (/^[0-7]{3}$/.test(octal) && Number.parseInt(octal, 8) <= 0xff) {
    return { bytes: String.fromCharCode(Number.parseInt(octal, 8)), next: at + 4 }
  }
  return undefined
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
}

/** strconv.ParseUint(s, 0, 64): the value, or undefined for a syntax or range error. */
function parseGoUint(s: string): bigint | undefined {
  if (s === '') return undefined
  let base = 10n
  let digits = s
  if (s.startsWith('0')) {
    const prefix = s.length >= 3 ? lower(s.charCodeAt(1)) : 0
    base = prefix === 0x62 ? 2n : prefix === 0x6f ? 8n : prefix === 0x78 ? 16n : 8n
    digits = s.slice(base === 8n && prefix !== 0x6f ? 1 : 2)
  }
  let value = 0n
  let underscores = false
  for (let i = 0; i < digits.length; i++) {
    const c = digits.charCodeAt(i)
    if (c === 0x5f) {
      underscores = true
      continue
    }
    const digit = digitValue(c)
    if (digit >= base) return undefined
    value = value * base + digit
    if (value > MAX_UINT64) return undefined
  }
  if (underscores && !underscoreOK(s)) return undefined
  return value
}

/** strconv.ParseInt(s, 0, 64) succeeds. */
function parseGoInt(s: string): boolean {
  const negative = s.startsWith('-')
  const magnitude = parseGoUint(negative || s.startsWith('+') ? s.slice(1) : s)
  if (magnitude === undefined) return false
  return negative ? magnitude <= INT64_CUTOFF : magnitude < INT64_CUTOFF
}

/** A digit in bases up to 36; 36 for anything else (too large for any base used here). */
function digitValue(c: number): bigint {
  if (c >= 0x30 && c <= 0x39) return BigInt(c - 0x30)
  const letter = lower(c)
  return letter >= 0x61 && letter <= 0x7a ? BigInt(letter - 0x61 + 10) : 36n
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39
}

function lower(c: number): number {
  return c | 0x20
}

/**
 * Go's underscoreOK: underscores only between digits, or between a base prefix and a digit
 * (`0x_1`), never first or last.
 */
function underscoreOK(number: string): boolean {
  let s = number
  if (s.startsWith('-') || s.startsWith('+')) s = s.slice(1)
  let saw = '^' // ^ start, 0 digit or base prefix, _ underscore, ! anything else
  let i = 0
  let hex = false
  if (
    s.length >= 2 &&
    s[0] === '0' &&
    'box'.includes(String.fromCharCode(lower(s.charCodeAt(1))))
  ) {
    i = 2
    saw = '0'
    hex = lower(s.charCodeAt(1)) === 0x78
  }
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i)
    const letter = lower(c)
    if ((c >= 0x30 && c <= 0x39) || (hex && letter >= 0x61 && letter <= 0x66)) {
      saw = '0'
    } else if (c === 0x5f) {
      if (saw !== '0') return false
      saw = '_'
    } else {
      if (saw === '_') return false
      saw = '!'
    }
  }
  return saw !== '_'
}

type FloatVerdict = 'ok' | 'syntax' | 'range'

/**
 * strconv.ParseFloat(s, 64), decimal or hexadecimal (the lexer never hands it the words `inf`
 * or `nan`): 'range' when the value rounds beyond the largest float64.
 */
function parseGoFloat(s: string): FloatVerdict {
  const read = readFloat(s)
  if (read === undefined || read.end !== s.length) return 'syntax'
  if (!read.hex) return Number.isFinite(Number(s.replaceAll('_', ''))) ? 'ok' : 'range'
  return hexOverflows(read.mantissa, read.exponent) ? 'range' : 'ok'
}

interface ReadFloat {
  /** Where the float ends in the text. */
  readonly end: number
  readonly hex: boolean
  /** For a hex float, the value is mantissa × 2^exponent (both 0 for a decimal one). */
  readonly mantissa: bigint
  readonly exponent: number
}

/** Go's readFloat: the syntax of a float at the start of `s`, undefined if there is none. */
function readFloat(s: string): ReadFloat | undefined {
  let i = 0
  if (s[i] === '+' || s[i] === '-') i++
  let hex = false
  if (i + 2 < s.length && s[i] === '0' && lower(s.charCodeAt(i + 1)) === 0x78) {
    hex = true
    i += 2
  }
  let underscores = false
  let sawDot = false
  let sawDigits = false
  let mantissa = 0n
  let fractionDigits = 0
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 0x5f) {
      underscores = true
    } else if (c === 0x2e && !sawDot) {
      sawDot = true
    } else if ((c >= 0x30 && c <= 0x39) || (hex && lower(c) >= 0x61 && lower(c) <= 0x66)) {
      sawDigits = true
      if (hex) {
        mantissa = mantissa * 16n + digitValue(c)
        if (sawDot) fractionDigits++
      }
    } else {
      break
    }
  }
  if (!sawDigits) return undefined
  let exponent = 0
  if (i < s.length && lower(s.charCodeAt(i)) === (hex ? 0x70 : 0x65)) {
    i++
    let sign = 1
    if (s[i] === '+' || s[i] === '-') sign = s[i++] === '-' ? -1 : 1
    if (!isDigit(s.charCodeAt(i))) return undefined
    for (; isDigit(s.charCodeAt(i)) || s.charCodeAt(i) === 0x5f; i++) {
      if (s[i] === '_') underscores = true
      // Go stops adding digits past 10000; the value is out of range either way.
      else if (exponent < 10000) exponent = exponent * 10 + s.charCodeAt(i) - 0x30
    }
    exponent *= sign
  } else if (hex) {
    return undefined // a hex float needs its p exponent
  }
  if (underscores && !underscoreOK(s.slice(0, i))) return undefined
  return { end: i, hex, mantissa, exponent: exponent - 4 * fractionDigits }
}

/** mantissa × 2^exponent, rounded to 53 bits (half to even), exceeds the largest float64. */
function hexOverflows(mantissa: bigint, exponent: number): boolean {
  if (mantissa === 0n) return false
  const bits = mantissa.toString(2).length
  const top = bits - 1 + exponent // the exponent of the leading bit
  if (top !== 1023) return top > 1023
  if (bits <= 53) return false
  const dropped = BigInt(bits - 53)
  const kept = mantissa >> dropped
  const rest = mantissa & ((1n << dropped) - 1n)
  const half = 1n << (dropped - 1n)
  const roundsUp = rest > half || (rest === half && (kept & 1n) === 1n)
  return roundsUp && kept + 1n === 1n << 53n
}

/**
 * fmt.Sscan of a complex constant the lexer found (`1+2i`, both parts numbers, the second
 * signed and ending in i): undefined when it reads, else the error Sscan gives.
 */
function complexError(token: string): string | undefined {
  const reader = new TokenReader(token)
  const real = reader.floatToken()
  if (!reader.accept('+-')) return 'syntax error scanning complex number'
  const imaginary = token.slice(reader.at - 1, reader.at) + reader.floatToken()
  if (!reader.accept('i')) return 'syntax error scanning complex number'
  for (const part of [real, imaginary]) {
    const verdict = parseGoFloat(part)
    if (verdict !== 'ok') {
      const reason = verdict === 'range' ? 'value out of range' : INVALID_SYNTAX
      return `strconv.ParseFloat: parsing ${goQuoteBytes(part)}: ${reason}`
    }
  }
  return undefined
}

/** The scanner of fmt.Sscan, as far as it goes for a float token. */
class TokenReader {
  at = 0
  private readonly text: string

  constructor(text: string) {
    this.text = text
  }

  accept(chars: string): boolean {
    const char = this.text[this.at]
    if (char === undefined || !chars.includes(char)) return false
    this.at++
    return true
  }

  /** fmt's floatToken: a sign, digits (0x and hex digits), a point, digits, an exponent. */
  floatToken(): string {
    const start = this.at
    // NaN is not looked for: the lexer starts a number with a sign, a digit or a point.
    this.accept('+-')
    // Inf: the lexer ends a number at its i, so what Sscan takes here is never more than "i".
    this.accept('iI')
    let digits = '0123456789_'
    let exponent = 'eEpP'
    if (this.accept('0') && this.accept('xX')) {
      digits = '0123456789aAbBcCdDeEfF_'
      exponent = 'pP'
    }
    while (this.accept(digits));
    if (this.accept('.')) while (this.accept(digits));
    if (this.accept(exponent)) {
      this.accept('+-')
      while (this.accept('0123456789_'));
    }
    return this.text.slice(start, this.at)
  }
}
