/**
 * `audit`'s progress on standard error, and only when it is a terminal: a line rewritten at most
 * four times a second, cleared at the end, so a pipe or a CI log gets nothing but the report.
 */

import type { Writable } from 'node:stream'

const INTERVAL_MS = 250

interface AuditProgress {
  /** One more object of `kind` audited. */
  count(kind: string): void
  /** Clears the line (idempotent). */
  done(): void
}

export function auditProgress(stderr: Writable): AuditProgress {
  if (!(stderr as Writable & { isTTY?: boolean }).isTTY) return { count() {}, done() {} }
  let audited = 0
  let shownAt = 0
  let shown = false
  return {
    count(kind) {
      audited++
      const now = Date.now()
      if (now - shownAt < INTERVAL_MS) return
      shownAt = now
      shown = true
      const objects = audited === 1 ? 'object' : 'objects'
      stderr.write(`\r\x1b[2Kaudited ${audited.toLocaleString('en')} ${objects} (now ${kind})…`)
    },
    done() {
      if (shown) stderr.write('\r\x1b[2K')
      shown = false
    },
  }
}
