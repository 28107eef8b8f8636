/**
 * `audit -o openreports` keeps each Report within what `kubectl apply` can store: its copy of the
 * object goes into an annotation, and the API server holds an object's annotations to 262,144
 * bytes, counted in the bytes of kubectl's JSON (UTF-8, `<`, `>`, `&` escaped), not characters.
 * test/e2e/openreports-size.test.ts applies such a Report to a real API server.
 */

import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { MAX_RESULT_BYTES, goJsonBytes } from '../../src/cli/openreports.ts'
import { warnedReport } from '../helpers/reports.ts'

/** The API server's bound on all of an object's annotations together. */
const ANNOTATIONS_BYTES = 262_144

t.test('bytes as Go encodes JSON', async (t) => {
  t.equal(goJsonBytes('a'), 3)
  t.equal(goJsonBytes('漢'), 5, 'three bytes in UTF-8, one UTF-16 unit')
  t.equal(goJsonBytes('😀'), 6, 'four bytes, two units')
  t.equal(goJsonBytes('<a&b>'), 2 + 2 + 3 * 6, 'HTML characters escaped as \\u003c')
  t.equal(goJsonBytes('\u2028'), 8, 'line and paragraph separators escaped too')
  t.equal(goJsonBytes({ k: 'é' }), Buffer.byteLength('{"k":"é"}'))
})

function reportsOf(text: string, count: number): Record<string, any>[] {
  return parseAllDocuments(warnedReport(text, count)).map(
    (document) => document.toJS() as Record<string, any>,
  )
}

for (const [what, text] of [
  ['multi-byte text', '漢'.repeat(1000)],
  ['text Go escapes', '<&>'.repeat(300)],
  ['four-byte characters', '😀'.repeat(500)],
] as const) {
  t.test(`Reports of ${what} stay within the annotation bound, split and numbered`, async (t) => {
    const reports = reportsOf(text, 400)
    t.ok(reports.length > 1, `${reports.length} Reports`)
    t.same(
      reports.map((report) => report['metadata'].name),
      reports.map((_, i) => (i === 0 ? 'mcp-admission' : `mcp-admission-${i + 1}`)),
    )
    for (const report of reports) {
      // The whole object as kubectl would store it, beside its own annotation key.
      const stored = goJsonBytes(report) + 'kubectl.kubernetes.io/last-applied-configuration'.length
      t.ok(stored <= ANNOTATIONS_BYTES, `${stored} bytes`)
      t.ok(
        report['results'].reduce((sum: number, r: unknown) => sum + goJsonBytes(r), 0) <=
          MAX_RESULT_BYTES,
      )
      t.equal(report['summary'].warn, report['results'].length, 'each counts what it lists')
      t.equal(report['metadata'].annotations, undefined, 'nothing left unlisted')
    }
    const names = reports.flatMap((report) =>
      report['results'].map((r: { resources: { name: string }[] }) => r.resources[0]!.name),
    )
    t.same(
      names,
      Array.from({ length: 400 }, (_, i) => `s-${i}`),
      'every result listed once, in order',
    )
  })
}
