/**
 * `audit -o openreports` and `-o policyreport`: the findings as OpenReports `Report` objects
 * (`openreports.io/v1alpha1`, the successor of the Policy Working Group's PolicyReport) or as
 * `wgpolicyk8s.io/v1alpha2` `PolicyReport`s (what Kyverno still writes by default), both read by
 * Policy Reporter. One per namespace audited, named `mcp-admission`, so that applying a later
 * audit replaces the earlier one (a namespace whose objects are all clean gets a report that
 * says so). What each result holds: report-results.ts.
 *
 * - `summary` counts results: `fail` a violation or change, `warn` a warning, `pass` a clean
 *   object, `error` an item of a list that could not be audited (not an object, or without a
 *   name). Every audited kind is namespaced, so no cluster-scoped report is ever needed.
 * - A finding whose namespace is not a namespace name (a DNS-1123 label) or whose name is not a
 *   DNS-1123 subdomain (only an item a broken or hostile API server sent, an `error` finding of
 *   the audit) is in no Report: it could not be applied (there is no such namespace) or could not
 *   reference the object, and one such namespace would make `kubectl apply` refuse the rest too.
 *   It is one line on standard error instead, and the audit's exit status (1) already says so.
 * - `kubectl apply` keeps a copy of the object in an annotation, and the API server holds an
 *   object's annotations to 262,144 bytes in all: a Report lists at most `MAX_RESULT_BYTES` of
 *   results, counted as kubectl's JSON takes them. A namespace with more `fail`, `warn` or
 *   `error` results is split into numbered Reports (`mcp-admission`, `mcp-admission-2`, ...),
 *   none dropped; `pass` results fill what room the last one has left, and the passes past it
 *   are counted in its summary and in an annotation, not listed. Each Report's summary counts
 *   exactly what it stands for, so a namespace's Reports add up to its whole audit.
 */

import type { Writable } from 'node:stream'
import { stringify as toYaml } from 'yaml'
import { isDnsLabel, isDnsSubdomain } from '../policy/kube/names.ts'
import { jsonQuoted, renderText } from '../policy/messages/render.ts'
import type { AuditFinding, AuditSubject } from './audit-findings.ts'
import type { AuditWriter } from './audit-output.ts'
import { REPORT_SOURCE, reportResults } from './report-results.ts'
import type { ReportResult } from './report-results.ts'

export const REPORT_NAME = 'mcp-admission'
/** On a namespace's last Report: how many `pass` results its summary counts but does not list. */
export const UNLISTED_PASSES_ANNOTATION = 'mcp-admission.toolhive.stacklok.dev/unlisted-passes'
/** `--cluster-name`, so reports of several clusters gathered in one place can be told apart. */
export const CLUSTER_LABEL = 'mcp-admission.toolhive.stacklok.dev/cluster'
/** The listed results' bytes at most: the rest of the Report (metadata, summary) stays far below 64 KiB. */
export const MAX_RESULT_BYTES = 192 * 1024

/** The report APIs, by `--output`: what differs between them is only their type and `source`. */
export const REPORT_APIS = {
  openreports: { apiVersion: 'openreports.io/v1alpha1', kind: 'Report', topLevelSource: true },
  // The PolicyReport CRD has no top-level source: each result names it.
  policyreport: {
    apiVersion: 'wgpolicyk8s.io/v1alpha2',
    kind: 'PolicyReport',
    topLevelSource: false,
  },
} as const
export type ReportApi = keyof typeof REPORT_APIS

export interface ReportOptions {
  readonly api: ReportApi
  readonly now: Date
  readonly clusterName?: string | undefined
}

interface Summary {
  pass: number
  fail: number
  warn: number
  error: number
  skip: number
}

/** What one namespace has found so far; passes kept only up to what one Report could list. */
interface NamespaceResults {
  readonly findings: { readonly result: ReportResult; readonly bytes: number }[]
  readonly passes: { readonly result: ReportResult; readonly bytes: number }[]
  passBytes: number
  passCount: number
}

/** One Report's content. */
interface ReportPage {
  readonly results: ReportResult[]
  readonly summary: Summary
  bytes: number
}

export function openReports(out: Writable, options: ReportOptions, notices: Writable): AuditWriter {
  const namespaces = new Map<string, NamespaceResults>()
  return {
    add(finding) {
      const unreportable = whyNoReport(finding.subject)
      if (unreportable !== undefined) {
        notices.write(`mcp-admission: ${renderText(noReportLine(finding, unreportable))}\n`)
        return
      }
      const namespace = finding.subject.namespace
      let held = namespaces.get(namespace)
      if (!held)
        namespaces.set(namespace, (held = { findings: [], passes: [], passBytes: 0, passCount: 0 }))
      for (const result of reportResults(finding, options)) {
        const bytes = goJsonBytes(result)
        if (result.result !== 'pass') {
          held.findings.push({ result, bytes })
          continue
        }
        held.passCount++
        // A pass past one Report's room could never be listed: counted, not kept.
        if (held.passBytes + bytes > MAX_RESULT_BYTES) continue
        held.passes.push({ result, bytes })
        held.passBytes += bytes
      }
    },
    end() {
      const documents = [...namespaces].flatMap(([namespace, held]) =>
        pagesOf(held).map(({ page, unlistedPasses }, index) =>
          toYaml(reportObject(options, namespace, index, page, unlistedPasses), {
            aliasDuplicateObjects: false,
          }),
        ),
      )
      out.write(documents.join('---\n'))
    },
  }
}

/**
 * The Reports of one namespace: its findings in order, a new Report each time the next would
 * pass the bound, then as many passes as the last has room for; the rest counted on the last.
 */
function pagesOf(held: NamespaceResults): { page: ReportPage; unlistedPasses: number }[] {
  const newPage = (): ReportPage => ({
    results: [],
    summary: { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 },
    bytes: 0,
  })
  let page = newPage()
  const pages = [page]
  for (const { result, bytes } of held.findings) {
    if (page.results.length > 0 && page.bytes + bytes > MAX_RESULT_BYTES)
      pages.push((page = newPage()))
    page.results.push(result)
    page.summary[result.result]++
    page.bytes += bytes
  }
  let listedPasses = 0
  for (const { result, bytes } of held.passes) {
    if (page.bytes + bytes > MAX_RESULT_BYTES) break
    page.results.push(result)
    page.bytes += bytes
    listedPasses++
  }
  const unlistedPasses = held.passCount - listedPasses
  page.summary.pass = held.passCount
  return pages.map((each) => ({ page: each, unlistedPasses: each === page ? unlistedPasses : 0 }))
}

function reportObject(
  options: ReportOptions,
  namespace: string,
  index: number,
  page: ReportPage,
  unlistedPasses: number,
): Record<string, unknown> {
  const api = REPORT_APIS[options.api]
  return {
    apiVersion: api.apiVersion,
    kind: api.kind,
    metadata: {
      name: index === 0 ? REPORT_NAME : `${REPORT_NAME}-${index + 1}`,
      namespace,
      labels: {
        'app.kubernetes.io/managed-by': REPORT_SOURCE,
        ...(options.clusterName === undefined ? {} : { [CLUSTER_LABEL]: options.clusterName }),
      },
      ...(unlistedPasses > 0
        ? { annotations: { [UNLISTED_PASSES_ANNOTATION]: String(unlistedPasses) } }
        : {}),
    },
    ...(api.topLevelSource ? { source: REPORT_SOURCE } : {}),
    summary: page.summary,
    results: page.results,
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
