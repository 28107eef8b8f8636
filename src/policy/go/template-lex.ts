/**
 * The lexer of Go's text/template/parse (Go 1.27), with the default delimiters `{{` and `}}`,
 * comments dropped: the tokens of a template in the order its parser (template.ts) asks for them.
 * Runs on the UTF-8 bytes (bytes.ts) so that the excerpts in errors are Go's.
 */

import { decodeRune } from './bytes.ts'
import { isGoPrintable } from './printable.ts'
import { goQuoteBytes } from './quote.ts'

export type ItemType =
  | 'error' // the text of a lexing error; the lexer stops after it
  | 'bool'
  | 'char' // a printable ASCII character the grammar has no other use for, such as `,`
  | 'charConstant'
  | 'complex' // 1+2i
  | 'assign' // =
  | 'declare' // :=
  | 'EOF'
  | 'field' // .Name
  | 'identifier'
  | 'leftDelim'
  | 'leftParen'
  | 'number'
  | 'pipe'
  | 'rawString'
  | 'rightDelim'
  | 'rightParen'
  | 'space'
  | 'string'
  | 'text'
  | 'variable' // $ or $name
  | Keyword

type Keyword =
  | 'block'
  | 'break'
  | 'continue'
  | 'dot'
  | 'define'
  | 'else'
  | 'end'
  | 'if'
  | 'nil'
  | 'range'
  | 'template'
  | 'with'

const KEYWORDS: ReadonlyMap<string, Keyword> = new Map([
  ['block', 'block'],
  ['break', 'break'],
  ['continue', 'continue'],
  ['define', 'define'],
  ['else', 'else'],
  ['end', 'end'],
  ['if', 'if'],
  ['nil', 'nil'],
  ['range', 'range'],
  ['template', 'template'],
  ['with', 'with'],
])

const KEYWORD_TYPES: ReadonlySet<ItemType> = new Set([...KEYWORDS.values(), 'dot'])

export interface Item {
  readonly type: ItemType
  /** A byte string: the token as written (an error's message for 'error'). */
  readonly value: string
  /** The line the token starts on, from 1. */
  readonly line: number
}

/**
 * The way Go's parser names an unexpected token in its errors (item.String). Never EOF (inside an
 * action the lexer reports it as unclosed; outside, a list ends there) nor an error token (the
 * parser reports its message as is).
 */
export function describeItem(item: Item): string {
  if (KEYWORD_TYPES.has(item.type)) return `<${item.value}>`
  // `%.10q`: the first ten runes, quoted.
  if (item.value.length > 10) return `${goQuoteBytes(firstRunes(item.value, 10))}...`
  return goQuoteBytes(item.value)
}

function firstRunes(bytes: string, count: number): string {
  let end = 0
  for (let n = 0; n < count && end < bytes.length; n++) end += decodeRune(bytes, end).width
  return bytes.slice(0, end)
}

const EOF = -1
const LEFT_DELIM = '{{'
const RIGHT_DELIM = '}}'
const LEFT_COMMENT = '/*'
const RIGHT_COMMENT = '*/'
/** A trim marker is `-` with an ASCII space on the side away from the delimiter. */
const TRIM_MARKER_LENGTH = 2
const DECIMAL_DIGITS = '0123456789_'
const HEX_DIGITS = '0123456789abcdefABCDEF_'

/** The tokens of a template, one at a time as the parser asks. */
export class Lexer {
  private readonly scanner: Scanner

  /**
   * `bytes` is the template's UTF-8 (so valid: the lexer steps back one rune by its lead byte).
   * `break` and `continue` are keywords unless a function takes the name.
   */
  constructor(bytes: string, breakIsKeyword: boolean, continueIsKeyword: boolean) {
    this.scanner = new Scanner(bytes, breakIsKeyword, continueIsKeyword)
  }

  /** The next token; after an 'error' token, only EOF. */
  nextItem(): Item {
    const l = this.scanner
    l.item = { type: 'EOF', value: 'EOF', line: l.startLine }
    let state: State | null = l.insideAction ? lexInsideAction : lexText
    while (state !== null) state = state(l)
    return l.item
  }
}

/** A state of the scanner: it lexes some input and names the next state, or null once it emitted. */
type State = (l: Scanner) => State | null

/** Go's lexer struct and its primitives, which the state functions below drive. */
class Scanner {
  input: string
  pos = 0
  /** Start of the token being scanned. */
  start = 0
  atEOF = false
  parenDepth = 0
  line = 1
  startLine = 1
  insideAction = false
  item: Item = { type: 'EOF', value: 'EOF', line: 1 }
  readonly breakIsKeyword: boolean
  readonly continueIsKeyword: boolean

