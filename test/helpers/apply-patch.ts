/**
 * The test oracle for the mutating webhook: applies a patch from `diff` (add, remove, replace) to
 * a copy of `document`, as the API server applies a webhook's patch. The product never applies its
 * own patch (the mutating handler hands over the object it made); tests check the two agree. Not
 * fast-json-patch's applyPatch: it assigns with `=`, so a legal map key named `__proto__` either
 * sets the prototype or is refused, where the API server stores it as a key like any other.
 */

import type { Operation } from 'fast-json-patch'
import { cloneJson } from '../../src/admission/clone.ts'
import { isRecord, setOwn } from '../../src/policy/kube/object.ts'

export function applyPatch<T>(document: T, patch: readonly Operation[]): T {
  const root = { value: cloneJson(document) as unknown }
  for (const operation of patch) {
    const tokens =
      operation.path === '' ? [] : operation.path.slice(1).split('/').map(unescapeToken)
    const key = tokens.pop()
    let parent: unknown = root.value
    for (const token of tokens)
      parent =
        isRecord(parent) || Array.isArray(parent)
          ? (parent as Record<string, unknown>)[token]
          : undefined
    if (key === undefined) {
      if (operation.op === 'add' || operation.op === 'replace')
        root.value = cloneJson(operation.value)
      continue
    }
    if (Array.isArray(parent)) {
      const items = parent as unknown[]
      const index = key === '-' ? items.length : Number(key)
      if (operation.op === 'remove') items.splice(index, 1)
      else if (operation.op === 'add') items.splice(index, 0, cloneJson(operation.value))
      else if (operation.op === 'replace') items[index] = cloneJson(operation.value)
    } else if (isRecord(parent)) {
      if (operation.op === 'remove') Reflect.deleteProperty(parent, key)
      else if (operation.op === 'add' || operation.op === 'replace')
        setOwn(parent, key, cloneJson(operation.value))
    } else {
      throw new Error(`cannot apply ${operation.op} at ${operation.path}: no such parent`)
    }
  }
  return root.value as T
}

function unescapeToken(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~')
}
