/**
 * The code base's one canonical JSON writer, for hashing: the same value always yields the same
 * bytes, whatever the key order it arrived in, on any machine and across restarts.
 *
 * The form: no whitespace; object members sorted by the code points of their keys (UTF-8 byte
 * order, not JavaScript's UTF-16 order); arrays kept in order; strings and numbers written exactly
 * as JSON.stringify writes them (well-formed: a lone surrogate becomes `\udxxx`; `-0` becomes `0`,
 * non-finite numbers `null`). Members whose value JSON cannot hold (undefined, functions, symbols)
 * are left out and such array items become `null`, as JSON.stringify does; a bigint is its digits.
 * This is RFC 8785 (JCS) except for the key order, which the pod volumes fingerprint fixed before
 * this writer existed (README, "Design notes").
 *
 * safe-stable-stringify (pino's own) does the writing. It recurses, so the callers bound the depth
 * (the fingerprint cuts at 100 levels); beyond MAX_DEPTH a container is written as a marker
 * string rather than overflowing the stack, and a cycle (impossible in JSON) as `null`.
 */

import { configure } from 'safe-stable-stringify'
import { compareCodePoints } from './content-checksum.ts'

/** Deeper containers are written as `"[Object]"` or `"[Array]"`. */
export const MAX_DEPTH = 1000

const write = configure({
  deterministic: compareCodePoints,
  bigint: true,
  circularValue: null,
  maximumDepth: MAX_DEPTH,
  strict: false,
})

/** The canonical JSON text of a value (see the module comment for the exact form). */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null'
}
