/**
 * What each result of `audit -o openreports` / `-o policyreport` holds, as Policy Reporter reads
 * it: category, policy (the rule's name), severity (the rule table's), a resultID that stays the
 * same from one audit to the next, the cluster name; pass results listed while a Report has room;
 * plain YAML without anchors or aliases.
 */

import t from 'tap'
import { parseAllDocuments, visit } from 'yaml'
import { AuditSummary } from '../../src/cli/audit-findings.ts'
import type { AuditFinding } from '../../src/cli/audit-findings.ts'
import {
  CLUSTER_LABEL,
  MAX_RESULT_BYTES,
  UNLISTED_PASSES_ANNOTATION,
  goJsonBytes,
  openReports,
} from '../../src/cli/openreports.ts'
import type { ReportOptions } from '../../src/cli/openreports.ts'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import { textSink } from '../helpers/reports.ts'

const NOW = new Date('2026-11-29T00:00:00Z')

/** The YAML the writer prints for `findings`. */
function reportText(findings: readonly AuditFinding[], options: Partial<ReportOptions> = {}) {
  const out = textSink()
  const writer = openReports(
    out.stream,
    { api: 'openreports', now: NOW, ...options },
    textSink().stream,
  )
  for (const finding of findings) writer.add(finding)
  writer.end(new AuditSummary())
  return out.text()
}

function reportsOf(
  findings: readonly AuditFinding[],
  options: Partial<ReportOptions> = {},
): Record<string, any>[] {
  return parseAllDocuments(reportText(findings, options)).map(
    (document) => document.toJS() as Record<string, any>,
  )
}

function subject(name: string, uid = `${name}-uid`) {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    namespace: 'team',
    name,
    uid,
    resourceVersion: '7',
  }
}

function denied(
  name: string,
  violations = ['spec.validating[0].url: must be https'],
): AuditFinding {
  return {
    subject: subject(name),
    result: 'deny',
    rule: 'webhook-config',
    violations,
    changes: [],
    warnings: [],
  }
}

function clean(name: string): AuditFinding {
  return {
    subject: subject(name),
    result: 'clean',
    rule: 'webhook-config',
    violations: [],
    changes: [],
    warnings: [],
  }
}

const severityOf = (rule: string) => RULE_TABLE.find((entry) => entry.name === rule)?.severity

t.test('each kind of result: policy, category, severity from the rule table', async (t) => {
  const patched: AuditFinding = {
    subject: { ...subject('cm'), kind: 'ConfigMap', apiVersion: 'v1' },
    result: 'patch',
    rule: 'runconfig-content-checksum',
    violations: [],
    changes: [{ op: 'add', path: '/metadata/annotations/x', meanings: ['checksum missing'] }],
    warnings: [],
  }
  const warned: AuditFinding = {
    subject: { ...subject('s'), kind: 'MCPServer' },
    result: 'warn',
    rule: 'workload',
    violations: [],
    changes: [],
    warnings: ['spec.replicas: ignored'],
  }
  const unauditable: AuditFinding = {
    subject: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team', name: 'x' },
    result: 'error',
    violations: [],
    changes: [],
    warnings: [],
    error: 'item 3 of the list: no metadata',
  }
  const [report] = reportsOf([denied('d'), patched, warned, unauditable, clean('c')])
  const results = report!['results'] as Record<string, any>[]
  t.same(
    results.map((r) => [r['policy'], r['category'], r['result'], r['severity']]),
    [
      ['webhook-config', 'ToolHive', 'fail', severityOf('webhook-config')],
      ['runconfig-content-checksum', 'ToolHive', 'fail', severityOf('runconfig-content-checksum')],
      ['workload', 'ToolHive', 'warn', 'low'],
      ['mcp-admission', 'ToolHive', 'error', 'high'],
      ['webhook-config', 'ToolHive', 'pass', severityOf('webhook-config')],
    ],
  )
  t.same(
    results.map((r) => r['message']),
    [
      'would be denied: spec.validating[0].url: must be https',
      'would be patched: checksum missing',
      'spec.replicas: ignored',
      'could not be audited: item 3 of the list: no metadata',
      'a write now would be admitted unchanged',
    ],
  )
  t.match(results[1], {
    properties: { outcome: 'patched', operation: 'add', path: '/metadata/annotations/x' },
  })
  for (const result of results) {
    t.equal(result['source'], 'mcp-admission')
    t.same(result['timestamp'], { seconds: NOW.getTime() / 1000, nanos: 0 })
    t.match(result['properties'], { resultID: /^[0-9a-f]{32}$/ })
    t.equal(result['rule'], result['policy'], 'rule names the rule too (no sub-rules)')
  }
  t.same(report!['summary'], { pass: 1, fail: 2, warn: 1, error: 1, skip: 0 })
})

t.test('the output has no YAML anchors or aliases', async (t) => {
  // Two violations of one object: the same subject and timestamp in two results.
  const text = reportText([denied('d', ['a: x', 'b: y']), clean('c'), clean('e')])
  let anchors = 0
  let aliases = 0
  for (const document of parseAllDocuments(text))
    visit(document, {
      Alias() {
        aliases++
      },
      Node(_key, node) {
        if (node.anchor !== undefined) anchors++
      },
    })
  t.equal(anchors, 0)
  t.equal(aliases, 0)
  t.notMatch(text, /(^|[\s:-])[&*][A-Za-z0-9]/m, 'no & or * marks in the text')
})

