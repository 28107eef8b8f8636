/**
 * Bounds on what a verdict says, since the API server shows a denial's message to a person and
 * this service logs it: at most 20 violations and 4 KiB of UTF-8, each violation at most 1 KiB,
 * then `and N more errors`. Warnings are bounded like the API server bounds them (4096 characters
 * in total, k8s.io/apiserver/pkg/endpoints/filters/warning.go): the rest would be dropped there.
 */

import { formatViolation } from './field-errors.ts'
import type { FieldViolation } from './field-errors.ts'
import { clipUtf8, utf8Length } from './go-bytes.ts'
import { redactSecrets } from './redact.ts'

export const MESSAGE_LIMITS = {
  /** Violations listed in a message (and given a Status cause) at most. */
  violations: 20,
  /** UTF-8 bytes of a whole message at most. */
  messageBytes: 4096,
  /** UTF-8 bytes of one listed violation at most. */
  violationBytes: 1024,
  /** Characters of all warnings together at most. */
  warningChars: 4096,
} as const

interface BoundedViolations {
  /** `a`, `[a, b]`, or `[a, b, and 7 more errors]`. */
  readonly message: string
  /** The violations the message lists, in order. */
  readonly listed: readonly FieldViolation[]
}

/** The aggregate message of `violations`, cut to MESSAGE_LIMITS. */
export function boundViolations(violations: readonly FieldViolation[]): BoundedViolations {
  const texts: string[] = []
  // Two brackets, and room for `, and 1234567 more errors` should any be left out.
  let bytes = 2 + 40
  for (const violation of violations) {
    if (texts.length === MESSAGE_LIMITS.violations) break
    const text = clipUtf8(formatViolation(violation), MESSAGE_LIMITS.violationBytes)
    const cost = utf8Length(text) + (texts.length > 0 ? 2 : 0)
    if (bytes + cost > MESSAGE_LIMITS.messageBytes) break
    texts.push(text)
    bytes += cost
  }
  const listed = violations.slice(0, texts.length)
  const omitted = violations.length - listed.length
  if (omitted === 0) {
    // The shape of formatViolations: one violation alone, several in brackets.
    const message = texts.length === 1 ? (texts[0] ?? '') : `[${texts.join(', ')}]`
    return { message, listed }
  }
  const more = `and ${omitted} more ${omitted === 1 ? 'error' : 'errors'}`
  return { message: `[${[...texts, more].join(', ')}]`, listed }
}

/**
 * `text` with secrets redacted and cut to `maxBytes` UTF-8 bytes at a character boundary, ending
 * in `…` when cut. For messages built elsewhere (errors, causes) that may quote user values.
 */
export function boundMessage(text: string, maxBytes: number = MESSAGE_LIMITS.messageBytes): string {
  return clipUtf8(redactSecrets(text), maxBytes)
}

/** The warnings that fit MESSAGE_LIMITS.warningChars, then how many were left out. */
export function boundWarnings(warnings: readonly string[]): string[] {
  const kept: string[] = []
  let chars = 0
  for (const warning of warnings) {
    // Reserve room for the closing `and 12345 more warnings`.
    if (chars + warning.length > MESSAGE_LIMITS.warningChars - 30) {
      const omitted = warnings.length - kept.length
      kept.push(`and ${omitted} more ${omitted === 1 ? 'warning' : 'warnings'}`)
      return kept
    }
    kept.push(warning)
    chars += warning.length
  }
  return kept
}
