/**
 * A canonical JSON text for hashing: the same value always yields the same bytes, whatever the key
 * order it arrived in, on any machine and across restarts.
 *
 * The form: no whitespace; object members sorted by the code points of their keys (sortedByUtf8,
 * i.e. UTF-8 byte order, not JavaScript's UTF-16 order); arrays kept in order; strings and numbers
 * written exactly as JSON.stringify writes them (well-formed: a lone surrogate becomes `\udxxx`;
 * `-0` becomes `0`, non-finite numbers `null`). Members whose value JSON cannot hold (undefined,
 * functions, symbols) are left out and such array items become `null`, as JSON.stringify does.
 * This is RFC 8785 (JCS) except for the key order, which follows the rest of this code base.
 */

import { sortedByUtf8 } from './content-checksum.ts'

type Step = { readonly value: unknown } | { readonly text: string } | { readonly leave: object }

/** The canonical JSON text of a value (see the module comment for the exact form). */
export function canonicalJson(value: unknown): string {
  const out: string[] = []
  // Containers on the path being written: JSON input has no cycles, but one must not hang us.
  const open = new Set<object>()
  // An explicit stack rather than recursion, so deeply nested input cannot overflow the call stack.
  const stack: Step[] = [{ value }]
  for (let step = stack.pop(); step !== undefined; step = stack.pop()) {
    if ('text' in step) {
      out.push(step.text)
    } else if ('leave' in step) {
      open.delete(step.leave)
    } else if (typeof step.value !== 'object' || step.value === null) {
      out.push(scalar(step.value))
    } else if (open.has(step.value)) {
      out.push('null')
    } else {
      const container = step.value
      open.add(container)
      stack.push({ leave: container })
      pushMembers(container, stack)
    }
  }
  return out.join('')
}

/** Pushes a container's text in reverse, so popping writes it in order. */
function pushMembers(container: object, stack: Step[]): void {
  const parts: Step[] = []
  if (Array.isArray(container)) {
    const items = container as unknown[]
    parts.push({ text: '[' })
    for (let i = 0; i < items.length; i++) {
      if (i > 0) parts.push({ text: ',' })
      parts.push({ value: items[i] })
    }
    parts.push({ text: ']' })
  } else {
    const record = container as Record<string, unknown>
    const keys = sortedByUtf8(Object.keys(record)).filter((key) => representable(record[key]))
    parts.push({ text: '{' })
    keys.forEach((key, i) => {
      parts.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(key)}:` }, { value: record[key] })
    })
    parts.push({ text: '}' })
  }
  for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i] as Step)
}

function representable(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol'
}

function scalar(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null'
    case 'boolean':
      return value ? 'true' : 'false'
    case 'bigint':
      // JSON.stringify throws on a bigint; its decimal digits are what the number means.
      return value.toString()
    default:
      return 'null'
  }
}
