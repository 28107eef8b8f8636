/**
 * The results a Report (or PolicyReport) lists for one finding, in the shape Policy Reporter reads
 * best (docs/monitoring.md, "Reports"): `category` ToolHive, `policy` the rule's public name,
 * `severity` the rule's from the rule table, and a `properties.resultID` that stays the same for
 * the same problem of the same object from one audit to the next.
 */

import { createHash } from 'node:crypto'
import { RULE_TABLE } from '../policy/rules.ts'
import type { Severity } from '../policy/rules.ts'
import type { AuditFinding, AuditSubject } from './audit-findings.ts'

export const REPORT_SOURCE = 'mcp-admission'
/** Policy Reporter groups results by category; one for everything we judge. */
export const REPORT_CATEGORY = 'ToolHive'
/** The property Policy Reporter takes a result's id from instead of hashing its fields. */
export const RESULT_ID_PROPERTY = 'resultID'
/** An item that could not be audited has no rule: it is filed under the tool's own name, as high. */
const NO_RULE_POLICY = REPORT_SOURCE
const UNAUDITABLE_SEVERITY: Severity = 'high'
const PASS_MESSAGE = 'a write now would be admitted unchanged'

export type ResultStatus = 'pass' | 'fail' | 'warn' | 'error'

export interface ReportResult {
  readonly source: string
  readonly policy: string
  /** The same name again: our rules have no sub-rules, and a filter on `rule` keeps working. */
  readonly rule: string
  readonly category: string
  readonly result: ResultStatus
  readonly severity?: Severity
  readonly message: string
  readonly timestamp: { readonly seconds: number; readonly nanos: number }
  readonly resources: readonly AuditSubject[]
  readonly properties: Readonly<Record<string, string>>
}

export interface ResultContext {
  /** When the audit ran: every result of one run has it. */
  readonly now: Date
  /** `--cluster-name`: in each result's properties and its id, so two clusters' ids differ. */
  readonly clusterName?: string | undefined
}

const SEVERITY_OF: ReadonlyMap<string, Severity> = new Map(
  RULE_TABLE.map((rule) => [rule.name, rule.severity]),
)

/** One result per violation, per invariant a change restores, per warning; one for a clean object. */
export function reportResults(finding: AuditFinding, context: ResultContext): ReportResult[] {
  const policy = finding.rule ?? NO_RULE_POLICY
  const severity = finding.rule === undefined ? undefined : SEVERITY_OF.get(finding.rule)
  const make = (
    result: ResultStatus,
    message: string,
    properties: Record<string, string> = {},
    resultSeverity = severity,
  ): ReportResult => {
    const withCluster = {
      ...properties,
      ...(context.clusterName === undefined ? {} : { cluster: context.clusterName }),
    }
    return {
      source: REPORT_SOURCE,
      policy,
      rule: policy,
      category: REPORT_CATEGORY,
      result,
      ...(resultSeverity === undefined ? {} : { severity: resultSeverity }),
      message,
      // Fresh objects for every result: shared ones would be written as YAML anchors and aliases.
      timestamp: { seconds: Math.floor(context.now.getTime() / 1000), nanos: 0 },
      resources: [{ ...finding.subject }],
      properties: {
        ...withCluster,
        [RESULT_ID_PROPERTY]: resultId(finding.subject, policy, result, message, withCluster),
      },
    }
  }
  if (finding.result === 'clean') return [make('pass', PASS_MESSAGE)]
  return [
    ...finding.violations.map((message) =>
      make('fail', `would be denied: ${message}`, { outcome: 'denied' }),
    ),
    ...finding.changes.flatMap((change) =>
      change.meanings.map((meaning) =>
        make('fail', `would be patched: ${meaning}`, {
          outcome: 'patched',
          operation: change.op,
          path: change.path,
        }),
      ),
    ),
    ...finding.warnings.map((message) => make('warn', message)),
    ...(finding.error === undefined
      ? []
      : [make('error', `could not be audited: ${finding.error}`, {}, UNAUDITABLE_SEVERITY)]),
  ]
}

/**
 * What identifies a result across audits: the cluster, the rule, the object (uid, kind,
 * namespace, name), the result and its message and properties (a patch's operation and path).
 * Left out on purpose: the timestamp and the resourceVersion (they change on every run or
 * every write, and the same problem must keep its id so Policy Reporter does not announce it
 * again), and which numbered Report holds it (that moves when a namespace's results grow). The
 * uid is in: an object deleted and created again under the same name is a new object.
 */
export function resultId(
  subject: AuditSubject,
  policy: string,
  result: ResultStatus,
  message: string,
  properties: Readonly<Record<string, string>>,
): string {
  const fields = [
    policy,
    subject.uid ?? '',
    subject.kind,
    subject.namespace,
    subject.name,
    result,
    message,
    ...Object.entries(properties)
      // Keys of one object are never equal.
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .flat(),
  ]
  // JSON keeps the fields apart: no two lists of strings give the same text.
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex').slice(0, 32)
}
