/**
 * The warnings about what an object's references name (docs/enforcement.md, "References and deletes"): a
 * target that does not exist, or exists but is not what the reference requires. The operator
 * checks them only when it reconciles, after the write was accepted; the warning says so at the
 * write. Never a denial: GitOps tools apply a bundle in any order, the config after its workload.
 */

import { isRecord } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'
import { valuesAtPattern } from './kube/path-patterns.ts'
import { KIND } from './kinds.ts'
import { referencesIn } from './references.ts'

/**
 * What the cluster holds of the objects references name, by `kind/name`: the object, or
 * undefined where none exists. A target left out (its kind is not served) is unknown, and warned
 * about not at all.
 */
export type ReferenceTargets = ReadonlyMap<string, KubeObject | undefined>

export function targetKey(kind: string, name: string): string {
  return `${kind}/${name}`
}

/** One warning per reference of `object` whose target is missing or not what it requires. */
export function referenceWarnings(object: KubeObject, targets: ReferenceTargets): string[] {
  const warnings: string[] = []
  for (const { path, kind, name, reference } of referencesIn(object)) {
    const key = targetKey(kind, name)
    if (!targets.has(key)) continue
    const target = targets.get(key)
    const named = `${kind} ${JSON.stringify(name)}`
    if (target === undefined) {
      warnings.push(`${path}: ${named} not found: the operator ${reference.whenMissing}`)
      continue
    }
    const { requires } = reference
    if (requires === undefined) continue
    const value = valuesAtPattern(target, requires.path)[0]?.value
    if (value !== requires.equals)
      warnings.push(
        `${path}: ${named} has ${requires.path} ${JSON.stringify(value ?? null)}, not ${JSON.stringify(requires.equals)}: the operator refuses it`,
      )
  }
  return warnings
}

/**
 * A VirtualMCPServer's composite tools, inline and referenced, share one name space: the operator
 * merges them and fails the whole conversion on a name used twice. Inline duplicates are warned
 * about with the inline tools' other findings (composite-tool.ts); a referenced tool whose name is
 * taken is warned about here, at its ref.
 */
export function compositeToolNameWarnings(object: KubeObject, targets: ReferenceTargets): string[] {
  // Each name's first holder: an inline tool (`spec.config.compositeTools[0]`), or a ref.
  const holders = new Map<string, string>()
  for (const { path, value } of valuesAtPattern(object, 'spec.config.compositeTools[]')) {
    const name = isRecord(value) ? value.name : undefined
    if (typeof name === 'string' && !holders.has(name)) holders.set(name, path)
  }
  const warnings: string[] = []
  for (const { path, value } of valuesAtPattern(object, 'spec.config.compositeToolRefs[].name')) {
    if (typeof value !== 'string') continue
    const definition = targets.get(targetKey(KIND.VirtualMCPCompositeToolDefinition, value))
    const spec = isRecord(definition?.spec) ? definition.spec : {}
    const tool = spec.name
    if (typeof tool !== 'string') continue
    const first = holders.get(tool)
    if (first === undefined) holders.set(tool, path)
    else
      warnings.push(
        `${path}: tool ${JSON.stringify(tool)} is also defined by ${first}: the operator fails to reconcile it`,
      )
  }
  return warnings
}
