/**
 * The minimal, defensive view of Kubernetes objects that policies work with. Objects arrive from
 * the wire or from files, so every field is treated as possibly absent or of the wrong type.
 */

export type JsonObject = { [key: string]: unknown }

interface ObjectMeta {
  name?: unknown
  namespace?: unknown
  uid?: unknown
  generation?: unknown
  labels?: unknown
  annotations?: unknown
  ownerReferences?: unknown
  [key: string]: unknown
}

export interface KubeObject {
  apiVersion?: unknown
  kind?: unknown
  metadata?: ObjectMeta
  [key: string]: unknown
}

/** True for a plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The value when it is a string map (every value a string), else undefined. */
export function stringMap(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined
  for (const key of Object.keys(value)) if (typeof value[key] !== 'string') return undefined
  return value as Record<string, string>
}

/** The API group of an apiVersion (`apps/v1` → `apps`, `v1` → ``). */
export function groupOf(apiVersion: unknown): string | undefined {
  if (typeof apiVersion !== 'string') return undefined
  const slash = apiVersion.indexOf('/')
  return slash === -1 ? '' : apiVersion.slice(0, slash)
}

/**
 * Sets `target[key] = value` as an own data property. Plain assignment would invoke the
 * `__proto__` setter for a (legal) map key named `__proto__`.
 */
export function setOwn(target: JsonObject, key: string, value: unknown): void {
  // Only `__proto__` is an accessor on Object.prototype; every other key assigns as it reads,
  // and plain assignment is several times faster than defineProperty on the hot path.
  if (key !== '__proto__') {
    target[key] = value
    return
  }
  Object.defineProperty(target, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  })
}

/** Returns `parent[key]` as an object, creating an empty one when absent or not an object. */
export function ensureRecord(parent: JsonObject, key: string): JsonObject {
  const existing = parent[key]
  if (isRecord(existing)) return existing
  const created: JsonObject = {}
  setOwn(parent, key, created)
  return created
}

/** Structural equality of JSON values; iterative, so deeply nested input cannot overflow the stack. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const pending: [unknown, unknown][] = [[a, b]]
  for (let pair = pending.pop(); pair !== undefined; pair = pending.pop()) {
    const [x, y] = pair
    if (Object.is(x, y)) continue
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false
      x.forEach((item: unknown, i) => pending.push([item, y[i]]))
    } else if (isRecord(x)) {
      if (!isRecord(y)) return false
      const keys = Object.keys(x)
      if (keys.length !== Object.keys(y).length) return false
      for (const key of keys) {
        if (!Object.hasOwn(y, key)) return false
        pending.push([x[key], y[key]])
      }
    } else {
      return false
    }
  }
  return true
}
