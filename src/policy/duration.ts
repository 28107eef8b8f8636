/**
 * Go-style durations (`time.ParseDuration`): `500ms`, `5s`, `1m30s`, `1.5h`, and the bare `0`.
 * Kubernetes and ToolHive configs use this syntax, and so do our flags.
 */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
}

const COMPONENT = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y

/** Milliseconds, or undefined when `text` is not a non-negative Go duration. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0
  if (text === '') return undefined
  let total = 0
  COMPONENT.lastIndex = 0
  while (COMPONENT.lastIndex < text.length) {
    const start = COMPONENT.lastIndex
    const match = COMPONENT.exec(text)
    if (!match || match.index !== start) return undefined
    const [, amount = '', unit = ''] = match
    total += Number(amount) * (UNIT_MS[unit] ?? Number.NaN)
  }
  return Number.isFinite(total) ? total : undefined
}
