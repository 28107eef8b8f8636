/**
 * One JSON value of a stream, scanned as Go's json.Decoder reads one: where it ends (the next
 * may follow at once, `{…}{…}`), or where and why it is not JSON. The same linear pass finds
 * what JSON.parse would pass over silently: the first repeated key of an object (Go keeps the
 * last; the loader refuses it, as in YAML) and the first integer kubectl holds exactly as an
 * int64 that a JavaScript number cannot (past 2^53 and not a double). Walked without recursion.
 */

import { jsonQuoted } from '../policy/messages/render.ts'

export interface JsonScan {
  readonly error?: undefined
  readonly end: number
  readonly duplicate?: { readonly key: string; readonly offset: number } | undefined
  readonly inexact?: { readonly literal: string; readonly offset: number } | undefined
  /** The first number beyond float64 (`1e400`), which Go's JSON reader refuses. */
  readonly infinite?: { readonly literal: string; readonly offset: number } | undefined
}

interface JsonScanError {
  readonly error: string
  readonly offset: number
}

const INT64_MAX = 2n ** 63n - 1n
const INT64_MIN = -(2n ** 63n)

/** Scans the JSON value starting at `start` (no leading space). */
export function scanJsonValue(text: string, start: number): JsonScan | JsonScanError {
  // One entry per open container: the keys seen (an object) or undefined (an array).
  const open: (Set<string> | undefined)[] = []
  let duplicate: JsonScan['duplicate']
  let inexact: JsonScan['inexact']
  let infinite: JsonScan['infinite']
  let i = start
  const fail = (at: number): JsonScanError => ({
    error:
      at >= text.length
        ? 'invalid JSON: unexpected end of the text'
        : `invalid JSON: unexpected ${jsonQuoted(text.slice(at, at + 20))}`,
    offset: at,
  })
  const space = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i] ?? '')) i++
  }
  for (;;) {
    // A value.
    const c = text[i]
    if (c === '{' || c === '[') {
      open.push(c === '{' ? new Set() : undefined)
      i++
      space()
      if (text[i] === (c === '{' ? '}' : ']')) {
        open.pop()
        i++
      } else if (c === '{') {
        const key = scanKey()
        if (typeof key !== 'number') return key
        continue
      } else continue
    } else if (c === '"') {
      const end = stringEnd(text, i)
      if (end < 0) return fail(-end)
      i = end
    } else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      const match = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y
      match.lastIndex = i
      const number = match.exec(text)
      if (number === null) return fail(i + 1)
      const literal = number[0]
      if (inexact === undefined && number[1] === undefined && number[2] === undefined) {
        // Past 16 digits an integer may not be a double; kubectl holds it exactly as an int64.
        const digits = literal.replace('-', '')
        if (digits.length >= 16) {
          const value = BigInt(literal)
          const fits = value >= INT64_MIN && value <= INT64_MAX
          if (fits && BigInt(Number(value)) !== value) inexact = { literal, offset: i }
        }
      }
      // Only an exponent or hundreds of digits reach past float64.
      const long = number[2] !== undefined || literal.length > 300
      if (infinite === undefined && long && !Number.isFinite(Number(literal))) {
        infinite = { literal, offset: i }
      }
      i += literal.length
    } else {
      const word = /true|false|null/y
      word.lastIndex = i
      const literal = word.exec(text)
      if (literal === null) return fail(i)
      i += literal[0].length
    }
    // After a value: the end of the text's value, or a separator, or a container's end.
    for (;;) {
      const container = open.at(-1)
      if (open.length === 0) return { end: i, duplicate, inexact, infinite }
      space()
      const next = text[i]
      if (next === ',') {
        i++
        space()
        if (container !== undefined) {
          const key = scanKey()
          if (typeof key !== 'number') return key
        }
        break
      }
      if (next === (container === undefined ? ']' : '}')) {
        open.pop()
        i++
        continue
      }
      return fail(i)
    }
  }

  /** A key, its colon and the space before the value; records a repetition. */
  function scanKey(): number | JsonScanError {
    if (text[i] !== '"') return fail(i)
    const end = stringEnd(text, i)
    if (end < 0) return fail(-end)
    const raw = text.slice(i, end)
    const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1)
    const keys = open.at(-1)
    if (keys?.has(key) === true) duplicate ??= { key, offset: i }
    keys?.add(key)
    i = end
    space()
    if (text[i] !== ':') return fail(i)
    i++
    space()
    return i
  }
}

/** The offset after the string starting at `start`, or minus where it goes wrong. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) return i + 1
    if (c < 0x20) return -i
    if (c === 0x5c) {
      const escape = text[i + 1] ?? ''
      if ('"\\/bfnrt'.includes(escape) && escape !== '') i++
      else if (escape === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 5
      else return -i
    }
  }
  return -text.length
}
