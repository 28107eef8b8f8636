/**
 * Go-style durations (`time.ParseDuration`): `500ms`, `5s`, `1m30s`, `1.5h`, `+5s` and the bare
 * `0`. Kubernetes and ToolHive configs use this syntax, and so do our flags. The grammar itself is
 * in go-duration.ts.
 */

import { parseGoDuration } from './go-duration.ts'

/** Milliseconds, or undefined when `text` is not a non-negative Go duration. */
export function parseDuration(text: string): number | undefined {
  const parsed = parseGoDuration(text)
  if (!parsed.ok || parsed.nanoseconds < 0n) return undefined
  return Number(parsed.nanoseconds) / 1e6
}
