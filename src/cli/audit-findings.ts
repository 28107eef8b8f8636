/**
 * What `audit` says of one stored object, from the verdict its write would get now: denied (the
 * violations), patched (each change and the invariant it restores), warned, or clean. Pure, so
 * every output (table, JSON, OpenReports) reports the same finding.
 */

import { changeMeanings } from '../policy/change-meanings.ts'
import type { MalformedItem } from '../cluster/list-pages.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import type { AdmitVerdict } from './admit-object.ts'

/** The object a finding is about, as a report references it. */
export interface AuditSubject {
  readonly apiVersion: string
  readonly kind: string
  readonly namespace: string
  readonly name: string
  readonly uid?: string
  readonly resourceVersion?: string
}

export const AUDIT_RESULTS = ['deny', 'patch', 'warn', 'error', 'clean'] as const
/**
 * The most serious of what was found: deny over patch over warn; `error` is an item of a list that
 * could not be audited at all (not an object, or without a name), which fails the audit too.
 */
export type AuditResult = (typeof AUDIT_RESULTS)[number]

export interface AuditChange {
  readonly op: string
  readonly path: string
  /** The invariants the change restores (change-meanings.ts). */
  readonly meanings: readonly string[]
}

export interface AuditFinding {
  readonly subject: AuditSubject
  readonly result: AuditResult
  /** The rule a denial, patch or warning came from. */
  readonly rule?: string | undefined
  /** A denial's violations (`field: message`). */
  readonly violations: readonly string[]
  /** A patch's changes. */
  readonly changes: readonly AuditChange[]
  readonly warnings: readonly string[]
  /** Why an `error` item could not be audited (`item 3 of the list: no metadata`). */
  readonly error?: string
}

/** The finding for `object`, given the verdict of writing it now. */
export function findingOf(object: KubeObject, verdict: AdmitVerdict): AuditFinding {
  const subject = subjectOf(object)
  if (!verdict.admitted)
    return {
      subject,
      result: 'deny',
      rule: verdict.rule,
      violations: verdict.causes,
      changes: [],
      warnings: verdict.warnings,
    }
  const changes = verdict.patch.map((operation) => ({
    op: operation.op,
    path: operation.path,
    meanings: changeMeanings(operation),
  }))
  const result: AuditResult =
    changes.length > 0 ? 'patch' : verdict.warnings.length > 0 ? 'warn' : 'clean'
  return {
    subject,
    result,
    rule:
      result === 'patch' ? verdict.rules.mutate : (verdict.rules.validate ?? verdict.rules.mutate),
    violations: [],
    changes,
    warnings: verdict.warnings,
  }
}

/** The finding for an item of `kind`'s list that is not an object as stored: result `error`. */
export function malformedFinding(
  apiVersion: string,
  kind: string,
  item: MalformedItem,
): AuditFinding {
  return {
    subject: { apiVersion, kind, namespace: item.namespace, name: item.name },
    result: 'error',
    violations: [],
    changes: [],
    warnings: [],
    error: `item ${item.index} of the list: ${item.problem}`,
  }
}

/**
 * Whether a finding fails the audit (exit 1): a write now would be refused or changed, or the
 * object could not be audited.
 */
export function isFailing(finding: AuditFinding): boolean {
  return finding.result === 'deny' || finding.result === 'patch' || finding.result === 'error'
}

/** Per kind, how many objects had each result. */
export class AuditSummary {
  readonly #counts = new Map<string, Record<AuditResult, number>>()

  add(finding: AuditFinding): void {
    const kind = finding.subject.kind
    let counts = this.#counts.get(kind)
    if (!counts)
      this.#counts.set(kind, (counts = { deny: 0, patch: 0, warn: 0, error: 0, clean: 0 }))
    counts[finding.result]++
  }

  /** Each kind audited, in the order first seen, with its counts and total. */
  kinds(): { kind: string; audited: number; counts: Record<AuditResult, number> }[] {
    return [...this.#counts].map(([kind, counts]) => ({
      kind,
      audited: counts.deny + counts.patch + counts.warn + counts.error + counts.clean,
      counts: { ...counts },
    }))
  }

  /** How many objects a write now would deny or change. */
  get failing(): number {
    return this.kinds().reduce((sum, { counts }) => sum + counts.deny + counts.patch, 0)
  }

  /** How many items could not be audited. */
  get errors(): number {
    return this.kinds().reduce((sum, { counts }) => sum + counts.error, 0)
  }
}

function subjectOf(object: KubeObject): AuditSubject {
  const metadata = object.metadata ?? {}
  const text = (value: unknown) => (typeof value === 'string' ? value : '')
  return {
    apiVersion: text(object.apiVersion),
    kind: text(object.kind),
    namespace: text(metadata.namespace),
    name: text(metadata.name),
    ...(typeof metadata.uid === 'string' ? { uid: metadata.uid } : {}),
    ...(typeof metadata.resourceVersion === 'string'
      ? { resourceVersion: metadata.resourceVersion }
      : {}),
  }
}
