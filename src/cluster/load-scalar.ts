/**
 * A YAML scalar resolved as kubectl resolves it: sigs.k8s.io/yaml reads YAML with go-yaml v2
 * (go.yaml.in/yaml/v2), whose rules are YAML 1.1's as Go implements them, not YAML 1.2's:
 * * `y`, `yes`, `on`, `true` (and `n`, `no`, `off`, `false`) in lower, Title or UPPER case are
 *   booleans; `~`, `null` (same cases) and nothing are null;
 * * integers are Go's: `0x1F`, `0o17`, `017` (octal), `0b101`, signs, and underscores anywhere
 *   (`1_000`); past int64 an unsigned 64-bit integer, past that a float when written as one;
 * * floats are decimal (`1.5`, `1e3`, `.5`, `.inf`, `.nan`); `08` is the float 8; one beyond
 *   float64 (`1e400`) is a string;
 * * a timestamp (`2001-12-14`) stays the string it is written as;
 * * quoted and block scalars are strings; an explicit tag resolves the text as that type or is
 *   an error (`!!int abc`); `!!binary` is its decoded bytes; any other tag gives the text.
 * Only what tells these apart is written here; the text itself comes from the yaml library.
 */

import { goJsonString } from './load-text.ts'

/** A resolved scalar, with the Go type that decides how it becomes JSON. */
export type GoScalar =
  | { readonly type: 'null' }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'int' | 'uint'; readonly value: bigint }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'string'; readonly value: string }

const PREFIX = 'tag:yaml.org,2002:'
const STR = `${PREFIX}str`
const BOOL = `${PREFIX}bool`
const INT = `${PREFIX}int`
const FLOAT = `${PREFIX}float`
const NULL = `${PREFIX}null`
const TIMESTAMP = `${PREFIX}timestamp`
const BINARY = `${PREFIX}binary`
export const MERGE = `${PREFIX}merge`

/** The tags go-yaml resolves a text by; any other gives the text itself. */
const RESOLVABLE = new Set(['', STR, BOOL, INT, FLOAT, NULL, TIMESTAMP])

const NULL_VALUE: GoScalar = { type: 'null' }

/** go-yaml's table of words, each with its tag. */
const WORDS = new Map<string, [string, GoScalar]>()
for (const [tag, value, words] of [
  [BOOL, { type: 'bool', value: true }, 'y Y yes Yes YES true True TRUE on On ON'],
  [BOOL, { type: 'bool', value: false }, 'n N no No NO false False FALSE off Off OFF'],
  [NULL, NULL_VALUE, '~ null Null NULL'],
  [FLOAT, { type: 'float', value: NaN }, '.nan .NaN .NAN'],
  [FLOAT, { type: 'float', value: Infinity }, '.inf .Inf .INF +.inf +.Inf +.INF'],
  [FLOAT, { type: 'float', value: -Infinity }, '-.inf -.Inf -.INF'],
  [MERGE, { type: 'string', value: '<<' }, '<<'],
] as const) {
  for (const word of words.split(' ')) WORDS.set(word, [tag, value])
}
WORDS.set('', [NULL, NULL_VALUE])

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/
/** Go's ParseFloat syntax for a text starting with `.`: digits, underscores between digits. */
const DOT_FLOAT = /^\.[0-9](_?[0-9])*([eE][-+]?[0-9](_?[0-9])*)?$/
const INT64_MAX = 2n ** 63n - 1n
const UINT64_MAX = 2n ** 64n - 1n

/**
 * The scalar `text` (its content, quotes and escapes already read) as Go reads it. `plain`: it
 * was written unquoted; `tag`: its tag in full (`tag:yaml.org,2002:int`, `!foo`), if any.
 * Throws a one-line reason where Go refuses the scalar.
 */
export function resolveScalar(text: string, tag: string | undefined, plain: boolean): GoScalar {
  if (tag === undefined && !plain) return { type: 'string', value: text }
  const explicit = tag ?? ''
  const [resolved, value] = resolve(explicit, text)
  if (resolved === BINARY) return { type: 'string', value: goJsonString(base64(text)) }
  if (explicit === '' || explicit === resolved || explicit === STR) return value
  if (explicit === FLOAT && resolved === INT && value.type === 'int') {
    return { type: 'float', value: Number(value.value) }
  }
  throw new Error(
    `cannot read ${shortTag(resolved)} ${JSON.stringify(text)} as ${shortTag(explicit)}`,
  )
}

/** Whether a mapping key is a merge key: `<<` unquoted, or tagged !!merge. */
export function isMergeKey(text: string, tag: string | undefined, plain: boolean): boolean {
  return text === '<<' && ((plain && tag === undefined) || tag === '!' || tag === MERGE)
}

