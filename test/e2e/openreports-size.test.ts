/**
 * A Report `audit -o openreports` writes can be stored with `kubectl apply` however many bytes
 * its characters take: kubectl keeps a copy of the object in an annotation, and the API server
 * holds an object's annotations to 262,144 bytes. Applied (`--dry-run=server`, so the API server
 * validates the annotation) beside the OpenReports CRDs; the same results unbounded are refused,
 * which shows the bound is the API server's and not a guess.
 */

import t from 'tap'
import { parseAllDocuments, stringify } from 'yaml'
import { warnedReport } from '../helpers/reports.ts'
import { startEnvironment } from './harness/environment.ts'
import { ensureOpenReportsCrds } from './harness/openreports.ts'

const env = await startEnvironment(t, { service: false, webhooks: false })
await env.installCrds(await ensureOpenReportsCrds())
const { kubectl } = env
const namespace = await env.namespace()
const dryRun = ['apply', '--dry-run=server', '-f', '-']

for (const [what, text] of [
  ['three-byte characters', '漢'.repeat(1000)],
  ['characters Go escapes', '<&>'.repeat(300)],
] as const) {
  t.test(`a Report of ${what} applies`, async (t) => {
    const report = warnedReport(text, 400, namespace)
    const applied = await kubectl(dryRun, report)
    t.equal(applied.code, 0, applied.stderr)
    // Twice as many of the same results are more than the API server stores.
    const whole = parseAllDocuments(report)[0]!.toJS() as Record<string, any>
    whole['results'] = [...whole['results'], ...whole['results']]
    const refused = await kubectl(dryRun, stringify(whole, { aliasDuplicateObjects: false }))
    t.not(refused.code, 0)
    t.match(refused.stderr, /metadata\.annotations: Too long/)
  })
}
