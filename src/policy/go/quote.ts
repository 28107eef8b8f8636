/**
 * Go's strconv.Quote (`%q`), which apimachinery uses for the value of a field error and Go's
 * parsers use in their error messages: double quotes; `"` and `\` backslashed; printable Unicode
 * kept; \a \b \f \n \r \t \v; other control characters as \xHH; other non-printable runes as
 * \uHHHH or \UHHHHHHHH; bytes that are not UTF-8 as \xHH.
 */

import { RUNE_ERROR, decodeRune } from './bytes.ts'
import { isGoPrintable } from './printable.ts'

const SHORT_ESCAPES: Record<number, string> = {
  0x07: '\\a',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x0b: '\\v',
}

/** Printable ASCII other than `"` and `\\`: copied as is, a run at a time (values can be huge). */
const PLAIN_RUN = /[ !#-[\]-~]+/y

/** strconv.Quote of a JavaScript string (a lone surrogate is U+FFFD, as Go would have it). */
export function goQuote(text: string): string {
  let out = '"'
  for (let i = 0; i < text.length;) {
    PLAIN_RUN.lastIndex = i
    const plain = PLAIN_RUN.exec(text)?.[0]
    if (plain !== undefined) {
      out += plain
      i += plain.length
      continue
    }
    const code = text.codePointAt(i) ?? RUNE_ERROR
    out += escapeRune(code >= 0xd800 && code <= 0xdfff ? RUNE_ERROR : code)
    i += code > 0xffff ? 2 : 1
  }
  return `${out}"`
}

/** strconv.Quote of a byte string (see bytes.ts): invalid UTF-8 bytes become \\xHH. */
export function goQuoteBytes(bytes: string): string {
  let out = '"'
  for (let i = 0; i < bytes.length;) {
    PLAIN_RUN.lastIndex = i
    const plain = PLAIN_RUN.exec(bytes)?.[0]
    if (plain !== undefined) {
      out += plain
      i += plain.length
      continue
    }
    const { rune, width } = decodeRune(bytes, i)
    out +=
      width === 1 && rune === RUNE_ERROR ? `\\x${hex(bytes.charCodeAt(i), 2)}` : escapeRune(rune)
    i += width
  }
  return `${out}"`
}

/** The code point of one character of a string iteration, lone surrogates read as U+FFFD. */
export function runeOf(char: string): number {
  const rune = char.codePointAt(0) ?? RUNE_ERROR
  return rune >= 0xd800 && rune <= 0xdfff ? RUNE_ERROR : rune
}

/** One rune as strconv.Quote writes it between the quotes. */
export function escapeRune(rune: number): string {
  if (rune === 0x22 || rune === 0x5c) return `\\${String.fromCharCode(rune)}`
  if (isGoPrintable(rune)) return String.fromCodePoint(rune)
  const short = SHORT_ESCAPES[rune]
  if (short !== undefined) return short
  if (rune < 0x20 || rune === 0x7f) return `\\x${hex(rune, 2)}`
  return rune < 0x10000 ? `\\u${hex(rune, 4)}` : `\\U${hex(rune, 8)}`
}

function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, '0')
}