  constructor(bytes: string, breakIsKeyword: boolean, continueIsKeyword: boolean) {
    this.input = bytes
    this.breakIsKeyword = breakIsKeyword
    this.continueIsKeyword = continueIsKeyword
  }

  next(): number {
    if (this.pos >= this.input.length) {
      this.atEOF = true
      return EOF
    }
    const byte = this.input.charCodeAt(this.pos)
    if (byte < 0x80) {
      this.pos++
      if (byte === 0x0a) this.line++
      return byte
    }
    const { rune, width } = decodeRune(this.input, this.pos)
    this.pos += width
    return rune
  }

  peek(): number {
    const rune = this.next()
    this.backup()
    return rune
  }

  /** Steps back one rune (once EOF was read, the position stays there, as in Go). */
  backup(): void {
    if (this.atEOF || this.pos === 0) return
    do this.pos--
    while (isContinuationByte(this.input.charCodeAt(this.pos)))
    if (this.input.charCodeAt(this.pos) === 0x0a) this.line--
  }

  take(type: ItemType): Item {
    const item = { type, value: this.input.slice(this.start, this.pos), line: this.startLine }
    this.start = this.pos
    this.startLine = this.line
    return item
  }

  emit(type: ItemType): null {
    return this.emitItem(this.take(type))
  }

  emitItem(item: Item): null {
    this.item = item
    return null
  }

  /** Skips the input before the position, counting its newlines. */
  ignore(): void {
    this.line += countNewlines(this.input, this.start, this.pos)
    this.start = this.pos
    this.startLine = this.line
  }

  accept(valid: string): boolean {
    if (includesRune(valid, this.next())) return true
    this.backup()
    return false
  }

  acceptRun(valid: string): void {
    while (includesRune(valid, this.next()));
    this.backup()
  }

  /** Ends the scan with an error token. */
  fail(message: string): null {
    this.item = { type: 'error', value: message, line: this.startLine }
    this.start = 0
    this.pos = 0
    this.input = ''
    return null
  }

  /** After an identifier, field or variable: space, EOF, `.,|:()` or the right delimiter. */
  atTerminator(): boolean {
    const rune = this.peek()
    if (isSpace(rune)) return true
    if (rune === EOF || includesRune('.,|:)(', rune)) return true
    return this.input.startsWith(RIGHT_DELIM, this.pos)
  }

  /** At a right delimiter, possibly after a trim marker. */
  atRightDelim(): boolean {
    return this.atTrimmedRightDelim() || this.input.startsWith(RIGHT_DELIM, this.pos)
  }

  /** At ` -}}`. */
  atTrimmedRightDelim(): boolean {
    return (
      hasRightTrimMarker(this.input, this.pos) &&
      this.input.startsWith(RIGHT_DELIM, this.pos + TRIM_MARKER_LENGTH)
    )
  }

  /** The pending input, for the errors that quote it. */
  pending(): string {
    return this.input.slice(this.start, this.pos)
  }
}

// The state functions, as Go's.

function lexText(l: Scanner): State | null {
  const x = l.input.indexOf(LEFT_DELIM, l.pos)
  if (x < 0) {
    l.pos = l.input.length
    if (l.pos > l.start) {
      l.line += countNewlines(l.input, l.start, l.pos)
      return l.emit('text')
    }
    return l.emit('EOF')
  }
  if (x > l.pos) {
    l.pos = x
    // `{{- ` trims the spaces before it.
    const trim = hasLeftTrimMarker(l.input, l.pos + LEFT_DELIM.length)
      ? rightSpaceLength(l.input, l.start, l.pos)
      : 0
    l.pos -= trim
    l.line += countNewlines(l.input, l.start, l.pos)
    const item = l.take('text')
    l.pos += trim
    l.ignore()
    if (item.value.length > 0) return l.emitItem(item)
  }
  return lexLeftDelim
}

function lexLeftDelim(l: Scanner): State | null {
  l.pos += LEFT_DELIM.length
  const afterMarker = hasLeftTrimMarker(l.input, l.pos) ? TRIM_MARKER_LENGTH : 0
  if (l.input.startsWith(LEFT_COMMENT, l.pos + afterMarker)) {
    l.pos += afterMarker
    l.ignore()
    return lexComment
  }
  const item = l.take('leftDelim')
  l.insideAction = true
  l.pos += afterMarker
  l.ignore()
  l.parenDepth = 0
  return l.emitItem(item)
}

function lexComment(l: Scanner): State | null {
  l.pos += LEFT_COMMENT.length
  const x = l.input.indexOf(RIGHT_COMMENT, l.pos)
  if (x < 0) return l.fail('unclosed comment')
  l.pos = x + RIGHT_COMMENT.length
  if (!l.atRightDelim()) return l.fail('comment ends before closing delimiter')
  const trim = l.atTrimmedRightDelim()
  l.line += countNewlines(l.input, l.start, l.pos)
  l.take('text') // the comment, which the parser does not ask for
  if (trim) l.pos += TRIM_MARKER_LENGTH
  l.pos += RIGHT_DELIM.length
  if (trim) l.pos += leftSpaceLength(l.input, l.pos)
  l.ignore()
  return lexText
}

