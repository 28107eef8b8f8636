/**
 * The outputs of `audit`: a table for people (each finding as it comes, then a line per kind),
 * one JSON document, or OpenReports `Report`s or `PolicyReport`s for `kubectl apply -f -`. The
 * table and JSON stream: only the report outputs hold findings (grouped by namespace) until the end.
 */

import type { Writable } from 'node:stream'
import { terminalText } from '../policy/messages/render.ts'
import { AUDIT_RESULTS } from './audit-findings.ts'
import type { AuditFinding, AuditSummary } from './audit-findings.ts'
import { REPORT_APIS, openReports } from './openreports.ts'
import type { ReportApi } from './openreports.ts'

export const AUDIT_OUTPUTS = ['table', 'json', 'openreports', 'policyreport'] as const
export type AuditOutput = (typeof AUDIT_OUTPUTS)[number]

/** The outputs that are reports (openreports.ts). */
export function isReportOutput(output: AuditOutput): output is ReportApi {
  return output in REPORT_APIS
}

export interface AuditWriter {
  /** Reports one object (clean ones too: a report counts them). */
  add(finding: AuditFinding): void
  /** Writes what remains once every object is audited. */
  end(summary: AuditSummary): void
}

/** What the report outputs say beyond the findings: when the audit ran, and of which cluster. */
export interface AuditWriterContext {
  readonly now: Date
  readonly clusterName?: string | undefined
}

/** `notices` (standard error) hears of what an output could not hold (openreports.ts). */
export function auditWriter(
  output: AuditOutput,
  out: Writable,
  context: AuditWriterContext,
  notices: Writable,
): AuditWriter {
  if (output === 'json') return jsonWriter(out)
  if (isReportOutput(output)) return openReports(out, { api: output, ...context }, notices)
  return tableWriter(out)
}

const LABELS = {
  deny: 'DENY ',
  patch: 'PATCH',
  warn: 'WARN ',
  error: 'ERROR',
  clean: 'CLEAN',
} as const
const HEADINGS = {
  deny: 'DENY',
  patch: 'PATCH',
  warn: 'WARN',
  error: 'ERROR',
  clean: 'CLEAN',
} as const

function tableWriter(out: Writable): AuditWriter {
  return {
    add(finding) {
      if (finding.result === 'clean') return
      const { subject } = finding
      const lines = [
        `${LABELS[finding.result]}  ${terminalText(subject.kind)} ${terminalText(subject.namespace)}/${terminalText(subject.name)}`,
        ...finding.violations.map((violation) => `    ${violation}`),
        ...finding.changes.flatMap((change) =>
          change.meanings.map(
            (meaning) => `    ${meaning} (${change.op} ${terminalText(change.path)})`,
          ),
        ),
        ...finding.warnings.map((warning) => `    warning: ${warning}`),
        ...(finding.error === undefined ? [] : [`    could not be audited: ${finding.error}`]),
      ]
      out.write(`${lines.join('\n')}\n`)
    },
    end(summary) {
      const rows = summary
        .kinds()
        .map(({ kind, audited, counts }) => [
          kind,
          String(audited),
          ...AUDIT_RESULTS.map((result) => String(counts[result])),
        ])
      const table = [['KIND', 'AUDITED', ...AUDIT_RESULTS.map((r) => HEADINGS[r])], ...rows]
      const widths = table[0]?.map((_, column) =>
        Math.max(...table.map((row) => row[column]?.length ?? 0)),
      )
      const aligned = table.map((row) =>
        row
          .map((cell, column) =>
            column === 0
              ? cell.padEnd(widths?.[column] ?? 0)
              : cell.padStart(widths?.[column] ?? 0),
          )
          .join('  '),
      )
      const { failing, errors } = summary
      const verdict =
        (failing === 0
          ? 'no object would be denied or changed by a write now'
          : `${failing} ${failing === 1 ? 'object' : 'objects'} would be denied or changed by a write now`) +
        (errors === 0 ? '' : `; ${errors} could not be audited`)
      out.write(`${rows.length === 0 ? 'nothing to audit' : aligned.join('\n')}\n${verdict}\n`)
    },
  }
}

/** `{"findings": [...], "summary": [...]}`, each finding on its own line as it comes. */
function jsonWriter(out: Writable): AuditWriter {
  let first = true
  out.write('{"findings": [')
  return {
    add(finding) {
      if (finding.result === 'clean') return
      out.write(`${first ? '\n' : ',\n'}  ${JSON.stringify(finding)}`)
      first = false
    },
    end(summary) {
      const kinds = summary
        .kinds()
        .map(({ kind, audited, counts }) => ({ kind, audited, ...counts }))
      out.write(`${first ? '' : '\n'}],\n"summary": ${JSON.stringify(kinds, null, 2)}}\n`)
    },
  }
}
