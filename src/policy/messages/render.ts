/**
 * Every string that leaves the process is rendered here: denial messages and their
 * `status.details.causes`, errors answered in-band, warnings, status condition messages, and
 * every field of a log line (cli/logger.ts hooks pino into renderLogFields). Here, and only here,
 * secrets are redacted (redact.ts) and text is bounded (docs/wire.md#behaviour-on-the-wire, as the
 * API server bounds its own messages, k8s.io/apimachinery/pkg/util/validation/field/errors.go):
 *
 * * a quoted value shows its first 256 characters, then how many bytes were left out
 *   (`"https://aaaa…"…(5999744 more bytes)`): one denied 6 MB object once produced a 24.6 MB
 *   response and a 12.2 MB log line;
 * * a message lists at most 20 violations and 4 KiB of UTF-8 (each violation at most 1 KiB),
 *   then `and N more errors`;
 * * a warning is one line of at most 120 characters, and all of them together at most the 4096
 *   characters the API server passes on (k8s.io/apiserver/pkg/endpoints/filters/warning.go).
 *
 * Redaction always runs before a cut, so a cut can never leave half a password that no longer
 * looks like one. Control characters in free text are escaped as Go's `%q` escapes them, so no
 * message or warning can start a new line or drive a terminal.
 */

import { utf8Length } from '../go/bytes.ts'
import { escapeRune, runeOf } from '../go/quote.ts'
import type { FieldViolation, ViolationType } from './field-errors.ts'
import { REDACTED, isSecretName, redactText, redactValue } from './redact.ts'

export const MESSAGE_LIMITS = {
  /** Violations listed in a message (and given a Status cause) at most. */
  violations: 20,
  /** UTF-8 bytes of a whole message at most. */
  messageBytes: 4096,
  /** UTF-8 bytes of one listed violation at most. */
  violationBytes: 1024,
  /** Characters of one value at most (escapes such as `\n` count in full). */
  valueChars: 256,
  /** Characters (UTF-16 units) of one warning at most. */
  warningChars: 120,
  /** Characters of all warnings together at most. */
  warningsChars: 4096,
} as const

/** The message of anything thrown: an Error's own message, anything else as a string. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

// ---------------------------------------------------------------------------------------------
// Values inside messages

/** `%q` of `text` with secrets redacted, cut after `max` characters. */
export function quoteValue(text: string, max: number = MESSAGE_LIMITS.valueChars): string {
  const redacted = redactValue(text)
  let quoted = ''
  let shown = 0
  let consumed = 0
  for (const char of redacted) {
    const escaped = escapeRune(runeOf(char))
    const width = escaped === char ? 1 : escaped.length
    if (shown + width > max) return `"${quoted}"…(${utf8Length(redacted, consumed)} more bytes)`
    quoted += escaped
    shown += width
    consumed += char.length
  }
  return `"${quoted}"`
}

/** A short excerpt of free text (a parser's reason, a sanitised name): redacted, escaped, cut. */
export function excerpt(text: string, max: number = MESSAGE_LIMITS.valueChars): string {
  return clipChars(escapeControls(redactText(text)), max)
}

/** A violation's value as apimachinery renders it: numbers and booleans as is, strings as `%q`,
 * containers as JSON (its json.Marshal fallback) with secret-named members and strings redacted. */
export function renderValue(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (typeof value === 'string') return quoteValue(value)
  const json = JSON.stringify(value, (key, member: unknown) => {
    if (typeof member !== 'string') return member
    return key !== '' && isSecretName(key) ? REDACTED : redactValue(member)
  }) as string | undefined
  return excerpt(json ?? String(value))
}

// ---------------------------------------------------------------------------------------------
// Violations

const LABELS: Record<ViolationType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
}

/** Types whose rendering includes the offending value, as in apimachinery. */
const SHOWS_VALUE = new Set<ViolationType>([
  'FieldValueInvalid',
  'FieldValueNotSupported',
  'FieldValueDuplicate',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
])

/** Renders one violation as `field: Label: "value": detail`. */
export function formatViolation(violation: FieldViolation): string {
  const body = formatViolationBody(violation)
  return violation.field === '' ? body : `${fieldPath(violation.field)}: ${body}`
}

/** The part after the field, `Label: "value": detail`, as a Status cause's message carries it. */
export function formatViolationBody(violation: FieldViolation): string {
  const parts: string[] = [LABELS[violation.type]]
  if (SHOWS_VALUE.has(violation.type) && violation.value !== undefined) {
    parts.push(renderValue(violation.value))
  }
  if (violation.detail !== '') parts.push(violation.detail)
  return parts.join(': ')
}

/** Renders a list like apimachinery's aggregate: one message, violations joined by `, `. */
export function formatViolations(violations: readonly FieldViolation[]): string {
  const messages = violations.map(formatViolation)
  return messages.length === 1 ? (messages[0] ?? '') : `[${messages.join(', ')}]`
}