function lexRightDelim(l: Scanner): State | null {
  const trim = l.atTrimmedRightDelim()
  if (trim) {
    l.pos += TRIM_MARKER_LENGTH
    l.ignore()
  }
  l.pos += RIGHT_DELIM.length
  const item = l.take('rightDelim')
  if (trim) {
    l.pos += leftSpaceLength(l.input, l.pos)
    l.ignore()
  }
  l.insideAction = false
  return l.emitItem(item)
}

function lexInsideAction(l: Scanner): State | null {
  if (l.atRightDelim()) {
    return l.parenDepth === 0 ? lexRightDelim : l.fail('unclosed left paren')
  }
  const r = l.next()
  if (r === EOF) return l.fail('unclosed action')
  if (isSpace(r)) {
    l.backup() // the space may begin ` -}}`
    return lexSpace
  }
  switch (r) {
    case 0x3d: // =
      return l.emit('assign')
    case 0x3a: // :
      return l.next() === 0x3d ? l.emit('declare') : l.fail('expected :=')
    case 0x7c: // |
      return l.emit('pipe')
    case 0x22: // "
      return lexQuote
    case 0x60: // `
      return lexRawQuote
    case 0x24: // $
      return lexVariable
    case 0x27: // '
      return lexChar
    case 0x28: // (
      l.parenDepth++
      return l.emit('leftParen')
    case 0x29: // )
      l.parenDepth--
      return l.parenDepth < 0 ? l.fail('unexpected right paren') : l.emit('rightParen')
    case 0x2e: {
      // `.` begins a field unless a digit follows: `.5` is a number.
      const after = l.input.charCodeAt(l.pos)
      if (l.pos < l.input.length && !isAsciiDigit(after)) return lexField
      l.backup()
      return lexNumber
    }
  }
  if (r === 0x2b || r === 0x2d || isAsciiDigit(r)) {
    l.backup()
    return lexNumber
  }
  if (isAlphaNumeric(r)) {
    l.backup()
    return lexIdentifier
  }
  if (r < 0x80 && isGoPrintable(r)) return l.emit('char')
  return l.fail(`unrecognized character in action: ${formatRune(r)}`)
}

/**
 * A run of spaces, less the last one if it begins ` -}}`. (Go goes on to the delimiter when the
 * run was that one space, but then lexInsideAction found the delimiter before coming here.)
 */
function lexSpace(l: Scanner): State | null {
  while (isSpace(l.peek())) l.next()
  if (
    hasRightTrimMarker(l.input, l.pos - 1) &&
    l.input.startsWith(RIGHT_DELIM, l.pos - 1 + TRIM_MARKER_LENGTH)
  ) {
    l.backup()
  }
  return l.emit('space')
}

function lexIdentifier(l: Scanner): State | null {
  let r: number
  while (isAlphaNumeric((r = l.next())));
  l.backup()
  if (!l.atTerminator()) return l.fail(`bad character ${formatRune(r)}`)
  const word = l.pending()
  const keyword = KEYWORDS.get(word)
  if (keyword === 'break' && !l.breakIsKeyword) return l.emit('identifier')
  if (keyword === 'continue' && !l.continueIsKeyword) return l.emit('identifier')
  if (keyword !== undefined) return l.emit(keyword)
  return l.emit(word === 'true' || word === 'false' ? 'bool' : 'identifier')
}

/** `.name` (the `.` is read); `.` alone is the dot. */
function lexField(l: Scanner): State | null {
  if (l.atTerminator()) return l.emit('dot')
  return fieldOrVariable(l, 'field')
}

/** `$name` (the `$` is read); `$` alone is the variable `$`. */
function lexVariable(l: Scanner): State | null {
  if (l.atTerminator()) return l.emit('variable')
  return fieldOrVariable(l, 'variable')
}

/** `'…'`: only its end is found here; the parser checks the rest. */
function lexChar(l: Scanner): State | null {
  return quoted(l, 0x27, 'charConstant', 'unterminated character constant')
}

function lexQuote(l: Scanner): State | null {
  return quoted(l, 0x22, 'string', 'unterminated quoted string')
}

function lexRawQuote(l: Scanner): State | null {
  for (;;) {
    const r = l.next()
    if (r === EOF) return l.fail('unterminated raw quoted string')
    if (r === 0x60) return l.emit('rawString')
  }
}

