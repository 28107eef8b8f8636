/**
 * `audit -o openreports`: the findings as OpenReports `Report` objects (`openreports.io/v1alpha1`,
 * the successor of the Policy Working Group's PolicyReport, read by Kyverno's tooling and Policy
 * Reporter), one per namespace audited, named `mcp-admission` so that applying a later audit
 * replaces the earlier one (a namespace whose objects are all clean gets a report that says so).
 *
 * - `summary` counts results: `fail` a violation or change, `warn` a warning, and `pass` each
 *   clean object (clean objects are counted, not listed, so a large namespace stays small);
 *   `error` an item of a list that could not be audited (not an object, or without a name).
 * - Every audited kind is namespaced, so no `ClusterReport` is ever needed.
 * - A finding whose namespace is not a namespace name (a DNS-1123 label) or whose name is not a
 *   DNS-1123 subdomain (only an item a broken or hostile API server sent, an `error` finding of
 *   the audit) is in no Report: it could not be applied (there is no such namespace) or could not
 *   reference the object, and one such namespace would make `kubectl apply` refuse the rest too.
 *   It is one line on standard error instead, and the audit's exit status (1) already says so.
 * - `kubectl apply` keeps a copy of the object in an annotation, and the API server holds an
 *   object's annotations to 262,144 bytes in all: past `MAX_RESULT_BYTES` of results, counted
 *   as kubectl's JSON takes them, the rest are counted in the summary and in an annotation, not
 *   listed (`audit -o json` lists them all).
 */

import type { Writable } from 'node:stream'
import { stringify as toYaml } from 'yaml'
import { isDnsLabel, isDnsSubdomain } from '../policy/kube/names.ts'
import { jsonQuoted, renderText } from '../policy/messages/render.ts'
import type { AuditFinding, AuditSubject } from './audit-findings.ts'
import type { AuditWriter } from './audit-output.ts'

export const REPORT_NAME = 'mcp-admission'
export const OMITTED_ANNOTATION = 'mcp-admission.toolhive.stacklok.dev/omitted-results'
/** The listed results' bytes at most: the rest of the Report (metadata, summary) stays far below 64 KiB. */
export const MAX_RESULT_BYTES = 192 * 1024
const SOURCE = 'mcp-admission'

interface Result {
  readonly source: string
  readonly policy: string
  readonly rule?: string
  readonly result: 'fail' | 'warn' | 'error'
  readonly severity: 'high' | 'medium' | 'low'
  readonly message: string
  readonly timestamp: { readonly seconds: number; readonly nanos: number }
  readonly resources: readonly AuditSubject[]
  readonly properties?: Readonly<Record<string, string>>
}

interface NamespaceReport {
  readonly summary: { pass: number; fail: number; warn: number; error: number; skip: number }
  readonly results: Result[]
  bytes: number
  omitted: number
}

export function openReports(out: Writable, now: Date, notices: Writable): AuditWriter {
  const timestamp = { seconds: Math.floor(now.getTime() / 1000), nanos: 0 }
  const reports = new Map<string, NamespaceReport>()
  return {
    add(finding) {
      const unreportable = whyNoReport(finding.subject)
      if (unreportable !== undefined) {
        notices.write(`mcp-admission: ${renderText(noReportLine(finding, unreportable))}\n`)
        return
      }
      const namespace = finding.subject.namespace
      let report = reports.get(namespace)
      if (!report) {
        const summary = { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 }
        reports.set(namespace, (report = { summary, results: [], bytes: 0, omitted: 0 }))
      }
      if (finding.result === 'clean') report.summary.pass++
      for (const result of resultsOf(finding, timestamp)) {
        report.summary[result.result]++
        const bytes = goJsonBytes(result)
        if (report.bytes + bytes > MAX_RESULT_BYTES) {
          report.omitted++
          continue
        }
        report.results.push(result)
        report.bytes += bytes
      }
    },
    end() {
      const documents = [...reports].map(([namespace, report]) =>
        toYaml({
          apiVersion: 'openreports.io/v1alpha1',
          kind: 'Report',
          metadata: {
            name: REPORT_NAME,
            namespace,
            labels: { 'app.kubernetes.io/managed-by': SOURCE },
            ...(report.omitted > 0
              ? { annotations: { [OMITTED_ANNOTATION]: String(report.omitted) } }
              : {}),
          },
          source: SOURCE,
          summary: report.summary,
          results: report.results,
        }),
      )
      out.write(documents.join('---\n'))
    },
  }
}

/** Why no Report can hold a finding about `subject`; undefined when one can. */
function whyNoReport(subject: AuditSubject): string | undefined {
  if (!isDnsLabel(subject.namespace))
    return `namespace ${jsonQuoted(subject.namespace)} is not a namespace name`
  if (!isDnsSubdomain(subject.name)) return `name ${jsonQuoted(subject.name)} is not a valid name`
  return undefined
}

/** `not in any Report: MCPServer (namespace "" is not a namespace name): could not be audited: …` */
function noReportLine(finding: AuditFinding, why: string): string {
  const what =
    finding.error === undefined ? finding.result : `could not be audited: ${finding.error}`
  return `not in any Report: ${finding.subject.kind} (${why}): ${what}`
}

/** One result per violation, per invariant a change restores, and per warning. */
function resultsOf(finding: AuditFinding, timestamp: Result['timestamp']): Result[] {
  const base = {
    source: SOURCE,
    policy: SOURCE,
    ...(finding.rule === undefined ? {} : { rule: finding.rule }),
    timestamp,
    resources: [finding.subject],
  }
  return [
    ...finding.violations.map((message): Result => ({
      ...base,
      result: 'fail',
      severity: 'high',
      message: `would be denied: ${message}`,
      properties: { outcome: 'denied' },
    })),
    ...finding.changes.flatMap((change) =>
      change.meanings.map((meaning): Result => ({
        ...base,
        result: 'fail',
        severity: 'medium',
        message: `would be patched: ${meaning}`,
        properties: { outcome: 'patched', operation: change.op, path: change.path },
      })),
    ),
    ...finding.warnings.map((message): Result => ({
      ...base,
      result: 'warn',
      severity: 'low',
      message,
    })),
    ...(finding.error === undefined
      ? []
      : [
          {
            ...base,
            result: 'error',
            severity: 'high',
            message: `could not be audited: ${finding.error}`,
          } satisfies Result,
        ]),
  ]
}

/**
 * The bytes of `value` as kubectl stores it in its annotation: Go's encoding/json, which writes
 * UTF-8 (a character may be 4 bytes where it is 2 UTF-16 units, or 3 where it is 1) and escapes
 * `<`, `>` and `&` as `\u003c` (6 bytes for 1) and U+2028, U+2029 as `\u2028` (6 for 3).
 */
export function goJsonBytes(value: unknown): number {
  const json = JSON.stringify(value)
  let escapes = 0
  for (let i = 0; i < json.length; i++) {
    const unit = json.charCodeAt(i)
    if (unit === 0x3c || unit === 0x3e || unit === 0x26) escapes += 5
    else if (unit === 0x2028 || unit === 0x2029) escapes += 3
  }
  return Buffer.byteLength(json, 'utf8') + escapes
}
