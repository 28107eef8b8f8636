/**
 * The delete guard (docs/enforcement.md, "References and deletes"): a DELETE of a ToolHive object that other
 * objects in its namespace still reference. Protection is decided per referring path: the operator's
 * finalizer on the object holds it only while the paths that finalizer counts name it (the kind
 * table's `protectedBy`). When every referrer is held so, the delete is allowed (the object waits
 * for them); otherwise the rule is broken, naming only the referrers nothing holds it for. What a
 * broken rule becomes (a refusal, a warning, an audit record) is the enforcement's to say.
 */

import { isRecord } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'
import { violation } from './messages/field-errors.ts'
import type { Referrer } from './references.ts'
import type { ValidationResult } from './result.ts'

/**
 * What the guard learned before judging: the object deleted (as the request names it: a review
 * may carry no old object), and its referrers or why it did not look.
 */
export type DeleteFacts = { readonly kind: string; readonly name: string } & (
  | { readonly referrers: readonly Referrer[] }
  /** Not looked at (a terminating namespace, cluster machinery): admitted as it is. */
  | { readonly exempt: string }
  /** The referrers could not be read: admitted, saying so (the guard never holds a delete up). */
  | { readonly unread: string }
)

/** Whether the delete was held by the operator's finalizer or left to the guard (its metric). */
export type DeleteProtection = 'protected' | 'unprotected'

export interface DeleteJudgement extends ValidationResult {
  /** Absent when nothing references the object, or nothing was looked at. */
  readonly protection?: DeleteProtection
}

/**
 * Judges deleting the object `facts` names, stored as `object` (its finalizers). The violation is
 * on the whole object (field `''`): nothing in the deleted object is wrong, references to it
 * elsewhere are.
 */
export function guardDelete(object: KubeObject | undefined, facts: DeleteFacts): DeleteJudgement {
  if ('exempt' in facts) return { violations: [], warnings: [] }
  if ('unread' in facts) return { violations: [], warnings: [`not checked: ${facts.unread}`] }
  const { kind, name, referrers } = facts
  if (referrers.length === 0) return { violations: [], warnings: [] }
  const finalizers = finalizersOf(object)
  const unprotected = referrers.filter(
    ({ reference }) =>
      reference.protectedBy === undefined || !finalizers.includes(reference.protectedBy.finalizer),
  )
  if (unprotected.length === 0)
    return {
      violations: [],
      warnings: [`deletion waits for ${objectList(referrers)}`],
      protection: 'protected',
    }
  const holders = unique(unprotected.map(({ reference }) => reference.path.replace(/\.name$/, '')))
  const pronoun = unique(unprotected.map(({ kind, name }) => `${kind}/${name}`)).length === 1
  return {
    violations: [
      violation.forbidden(
        '',
        `${kind} ${JSON.stringify(name)} is still referenced by ${objectList(unprotected)}; ` +
          `remove ${holders.join(', ')} from ${pronoun ? 'it' : 'them'} first`,
      ),
    ],
    warnings: [],
    protection: 'unprotected',
  }
}

/** `Kind name` of each referring object, once whatever its fields, sorted: a stable message. */
function objectList(referrers: readonly Referrer[]): string {
  return unique(referrers.map(({ kind, name }) => `${kind} ${name}`)).join(', ')
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)].sort()
}

function finalizersOf(object: KubeObject | undefined): readonly unknown[] {
  const metadata: unknown = object?.metadata
  const finalizers = isRecord(metadata) ? metadata.finalizers : undefined
  return Array.isArray(finalizers) ? finalizers : []
}