t.test('a result keeps its id from one audit to the next', async (t) => {
  const ids = (findings: AuditFinding[], options: Partial<ReportOptions> = {}) =>
    (reportsOf(findings, options)[0]!['results'] as { properties: { resultID: string } }[]).map(
      (r) => r.properties.resultID,
    )
  const first = ids([denied('d', ['a: x', 'b: y']), clean('c')])
  t.equal(new Set(first).size, 3, 'each result its own id')
  // A later audit: another time, another resourceVersion, the findings in another order.
  const later = reportsOf([clean('c'), { ...denied('d', ['a: x', 'b: y']) }], {
    now: new Date('2026-12-01T12:00:00Z'),
  })
  const again = (later[0]!['results'] as { properties: { resultID: string } }[]).map(
    (r) => r.properties.resultID,
  )
  t.same(new Set(again), new Set(first))
  const moved = denied('d', ['a: x', 'b: y'])
  const rewritten = { ...moved, subject: { ...moved.subject, resourceVersion: '8' } }
  t.same(ids([rewritten, clean('c')]), first, 'a new resourceVersion keeps the ids')
  // What makes it another result changes the id.
  const recreated = { ...moved, subject: { ...moved.subject, uid: 'other' } }
  t.not(ids([recreated])[0], first[0], 'another object under the same name')
  t.not(ids([denied('d', ['a: z'])])[0], first[0], 'another message')
  t.not(ids([denied('d', ['a: x'])], { clusterName: 'prod' })[0], first[0], 'another cluster')
})

t.test('--cluster-name: a label on the Report and a property of each result', async (t) => {
  const [report] = reportsOf([denied('d'), clean('c')], { clusterName: 'prod-eu' })
  t.equal(report!['metadata'].labels[CLUSTER_LABEL], 'prod-eu')
  t.equal(report!['metadata'].labels['app.kubernetes.io/managed-by'], 'mcp-admission')
  for (const result of report!['results'] as { properties: Record<string, string> }[])
    t.equal(result.properties['cluster'], 'prod-eu')
  const [without] = reportsOf([denied('d')])
  t.notOk(CLUSTER_LABEL in without!['metadata'].labels)
  t.notOk('cluster' in without!['results'][0].properties)
})

t.test('-o policyreport: the same results as a wgpolicyk8s.io PolicyReport', async (t) => {
  const findings = [denied('d'), clean('c')]
  const [report] = reportsOf(findings, { api: 'policyreport' })
  const [openReport] = reportsOf(findings)
  t.same(Object.keys(report!).sort(), ['apiVersion', 'kind', 'metadata', 'results', 'summary'])
  t.equal(report!['apiVersion'], 'wgpolicyk8s.io/v1alpha2')
  t.equal(report!['kind'], 'PolicyReport')
  t.same(report!['metadata'], openReport!['metadata'])
  t.same(report!['results'], openReport!['results'])
  t.same(report!['summary'], openReport!['summary'])
  t.equal(openReport!['source'], 'mcp-admission')
})

t.test('passes are listed while the Report has room; the rest counted exactly', async (t) => {
  const count = 2000
  const findings = [...Array.from({ length: count }, (_, i) => clean(`clean-${i}`)), denied('late')]
  const reports = reportsOf(findings)
  t.equal(reports.length, 1, 'passes never make a Report of their own')
  const [report] = reports
  const results = report!['results'] as Record<string, any>[]
  t.equal(results[0]!['result'], 'fail', 'a failure found last is listed before every pass')
  const listed = results.filter((r) => r['result'] === 'pass').length
  t.ok(listed > 0 && listed < count, `${listed} passes listed`)
  t.ok(results.reduce((sum, r) => sum + goJsonBytes(r), 0) <= MAX_RESULT_BYTES)
  t.same(report!['summary'], { pass: count, fail: 1, warn: 0, error: 0, skip: 0 })
  t.equal(report!['metadata'].annotations[UNLISTED_PASSES_ANNOTATION], String(count - listed))
})

t.test('split Reports: each summary counts its own results; passes on the last', async (t) => {
  const long = 'x'.repeat(10_000)
  const findings = [
    ...Array.from({ length: 40 }, (_, i) => denied(`d-${i}`, [`spec.a: ${long}`])),
    clean('c1'),
    clean('c2'),
  ]
  const reports = reportsOf(findings)
  t.equal(reports.length, 3)
  const fails = reports.map((report) => report['summary'].fail as number)
  t.same(
    fails,
    reports.map((report) => report['results'].filter((r: any) => r.result === 'fail').length),
  )
  t.equal(
    fails.reduce((a, b) => a + b, 0),
    40,
    'every failure in some Report',
  )
  t.same(
    reports.map((report) => report['summary'].pass),
    [0, 0, 2],
  )
  t.same(
    reports
      .at(-1)!
      ['results'].slice(-2)
      .map((r: any) => r.resources[0].name),
    ['c1', 'c2'],
  )
  t.ok(reports.every((report) => report['metadata'].annotations === undefined))
})

t.test('a clean object no rule judged passes under the tool name, without severity', async (t) => {
  const unjudged: AuditFinding = { ...clean('c'), rule: undefined }
  const [result] = reportsOf([unjudged])[0]!['results'] as Record<string, unknown>[]
  t.match(result, { policy: 'mcp-admission', result: 'pass', category: 'ToolHive' })
  t.notOk('severity' in result!)
})