/** A Status cause, as the API server fills `status.details.causes`. */
export interface RenderedCause {
  readonly reason: ViolationType
  readonly message: string
  readonly field: string
}

interface RenderedViolations {
  /** `a`, `[a, b]`, or `[a, b, and 7 more errors]`: redacted and within MESSAGE_LIMITS. */
  readonly message: string
  /** One cause per listed violation, in order: the message without its field. */
  readonly causes: readonly RenderedCause[]
  /** The message's parts: each listed violation, then `and N more errors` when any were left out. */
  readonly items: readonly string[]
}

/** The aggregate message of `violations` and the causes of those it lists, within MESSAGE_LIMITS. */
export function renderViolations(violations: readonly FieldViolation[]): RenderedViolations {
  const texts: string[] = []
  // Two brackets, and room for `, and 1234567 more errors` should any be left out.
  let bytes = 2 + 40
  for (const violation of violations) {
    if (texts.length === MESSAGE_LIMITS.violations) break
    const text = renderText(formatViolation(violation), MESSAGE_LIMITS.violationBytes)
    const cost = utf8Length(text) + (texts.length > 0 ? 2 : 0)
    if (bytes + cost > MESSAGE_LIMITS.messageBytes) break
    texts.push(text)
    bytes += cost
  }
  const causes = violations.slice(0, texts.length).map((v) => ({
    reason: v.type,
    message: renderText(formatViolationBody(v), MESSAGE_LIMITS.violationBytes),
    field: fieldPath(v.field),
  }))
  const omitted = violations.length - texts.length
  if (omitted === 0) {
    // The shape of formatViolations: one violation alone, several in brackets.
    const message = texts.length === 1 ? (texts[0] ?? '') : `[${texts.join(', ')}]`
    return { message, causes, items: texts }
  }
  const items = [...texts, `and ${omitted} more ${omitted === 1 ? 'error' : 'errors'}`]
  return { message: `[${items.join(', ')}]`, causes, items }
}

/** A field path may hold user keys (`metadata.annotations[…]`): escaped and cut like a value. */
function fieldPath(field: string): string {
  return excerpt(field)
}

// ---------------------------------------------------------------------------------------------
// Free text: errors, warnings, names, log fields

/**
 * `text` (an error, a message built elsewhere) with secrets redacted, control characters
 * escaped, and cut to `maxBytes` UTF-8 bytes at a character boundary, ending in `…` when cut.
 */
export function renderText(text: string, maxBytes: number = MESSAGE_LIMITS.messageBytes): string {
  // Cut before escaping too: a huge text is not walked character by character.
  const redacted = clipBytes(redactText(text), maxBytes)
  return clipBytes(escapeControls(redacted), maxBytes)
}

/**
 * Warnings as the response carries them: each redacted, on one line and at most 120 characters;
 * duplicates dropped; then those that fit 4096 characters, and how many were left out. `usedChars`
 * are taken already by warnings listed before these (violations in Warn mode): the API server
 * passes on 4096 in all, whoever wrote them.
 */
export function renderWarnings(warnings: readonly string[], usedChars = 0): string[] {
  const short = [
    ...new Set(
      warnings.map((w) =>
        clipUnits(escapeControls(clipUnits(redactText(w), 4096)), MESSAGE_LIMITS.warningChars),
      ),
    ),
  ]
  const kept: string[] = []
  let chars = usedChars
  for (const warning of short) {
    // Reserve room for the closing `and 12345 more warnings`.
    if (chars + warning.length > MESSAGE_LIMITS.warningsChars - 30) {
      const omitted = short.length - kept.length
      kept.push(`and ${omitted} more ${omitted === 1 ? 'warning' : 'warnings'}`)
      return kept
    }
    kept.push(warning)
    chars += warning.length
  }
  return kept
}

/** A user-controlled name echoed back (a Status's `details.name`): redacted and cut like a value. */
export function renderName(name: string): string {
  return excerpt(name)
}

/**
 * `text` for a terminal: as is (cut like a value) when every character is printable, else Go's
 * `%q`, so a name holding a newline or an escape sequence can neither forge a line nor drive the
 * terminal.
 */
export function terminalText(text: string): string {
  for (const char of text) {
    if (char !== '"' && char !== '\\' && escapeRune(runeOf(char)) !== char) return quoteValue(text)
  }
  return clipChars(text, MESSAGE_LIMITS.valueChars)
}

/** Log fields whose strings are messages (bounded like one); every other string is a value. */
const LOG_MESSAGE_KEYS = new Set(['msg', 'message', 'reason', 'err', 'stack', 'why', 'tryIt'])

/** How deep log fields are walked; deeper values are summarised. */
const LOG_DEPTH = 4

/** An error as log fields, before rendering: the logger passes pino's serializer. */
export type ErrorFields = (error: Error) => Record<string, unknown>

/** `{type, message, code, stack}`: what is known of any Error without a serializer. */
const plainErrorFields: ErrorFields = (error) => {
  const code = (error as Error & { code?: unknown }).code
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(error.stack === undefined ? {} : { stack: error.stack }),
  }
}

