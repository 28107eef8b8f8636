/**
 * User values as messages quote them: secrets redacted (redact.ts), quoted like Go's `%q`
 * (go-quote.ts), and bounded. One denied 6 MB object once produced a 24.6 MB response and a
 * 12.2 MB log line because every message quoted values whole. apimachinery's TooLong omits the
 * value entirely (`<value omitted>`); a prefix is more useful, so long values keep their first
 * 256 characters and say how many bytes were left out: `"https://aaaa…"…(5999744 more bytes)`.
 */

import { utf8Length } from './go-bytes.ts'
import { escapeRune, runeOf } from './go-quote.ts'
import { redactSecrets } from './redact.ts'

/** Characters shown between the quotes at most (escapes such as `\n` count in full). */
export const MAX_QUOTED_CHARS = 256

/** `%q` of `text` with secrets redacted, cut after MAX_QUOTED_CHARS characters. */
export function quoteValue(text: string, max = MAX_QUOTED_CHARS): string {
  const redacted = redactSecrets(text)
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

/** Free text (a JSON rendering, an error) with secrets redacted and cut to `max` characters. */
export function clipText(text: string, max: number): string {
  const redacted = redactSecrets(text)
  let cut = 0
  let shown = 0
  for (const char of redacted) {
    if (shown === max) return `${redacted.slice(0, cut)}…(${utf8Length(redacted, cut)} more bytes)`
    cut += char.length
    shown++
  }
  return redacted
}
