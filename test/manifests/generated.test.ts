/**
 * The kustomize files in manifests/ are generated from the Helm chart (`npm run manifests`,
 * test/manifests/generate.ts), checked here without helm by their headers: every file but the
 * chart's carries one, its digest of the rest of the file still holds (no edit by hand), and its
 * digest of the chart is the chart's now (no chart change left unrendered). test/e2e/chart.test.ts
 * renders the chart with a real helm and compares whole files. The chart's own generated file,
 * the ToolHive rules and RBAC (kinds-template.ts), is compared whole with what the kind table
 * generates now, which needs no helm either.
 */

import t from 'tap'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import {
  CHART,
  COMMAND,
  chartDigest,
  committedFiles,
  committedKindsTemplate,
  headerProblem,
} from './generate.ts'
import { KINDS_TEMPLATE, kindsTemplate, kindsTemplateProblem } from './kinds-template.ts'

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

t.test("the chart's ToolHive rules and RBAC are what the kind table generates now", async (t) => {
  const committed = await committedKindsTemplate()
  t.equal(
    kindsTemplateProblem(committed, kindsTemplate()),
    undefined,
    `manifests/${KINDS_TEMPLATE}`,
  )
})

t.test('the kinds template check notices a hand edit, a changed table and no file', async (t) => {
  const generated = kindsTemplate()
  t.match(
    kindsTemplateProblem(generated.replace('[v1beta1, v1alpha1]', '[v1alpha1]'), generated),
    `manifests/${KINDS_TEMPLATE} differs from what the kind table generates`,
  )
  // A version added to the table changes the file: the committed one is then stale.
  const withVersion = TOOLHIVE_KIND_TABLE.map((entry) => ({
    ...entry,
    versions: ['v1', ...entry.versions],
  }))
  t.match(
    kindsTemplateProblem(generated, kindsTemplate(withVersion)),
    `manifests/${KINDS_TEMPLATE} differs from what the kind table generates`,
  )
  t.match(
    kindsTemplateProblem(generated.slice(generated.indexOf('*/')), generated),
    'no generated header',
  )
  t.match(kindsTemplateProblem(undefined, generated), 'is missing: run `npm run manifests`')
})