/**
 * Log fields as they may be written: every string redacted and bounded (a value at 256
 * characters, a message at 4 KiB), errors turned into fields by `errorFields` and rendered the
 * same way. JSON encoding already escapes control characters, so they are kept.
 */
export function renderLogFields(
  fields: Record<string, unknown>,
  errorFields: ErrorFields = plainErrorFields,
): Record<string, unknown> {
  return renderLogRecord(fields, 0, errorFields)
}

function renderLogRecord(
  fields: object,
  depth: number,
  errorFields: ErrorFields,
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields))
    out[key] = renderLogField(key, value, depth, errorFields)
  return out
}

function renderLogField(
  key: string,
  value: unknown,
  depth: number,
  errorFields: ErrorFields,
): unknown {
  if (typeof value === 'string') return logString(key, value)
  if (typeof value !== 'object' || value === null) return value
  if (depth >= LOG_DEPTH) return '[nested too deeply]'
  // The error's own fields are rendered at its depth: `err.message` is bounded like a message.
  if (value instanceof Error) return renderLogRecord(errorFields(value), depth, errorFields)
  if (Array.isArray(value)) {
    const items = value.slice(0, MESSAGE_LIMITS.violations) as unknown[]
    const rendered = items.map((item) => renderLogField(key, item, depth + 1, errorFields))
    const omitted = value.length - items.length
    return omitted > 0 ? [...rendered, `and ${omitted} more`] : rendered
  }
  return renderLogRecord(value, depth + 1, errorFields)
}

function logString(key: string, text: string): string {
  if (LOG_MESSAGE_KEYS.has(key)) return clipBytes(redactText(text), MESSAGE_LIMITS.messageBytes)
  return clipChars(redactText(text), MESSAGE_LIMITS.valueChars)
}

// ---------------------------------------------------------------------------------------------
// Cutting and escaping

/** `text` cut after `max` characters (code points), saying how many UTF-8 bytes were left out. */
function clipChars(text: string, max: number): string {
  if (text.length <= max) return text
  let cut = 0
  let shown = 0
  for (const char of text) {
    if (shown === max) return `${text.slice(0, cut)}…(${utf8Length(text, cut)} more bytes)`
    cut += char.length
    shown++
  }
  return text
}

/** `text` cut to `max` UTF-16 units with a trailing `…`, never splitting a surrogate pair. */
function clipUnits(text: string, max: number): string {
  if (text.length <= max) return text
  let cut = max - 1
  const last = text.charCodeAt(cut - 1)
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1
  return `${text.slice(0, cut)}…`
}

/** `text` cut to `maxBytes` of UTF-8 with a trailing `…`, never inside a character. */
function clipBytes(text: string, maxBytes: number): string {
  // Each UTF-16 unit encodes to at most 3 bytes, so short text needs no counting.
  if (text.length * 3 <= maxBytes || utf8Length(text) <= maxBytes) return text
  const budget = maxBytes - 3 // the ellipsis is 3 bytes
  let bytes = 0
  let cut = 0
  for (const char of text) {
    const size = utf8Length(char)
    if (bytes + size > budget) break
    bytes += size
    cut += char.length
  }
  return `${text.slice(0, cut)}…`
}

/** C0 and C1 controls, DEL, line and paragraph separators, and bidirectional overrides. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g

/**
 * Control characters written as Go's `%q` writes them (`\n`, `\x1b`, `\u0085`): text that is
 * printed to a terminal or a log stays on one line and cannot drive the terminal.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, (c) => escapeRune(c.charCodeAt(0)))
}

// ---------------------------------------------------------------------------------------------
// Input quoted in file and start-up errors (JSON's escapes, as the object loader has always shown them)

/** Characters a terminal would not show as themselves: controls, format characters, separators. */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u
const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\f': '\\f',
  '\r': '\\r',
}

/**
 * A message that may quote input (a parser's message can carry the source it choked on, a
 * binary file's bytes among it), made fit for one line: non-printable characters escaped as
 * JSON.stringify escapes them, and cut at `max` characters.
 */
export function printableLine(text: string, max = 120): string {
  return escapeWithin(text, max, false)
}

/** Input quoted as a short JSON string: `"\u0089PNG\r\n\u001a\n…"`, at most about `max` characters. */
export function jsonQuoted(text: string, max = 60): string {
  return `"${escapeWithin(text, max - 2, true)}"`
}

function escapeWithin(text: string, max: number, quoting: boolean): string {
  let out = ''
  for (const char of text) {
    const escaped = escapeChar(char, quoting)
    if (out.length + escaped.length > max) return `${out}…`
    out += escaped
  }
  return out
}

function escapeChar(char: string, quoting: boolean): string {
  if (quoting && (char === '"' || char === '\\')) return `\\${char}`
  if (!NON_PRINTABLE.test(char)) return char
  const short = SHORT_ESCAPES[char]
  if (short !== undefined) return short
  const code = char.codePointAt(0) ?? 0
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
}
