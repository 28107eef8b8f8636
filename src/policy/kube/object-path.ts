/**
 * Resolves Kubernetes field paths (`spec.validating[1].url`, `data[port]`,
 * `metadata.annotations[a.b/c]`) in untrusted JSON, and compares JSON values structurally.
 */

import { isRecord } from './object.ts'

/** The value at `path`: `{ value: undefined }` when absent, `undefined` when the path is malformed. */
export function valueAtPath(root: unknown, path: string): { readonly value: unknown } | undefined {
  const segments = parseFieldPath(path)
  return segments === undefined ? undefined : { value: valueAtSegments(root, segments) }
}

/** The value at parsed path `segments`, or undefined when absent. */
export function valueAtSegments(root: unknown, segments: readonly string[]): unknown {
  let current: unknown = root
  for (const segment of segments) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)]
    // Own keys only: `__proto__` or `constructor` are ordinary map keys here.
    else if (isRecord(current) && Object.hasOwn(current, segment)) current = current[segment]
    else return undefined
  }
  return current
}

/**
 * Splits a path into its names and bracketed keys or indices; `''` is the whole object. Bracket
 * contents run to the next `]`, as apimachinery does not escape keys either.
 */
export function parseFieldPath(path: string): string[] | undefined {
  const segments: string[] = []
  let i = 0
  while (i < path.length) {
    if (path[i] === '[') {
      const end = path.indexOf(']', i + 1)
      if (end === -1) return undefined
      segments.push(path.slice(i + 1, end))
      i = end + 1
    } else {
      let end = i
      while (end < path.length && path[end] !== '.' && path[end] !== '[') end++
      if (end === i) return undefined
      segments.push(path.slice(i, end))
      i = end
    }
    if (path[i] === '.') {
      i++
      if (i === path.length || path[i] === '[' || path[i] === '.') return undefined
    } else if (i < path.length && path[i] !== '[') return undefined
  }
  return segments
}
