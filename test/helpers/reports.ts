/** `audit -o openreports` (or `-o policyreport`) output for planted findings, without a cluster to audit. */

import { Writable } from 'node:stream'
import { AuditSummary } from '../../src/cli/audit-findings.ts'
import type { AuditFinding } from '../../src/cli/audit-findings.ts'
import { openReports } from '../../src/cli/openreports.ts'
import type { ReportApi } from '../../src/cli/openreports.ts'

/** A stream that keeps what is written to it, as text. */
export function textSink(): { stream: Writable; text: () => string } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'))
      callback()
    },
  })
  return { stream, text: () => chunks.join('') }
}

/** The Reports (YAML) of `count` MCPServers in `namespace`, each warned about with `text`. */
export function warnedReport(
  text: string,
  count: number,
  namespace = 'team',
  api: ReportApi = 'openreports',
): string {
  const out = textSink()
  // Every finding here names a valid namespace and name, so nothing is said on standard error.
  const notices = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      callback(new Error(`unexpected notice: ${chunk.toString('utf8')}`))
    },
  })
  const writer = openReports(out.stream, { api, now: new Date('2026-11-29T00:00:00Z') }, notices)
  const summary = new AuditSummary()
  for (let i = 0; i < count; i++) {
    const finding: AuditFinding = {
      subject: {
        apiVersion: 'toolhive.stacklok.dev/v1beta1',
        kind: 'MCPServer',
        namespace,
        name: `s-${i}`,
        uid: `uid-${i}`,
      },
      result: 'warn',
      rule: 'workload',
      violations: [],
      changes: [],
      warnings: [text],
    }
    writer.add(finding)
    summary.add(finding)
  }
  writer.end(summary)
  return out.text()
}

/**
 * The Reports (YAML) of one finding of each kind in `namespace` (denied, patched, warned, could
 * not be audited, clean), with `clusterName`: every field a result can have.
 */
export function mixedReport(namespace: string, api: ReportApi, clusterName?: string): string {
  const out = textSink()
  const writer = openReports(
    out.stream,
    { api, now: new Date('2026-11-29T00:00:00Z'), clusterName },
    new Writable({
      write(_chunk, _encoding, callback) {
        callback()
      },
    }),
  )
  const subject = (kind: string, name: string) => ({
    apiVersion: kind === 'ConfigMap' ? 'v1' : 'toolhive.stacklok.dev/v1beta1',
    kind,
    namespace,
    name,
    uid: `${name}-uid`,
    resourceVersion: '42',
  })
  const none = { violations: [], changes: [], warnings: [] }
  const findings: AuditFinding[] = [
    {
      ...none,
      subject: subject('MCPWebhookConfig', 'denied'),
      result: 'deny',
      rule: 'webhook-config',
      violations: ['spec.x: <not> & "valid"'],
    },
    {
      ...none,
      subject: subject('ConfigMap', 'patched'),
      result: 'patch',
      rule: 'runconfig-content-checksum',
      changes: [{ op: 'add', path: '/metadata/annotations/x', meanings: ['checksum missing'] }],
    },
    {
      ...none,
      subject: subject('MCPServer', 'warned'),
      result: 'warn',
      rule: 'workload',
      warnings: ['spec.replicas: ignored'],
    },
    { ...none, subject: subject('MCPServer', 'broken'), result: 'error', error: 'no spec' },
    { ...none, subject: subject('MCPServer', 'clean'), result: 'clean', rule: 'workload' },
  ]
  for (const finding of findings) writer.add(finding)
  writer.end(new AuditSummary())
  return out.text()
}
