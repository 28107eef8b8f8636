/**
 * The kustomize files in manifests/ are generated from the Helm chart (`npm run manifests`,
 * test/manifests/generate.ts), checked here without helm by their headers: every file but the
 * chart's carries one, its digest of the rest of the file still holds (no edit by hand), and its
 * digest of the chart is the chart's now (no chart change left unrendered). test/e2e/chart.test.ts
 * renders the chart with a real helm and compares whole files.
 */

import t from 'tap'
import { CHART, COMMAND, chartDigest, committedFiles, headerProblem } from './generate.ts'

const chart = await chartDigest()
const files = await committedFiles()

t.test('every file of the kustomize install is generated from the chart as it is', async (t) => {
  t.ok(files.size >= 10, `the base, the components and the full install (${files.size} files)`)
  for (const [path, text] of files)
    t.equal(headerProblem(path, text, chart), undefined, `manifests/${path}`)
})

t.test('the header check notices a hand edit, a missing header and a changed chart', async (t) => {
  const [path, text] = [...files].find(([path]) => path === 'base/webhooks.yaml') ?? []
  if (path === undefined || text === undefined) throw new Error('no manifests/base/webhooks.yaml')
  t.match(
    headerProblem(path, text.replace('failurePolicy: Fail', 'failurePolicy: Ignore'), chart),
    `manifests/base/webhooks.yaml was edited after \`${COMMAND}\` wrote it: change the chart (manifests/${CHART}/templates/webhooks.yaml) and run \`${COMMAND}\``,
  )
  t.match(
    headerProblem(path, text.split('\n').slice(3).join('\n'), chart),
    `manifests/base/webhooks.yaml has no generated header`,
  )
  t.match(
    headerProblem(path, text, '0123456789abcdef'),
    `manifests/base/webhooks.yaml was generated from another version of the chart: run \`${COMMAND}\``,
  )
})
