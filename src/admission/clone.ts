/**
 * A deep copy of a JSON document (what JSON.parse returns), several times faster than
 * structuredClone for the objects admission sees. Iterative, so no nesting depth overflows the
 * stack; a key named `__proto__` is copied as an own property, like any other key.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Copies `value`, which must be JSON data (no cycles, functions or class instances). */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value
  const root = copyShell(value as unknown as Json)
  const pending: [Json, Json][] = [[value as unknown as Json, root]]
  for (let pair = pending.pop(); pair !== undefined; pair = pending.pop()) {
    const [source, target] = pair as [Record<string, Json> | Json[], Record<string, Json> | Json[]]
    if (Array.isArray(source)) {
      const copy = target as Json[]
      for (let i = 0; i < source.length; i++) copy[i] = child(source[i] as Json, pending)
      continue
    }
    const copy = target as Record<string, Json>
    for (const key of Object.keys(source)) {
      const item = child(source[key] as Json, pending)
      if (key === '__proto__')
        Object.defineProperty(copy, key, {
          value: item,
          writable: true,
          enumerable: true,
          configurable: true,
        })
      else copy[key] = item
    }
  }
  return root as unknown as T
}

function child(value: Json, pending: [Json, Json][]): Json {
  if (typeof value !== 'object' || value === null) return value
  const shell = copyShell(value)
  pending.push([value, shell])
  return shell
}

function copyShell(value: Json): Json {
  return Array.isArray(value) ? new Array<Json>(value.length) : {}
}
