/**
 * The one limit on how deep untrusted JSON may nest, applied where it enters: an AdmissionReview
 * body (admission/decode.ts) and object files (cluster/load-objects.ts, which also refuses deep
 * text before its YAML parser recurses into it). Everything behind those doors may then recurse
 * without overflowing the stack. Real ToolHive objects stay within a few dozen levels; the API
 * server's own ceiling (Go's JSON decoder, 10,000) is far above anything a rule reads.
 */

export const MAX_NESTING = 200

/**
 * Whether arrays and objects in `value` nest deeper than `limit` (the value itself, when a
 * container, is level 1). Iterative; a cycle counts as infinitely deep, so it is caught too.
 */
export function nestsDeeperThan(value: unknown, limit: number = MAX_NESTING): boolean {
  const pending: [unknown, number][] = [[value, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next
    if (typeof node !== 'object' || node === null) continue
    if (depth > limit) return true
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node)
    for (const child of children) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1])
    }
  }
  return false
}
