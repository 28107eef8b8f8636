/**
 * Values as they come off the wire: what JSON.parse makes of a body. Generated values are passed
 * through here so that fuzzing never feeds the code something no request could carry (functions,
 * null-prototype objects, shared references) while keeping what a request can (keys named
 * `__proto__`, -0, and ±Infinity from `1e400`).
 */

const RAW = /"@@RAW(\d+)@@"/g

/**
 * JSON text where the strings `"@@RAW<i>@@"` are replaced by `raw[i]`: numbers beyond what a
 * double holds, bytes that are not UTF-8, or text too big to build as a value.
 */
export function withRaw(text: string, raw: readonly (string | Buffer)[]): Buffer {
  const parts: Buffer[] = []
  let last = 0
  for (const match of text.matchAll(RAW)) {
    parts.push(Buffer.from(text.slice(last, match.index), 'utf8'))
    const piece = raw[Number(match[1])] ?? 'null'
    parts.push(typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece)
    last = match.index + match[0].length
  }
  parts.push(Buffer.from(text.slice(last), 'utf8'))
  return Buffer.concat(parts)
}

export function rawMarker(index: number): string {
  return `@@RAW${index}@@`
}

/** The JSON text of a value, writing -0 and ±Infinity the way a body could (`-0`, `±1e400`). */
export function toWireText(value: unknown): string {
  const raw: string[] = []
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item !== 'number' || (Number.isFinite(item) && !Object.is(item, -0))) return item
    raw.push(Object.is(item, -0) ? '-0' : item > 0 ? '1e400' : '-1e400')
    return rawMarker(raw.length - 1)
  }) as string | undefined
  return text === undefined ? 'null' : withRaw(text, raw).toString('utf8')
}

/** `value` as JSON.parse would hand it to the server after a round trip through a body. */
export function wire<T>(value: T): T {
  return JSON.parse(toWireText(value)) as T
}

/** Deep equality of wire values (own enumerable keys, Object.is on leaves, so -0 ≠ 0). */
export function sameJson(a: unknown, b: unknown): boolean {
  const pending: [unknown, unknown][] = [[a, b]]
  for (let pair = pending.pop(); pair !== undefined; pair = pending.pop()) {
    const [x, y] = pair
    if (Object.is(x, y)) continue
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false
    if (Array.isArray(x) !== Array.isArray(y)) return false
    const xs = x as Record<string, unknown>
    const ys = y as Record<string, unknown>
    const keys = Object.keys(xs)
    if (keys.length !== Object.keys(ys).length) return false
    for (const key of keys) {
      if (!Object.hasOwn(ys, key)) return false
      pending.push([xs[key], ys[key]])
    }
  }
  return true
}

/** A short printable form of a value for failure reports (bounded, whatever the value's size). */
export function preview(value: unknown, max = 2000): string {
  let text: string
  try {
    text = typeof value === 'string' ? value : toWireText(value)
  } catch (error) {
    text = `(unprintable: ${String(error)})`
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text
}
