/**
 * `audit -o openreports` and `-o policyreport` as the API server takes them, each beside the CRD
 * its project ships (OpenReports' module, Kyverno's `config/crds/policyreport`): every field a
 * result can have (category, severity, properties, a cluster label, listed passes) applies with
 * kubectl's strict field validation (`--dry-run=server`), and so do the numbered Reports a large
 * namespace is split into. A PolicyReport with OpenReports' top-level `source` is refused: the
 * check is the CRD's, not a reading of our own YAML.
 */

import t from 'tap'
import { parseAllDocuments, stringify } from 'yaml'
import { REPORT_APIS } from '../../src/cli/openreports.ts'
import type { ReportApi } from '../../src/cli/openreports.ts'
import { mixedReport, warnedReport } from '../helpers/reports.ts'
import { startEnvironment } from './harness/environment.ts'
import { ensureOpenReportsCrds } from './harness/openreports.ts'
import { ensurePolicyReportCrds } from './harness/policyreports.ts'

const env = await startEnvironment(t, { service: false, webhooks: false })
await env.installCrds(await ensureOpenReportsCrds(), await ensurePolicyReportCrds())
const { kubectl } = env
const namespace = await env.namespace()
const dryRun = ['apply', '--dry-run=server', '--validate=strict', '-f', '-']

for (const api of Object.keys(REPORT_APIS) as ReportApi[]) {
  t.test(`-o ${api}: every kind of result, with a cluster name, applies`, async (t) => {
    const text = mixedReport(namespace, api, 'prod-eu')
    const applied = await kubectl(dryRun, text)
    t.equal(applied.code, 0, applied.stderr)
    t.match(applied.stdout, REPORT_APIS[api].kind.toLowerCase())
  })

  t.test(`-o ${api}: a namespace split into numbered reports applies whole`, async (t) => {
    const text = warnedReport('漢'.repeat(1000), 400, namespace, api)
    t.ok(parseAllDocuments(text).length > 1)
    const applied = await kubectl(dryRun, text)
    t.equal(applied.code, 0, applied.stderr)
    t.match(applied.stdout, /mcp-admission-2/)
  })
}

t.test('a PolicyReport with a top-level source is refused by the CRD', async (t) => {
  const [report] = parseAllDocuments(mixedReport(namespace, 'policyreport')).map(
    (document) => document.toJS() as Record<string, unknown>,
  )
  const refused = await kubectl(dryRun, stringify({ ...report, source: 'mcp-admission' }))
  t.not(refused.code, 0)
  t.match(refused.stderr, /unknown field "source"/)
})