/** go-yaml's resolve(): the resolved tag and value of `text` under `tag` ('' for none). */
function resolve(tag: string, text: string): [string, GoScalar] {
  const string: [string, GoScalar] = [STR, { type: 'string', value: text }]
  if (!RESOLVABLE.has(tag)) return [tag, string[1]]
  if (tag === STR) return string
  // The first byte hints at what the text may be; most texts are strings at once.
  const hint = text === '' ? 'N' : hintOf(text.charCodeAt(0))
  if (hint === undefined) return string
  const word = WORDS.get(text)
  if (word !== undefined) return word
  if (hint === '.') {
    if (!DOT_FLOAT.test(text)) return string
    const value = Number(text.replaceAll('_', ''))
    return Number.isFinite(value) ? [FLOAT, { type: 'float', value }] : string
  }
  if (hint !== 'D' && hint !== 'S') return string
  // Only an explicit !!timestamp needs the check: unquoted, a timestamp is its text anyway.
  if (tag === TIMESTAMP && isGoTimestamp(text)) return [TIMESTAMP, string[1]]
  const plain = text.replaceAll('_', '')
  const integer = parseGoInt(plain, 0) ?? parseGoUint(plain, 0)
  if (integer !== undefined) return [INT, integer]
  if (YAML_STYLE_FLOAT.test(plain)) {
    const value = Number(plain)
    if (Number.isFinite(value)) return [FLOAT, { type: 'float', value }]
  }
  if (plain.startsWith('0b')) {
    const binary = parseGoInt(plain.slice(2), 2) ?? parseGoUint(plain.slice(2), 2)
    if (binary !== undefined) return [INT, binary]
  } else if (plain.startsWith('-0b')) {
    const binary = parseGoInt(`-${plain.slice(3)}`, 2)
    if (binary !== undefined) return [INT, binary]
  }
  return string
}

function hintOf(code: number): string | undefined {
  if (code === 0x2b || code === 0x2d) return 'S'
  if (code >= 0x30 && code <= 0x39) return 'D'
  if (code === 0x2e) return '.'
  return 'yYnNtTfFoO~'.includes(String.fromCharCode(code)) ? 'M' : undefined
}

/** strconv.ParseInt(text, base, 64) (base 0: Go's prefixes), as an int; undefined on error. */
function parseGoInt(text: string, base: number): GoScalar | undefined {
  const negative = text.startsWith('-')
  const magnitude = unsignedValue(/^[-+]/.test(text) ? text.slice(1) : text, base)
  if (magnitude === undefined || magnitude > INT64_MAX + (negative ? 1n : 0n)) return undefined
  return { type: 'int', value: negative ? -magnitude : magnitude }
}

/** strconv.ParseUint(text, base, 64), kept only past int64 (below, ParseInt took it). */
function parseGoUint(text: string, base: number): GoScalar | undefined {
  const value = unsignedValue(text, base)
  return value === undefined ? undefined : { type: 'uint', value }
}

/** ParseUint's digits: base 0 reads `0b`, `0o`, `0x` and a leading `0` (octal). */
function unsignedValue(text: string, base: number): bigint | undefined {
  if (text === '') return undefined
  let digits = text
  if (base === 0) {
    base = 10
    if (text.startsWith('0')) {
      const prefix = text.length >= 3 ? (text[1] ?? '').toLowerCase() : ''
      base = prefix === 'b' ? 2 : prefix === 'x' ? 16 : 8
      digits = text.slice(prefix === 'b' || prefix === 'o' || prefix === 'x' ? 2 : 1)
    }
  }
  let value = 0n
  for (const c of digits.toLowerCase()) {
    const digit = c >= '0' && c <= '9' ? c.charCodeAt(0) - 48 : c.charCodeAt(0) - 87
    if (!(digit >= 0 && digit < base) || !/[0-9a-z]/.test(c)) return undefined
    value = value * BigInt(base) + BigInt(digit)
    if (value > UINT64_MAX) return undefined
  }
  return value
}

/** Go's base64.StdEncoding: padded, line breaks ignored, nothing else. */
function base64(text: string): Uint8Array {
  const compact = text.replace(/[\r\n]/g, '')
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(compact)) {
    throw new Error('!!binary value contains invalid base64 data')
  }
  return Buffer.from(compact, 'base64')
}

function shortTag(tag: string): string {
  return tag.startsWith(PREFIX) ? `!!${tag.slice(PREFIX.length)}` : tag
}

/**
 * Whether go-yaml reads `text` as a timestamp: Go's time.Parse with one of its layouts
 * `2006-1-2T15:4:5.999999999Z07:00` (or a lower-case t), `2006-1-2 15:4:5.999999999` and
 * `2006-1-2`, each field in its range, the day within its month.
 */
export function isGoTimestamp(text: string): boolean {
  const date = /^(\d{4})-(\d\d?)-(\d\d?)/.exec(text)
  if (date === null) return false
  const [, year = '', month = '', day = ''] = date
  if (!validDate(Number(year), Number(month), Number(day))) return false
  const time = text.slice(date[0].length)
  if (time === '') return true
  const clock =
    /^(?:[Tt](\d\d?):(\d\d?):(\d\d?)(?:[.,]\d+)?(?:Z|[+-](\d\d):(\d\d))| +(\d\d?):(\d\d?):(\d\d?)(?:[.,]\d+)?)$/.exec(
      time,
    )
  if (clock === null) return false
  const [, hour, minute, second, zoneHour, zoneMinute, hour2, minute2, second2] = clock
  return (
    Number(hour ?? hour2) < 24 &&
    Number(minute ?? minute2) < 60 &&
    Number(second ?? second2) < 60 &&
    Number(zoneHour ?? 0) <= 24 &&
    Number(zoneMinute ?? 0) <= 60
  )
}

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0
  return day <= days
}