/**
 * A number, or a complex `1+2i`. As lenient as Go's (it takes `.`, `0x0.2`, `089`): strconv
 * rejects those in the parser.
 */
function lexNumber(l: Scanner): State | null {
  if (!scanNumber(l)) return l.fail(`bad number syntax: ${goQuoteBytes(l.pending())}`)
  const sign = l.peek()
  if (sign !== 0x2b && sign !== 0x2d) return l.emit('number')
  // A complex: no spaces, and it must end in i.
  if (!scanNumber(l) || !l.pending().endsWith('i')) {
    return l.fail(`bad number syntax: ${goQuoteBytes(l.pending())}`)
  }
  return l.emit('complex')
}

/** The name after `.` or `$`: the caller saw that no terminator follows them. */
function fieldOrVariable(l: Scanner, type: 'field' | 'variable'): State | null {
  let r: number
  while (isAlphaNumeric((r = l.next())));
  l.backup()
  if (!l.atTerminator()) return l.fail(`bad character ${formatRune(r)}`)
  return l.emit(type)
}

/** A quoted token whose opening quote is read: a backslash escapes any rune but a newline. */
function quoted(l: Scanner, quote: number, type: ItemType, unterminated: string): State | null {
  for (;;) {
    let r = l.next()
    if (r === 0x5c) {
      r = l.next()
      if (r !== EOF && r !== 0x0a) continue
    }
    if (r === EOF || r === 0x0a) return l.fail(unterminated)
    if (r === quote) return l.emit(type)
  }
}

function scanNumber(l: Scanner): boolean {
  l.accept('+-')
  let digits = DECIMAL_DIGITS
  if (l.accept('0')) {
    // A leading 0 alone does not make a float octal.
    if (l.accept('xX')) digits = HEX_DIGITS
    else if (l.accept('oO')) digits = '01234567_'
    else if (l.accept('bB')) digits = '01_'
  }
  l.acceptRun(digits)
  if (l.accept('.')) l.acceptRun(digits)
  if (digits === DECIMAL_DIGITS && l.accept('eE')) {
    l.accept('+-')
    l.acceptRun(DECIMAL_DIGITS)
  }
  if (digits === HEX_DIGITS && l.accept('pP')) {
    l.accept('+-')
    l.acceptRun(DECIMAL_DIGITS)
  }
  l.accept('i') // imaginary
  if (isAlphaNumeric(l.peek())) {
    l.next()
    return false
  }
  return true
}

/** Go's `%#U`: U+0041 'A', the character only when printable. */
function formatRune(rune: number): string {
  const code = `U+${rune.toString(16).toUpperCase().padStart(4, '0')}`
  return isGoPrintable(rune) ? `${code} '${String.fromCodePoint(rune)}'` : code
}

function includesRune(valid: string, rune: number): boolean {
  return rune >= 0 && rune < 0x80 && valid.includes(String.fromCharCode(rune))
}

function isContinuationByte(byte: number): boolean {
  return byte >= 0x80 && byte < 0xc0
}

function isSpace(rune: number): boolean {
  return rune === 0x20 || rune === 0x09 || rune === 0x0d || rune === 0x0a
}

function isAsciiDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39
}

const LETTER_OR_DIGIT = /^[\p{L}\p{Nd}]$/u

/**
 * `_`, unicode.IsLetter or unicode.IsDigit, in Node's Unicode (17.0): that of Go 1.27, which
 * ToolHive v0.63.0 requires. Go 1.26 (Unicode 15.0) rejects the letters and digits assigned since,
 * which this accepts.
 */
function isAlphaNumeric(rune: number): boolean {
  if (rune < 0x80) {
    return (
      rune === 0x5f ||
      isAsciiDigit(rune) ||
      (rune >= 0x41 && rune <= 0x5a) ||
      (rune >= 0x61 && rune <= 0x7a)
    )
  }
  return LETTER_OR_DIGIT.test(String.fromCodePoint(rune))
}

function hasLeftTrimMarker(bytes: string, at: number): boolean {
  return bytes.charCodeAt(at) === 0x2d && isSpace(bytes.charCodeAt(at + 1))
}

function hasRightTrimMarker(bytes: string, at: number): boolean {
  return isSpace(bytes.charCodeAt(at)) && bytes.charCodeAt(at + 1) === 0x2d
}

function countNewlines(bytes: string, from: number, to: number): number {
  let count = 0
  for (let i = from; i < to; i++) if (bytes.charCodeAt(i) === 0x0a) count++
  return count
}

function rightSpaceLength(bytes: string, from: number, to: number): number {
  let end = to
  while (end > from && isSpace(bytes.charCodeAt(end - 1))) end--
  return to - end
}

function leftSpaceLength(bytes: string, from: number): number {
  let end = from
  while (isSpace(bytes.charCodeAt(end))) end++
  return end - from
}
