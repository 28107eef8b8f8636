/**
 * No Report for a finding whose namespace is not a namespace name or whose name is not a valid
 * name, whatever its result: one line on standard error instead, and the other findings of the
 * same namespace reported as ever.
 */

import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { AuditSummary } from '../../src/cli/audit-findings.ts'
import type { AuditFinding } from '../../src/cli/audit-findings.ts'
import { openReports } from '../../src/cli/openreports.ts'
import { textSink } from '../helpers/reports.ts'

function warned(namespace: string, name: string): AuditFinding {
  return {
    subject: { apiVersion: 'toolhive.stacklok.dev/v1beta1', kind: 'MCPServer', namespace, name },
    result: 'warn',
    rule: 'workload',
    violations: [],
    changes: [],
    warnings: ['spec.x: deprecated'],
  }
}

t.test('a finding no Report can hold is a line on standard error', async (t) => {
  const out = textSink()
  const notices = textSink()
  const writer = openReports(
    out.stream,
    { api: 'openreports', now: new Date('2026-11-29T00:00:00Z') },
    notices.stream,
  )
  for (const finding of [
    warned('team', 'ok'),
    warned('Team', 'x'),
    warned('team', 'UPPER'),
    warned('a'.repeat(64), 'x'),
    warned('team', '\u001b[2J'),
  ])
    writer.add(finding)
  writer.end(new AuditSummary())
  const reports = parseAllDocuments(out.text()).map(
    (d) => d.toJS() as { metadata: { namespace: string }; results: { resources: object[] }[] },
  )
  t.same(
    reports.map((r) => [r.metadata.namespace, r.results.map((x) => x.resources)]),
    [
      [
        'team',
        [
          [
            {
              apiVersion: 'toolhive.stacklok.dev/v1beta1',
              kind: 'MCPServer',
              namespace: 'team',
              name: 'ok',
            },
          ],
        ],
      ],
    ],
  )
  t.same(notices.text().split('\n'), [
    'mcp-admission: not in any Report: MCPServer (namespace "Team" is not a namespace name): warn',
    'mcp-admission: not in any Report: MCPServer (name "UPPER" is not a valid name): warn',
    `mcp-admission: not in any Report: MCPServer (namespace "${'a'.repeat(58)}…" is not a namespace name): warn`,
    'mcp-admission: not in any Report: MCPServer (name "\\u001b[2J" is not a valid name): warn',
    '',
  ])
})

t.test('an error finding with a valid namespace and name is a result of its Report', async (t) => {
  const out = textSink()
  const notices = textSink()
  const writer = openReports(
    out.stream,
    { api: 'openreports', now: new Date('2026-11-29T00:00:00Z') },
    notices.stream,
  )
  writer.add({ ...warned('team', 'x'), result: 'error', warnings: [], error: 'unreadable' })
  writer.end(new AuditSummary())
  const [report] = parseAllDocuments(out.text()).map((d) => d.toJS() as Record<string, unknown>)
  t.match(report, {
    summary: { error: 1 },
    results: [{ result: 'error', message: 'could not be audited: unreadable' }],
  })
  t.equal(notices.text(), '')
})
