/** The object loader's errors: one line each, naming the file, never echoing raw input. */

import { getSystemErrorMessage } from 'node:util'
import { escapeControls } from '../policy/messages/render.ts'
import { errorMessage } from '../policy/messages/render.ts'

/**
 * Thrown for unreadable or malformed object files; the message names the file and document. It
 * is one line whatever it quotes: a file name with a newline or an escape sequence is escaped.
 */
export class ObjectFileError extends Error {
  override name = 'ObjectFileError'
  constructor(message: string) {
    super(escapeControls(message))
  }
}

/** `PATH: no such file or directory`, `PATH: permission denied`: the system's words, no code. */
export function fileSystemError(path: string, error: unknown): ObjectFileError {
  const { errno, code } = error as NodeJS.ErrnoException
  const reason =
    typeof errno === 'number' ? getSystemErrorMessage(errno) : (code ?? errorMessage(error))
  return new ObjectFileError(`${path}: ${printable(reason)}`)
}

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
export function printable(text: string, max = 120): string {
  return escapeWithin(text, max, false)
}

/** Input quoted as a short JSON string: `"\u0089PNG\r\n\u001a\n…"`, at most about `max` characters. */
export function quoted(text: string, max = 60): string {
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
