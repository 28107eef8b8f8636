/**
 * The kustomize files in manifests/ are generated from the Helm chart (`npm run manifests`,
 * test/manifests/generate.ts), checked here without helm by their headers: every file but the
 * chart's carries one, its digest of the rest of the file still holds (no edit by hand), and its
 * digest of the chart is the chart's now (no chart change left unrendered). test/e2e/chart.test.ts
 * renders the chart with a real helm and compares whole files. The chart's own generated parts
 * (chart-sources.ts: webhooks.yaml and the ToolHive rules and RBAC whole, the webhooks sections
 * of values.yaml and values.schema.json) are compared with what the tables generate now, which
 * needs no helm either.
 */

import t from 'tap'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import { WEBHOOK_TABLE } from '../../src/policy/webhooks.ts'
import type { WebhookId } from '../../src/policy/webhooks.ts'
import { CHART_SOURCES, committedText, sourceState, sourceStates } from './chart-sources.ts'
import { CHART, COMMAND, chartDigest, committedFiles, headerProblem } from './generate.ts'
import { KINDS_TEMPLATE, kindsTemplate } from './kinds-template.ts'
import { withRuleActionsSchema, withRuleActionsValues } from './rule-actions-values.ts'
import {
  VALUES,
  VALUES_SCHEMA,
  WEBHOOKS_TEMPLATE,
  webhooksTemplate,
  withWebhookSchema,
  withWebhookValues,
} from './webhooks-template.ts'

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

t.test("the chart's generated parts are what the tables generate now", async (t) => {
  const states = await sourceStates()
  t.same(
    states.map(({ source }) => source.path),
    [KINDS_TEMPLATE, WEBHOOKS_TEMPLATE, VALUES, VALUES_SCHEMA],
  )
  for (const { source, problem } of states) t.equal(problem, undefined, `manifests/${source.path}`)
})

/** The state of the chart source at `path` were its committed text `edit`ed. */
async function edited(path: string, edit: (text: string) => string) {
  const source = CHART_SOURCES.find((source) => source.path === path)!
  const text = await committedText(path)
  if (text === undefined) throw new Error(`no manifests/${path}`)
  t.not(edit(text), text, `the edit of manifests/${path} changes it`)
  return sourceState(source, edit(text))
}

t.test('a hand edit of a generated template is reported with the command', async (t) => {
  for (const [path, edit] of [
    [KINDS_TEMPLATE, (text: string) => text.replace('[v1beta1, v1alpha1]', '[v1alpha1]')],
    [
      WEBHOOKS_TEMPLATE,
      (text: string) => text.replace('"webhook" "validate"', '"webhook" "mutate"'),
    ],
    [WEBHOOKS_TEMPLATE, (text: string) => text.replace('[CREATE, UPDATE]', '[CREATE]')],
  ] as const) {
    const { problem, generated } = await edited(path, edit)
    t.equal(
      problem,
      `manifests/${path} differs from what is generated (edited by hand, or a table changed since): change ${CHART_SOURCES.find((source) => source.path === path)?.tables}, not the file, and run \`${COMMAND}\``,
    )
    t.equal(generated, await committedText(path), 'and the command writes it back')
  }
  const headless = await edited(WEBHOOKS_TEMPLATE, (text) => text.slice(text.indexOf('*/')))
  t.match(headless.problem, `manifests/${WEBHOOKS_TEMPLATE} has no generated header`)
  const missing = await sourceState(CHART_SOURCES[1]!, undefined)
  t.equal(missing.problem, `manifests/${WEBHOOKS_TEMPLATE} is missing: run \`${COMMAND}\``)
})

t.test('a table change makes the generated templates stale', async (t) => {
  const generated = kindsTemplate()
  // A version added to the kind table, an operation added to a rule, a webhook renamed.
  const withVersion = TOOLHIVE_KIND_TABLE.map((entry) => ({
    ...entry,
    versions: ['v1', ...entry.versions],
  }))
  t.not(kindsTemplate(withVersion), generated)
  t.not(webhooksTemplate(undefined, undefined, withVersion), webhooksTemplate())
  const withDelete = RULE_TABLE.map((rule) =>
    rule.name === 'proxy-deployment'
      ? { ...rule, operations: ['CREATE', 'UPDATE', 'DELETE'] as const }
      : rule,
  )
  t.match(
    webhooksTemplate(undefined, withDelete),
    /resources: \[deployments\]\n *operations: \[CREATE, UPDATE, DELETE\]/,
  )
  const renamed = WEBHOOK_TABLE.map((webhook) => ({ ...webhook, name: `x-${webhook.name}` }))
  t.not(webhooksTemplate(renamed), webhooksTemplate())
})

t.test(
  "the values files' generated sections: a hand edit is reported, the rest is not",
  async (t) => {
    const valuesProblem = `manifests/${VALUES}, the \`webhooks:\` and \`ruleActions:\` keys, their comments and entries, differs from what is generated (edited by hand, or a table changed since): change the webhook and rule tables (src/policy/webhooks.ts, src/policy/rules.ts), not the file, and run \`${COMMAND}\``
    for (const edit of [
      (text: string) => text.replace(/( {2}workloads:\n {4}failurePolicy: )Ignore/, '$1Fail'),
      (text: string) => text.replace('ruleActions: {}', 'ruleActions: {delete-guard: [Deny]}'),
      (text: string) => text.replace('#   workload  ', '#   workloads '),
      (text: string) =>
        text.replace(/( {2}runConfigs:\n {4}failurePolicy: Fail\n {4}timeoutSeconds: )5/, '$17'),
      (text: string) => text.replace('  # -- Proxy Deployments', '  # -- The proxy Deployments'),
      (text: string) =>
        text.replace('\nwebhooks:\n', '\nwebhooks:\n  extra:\n    failurePolicy: Fail\n'),
    ]) {
      const { problem, generated } = await edited(VALUES, edit)
      t.equal(problem, valuesProblem)
      t.equal(generated, await committedText(VALUES), 'and the command writes it back in place')
    }
    t.equal(
      (await edited(VALUES, (text) => text.replace('replicas: 2', 'replicas: 3'))).problem,
      undefined,
      'the rest is hand-written',
    )
    t.match(
      (await edited(VALUES, (text) => text.replace('\nwebhooks:', '\nhooks:'))).problem,
      'has 0 top-level `webhooks:` keys, not one',
    )

    const schemaProblem = `manifests/${VALUES_SCHEMA}, the "webhooks" and "ruleActions" properties, differs from what is generated`
    for (const edit of [
      (text: string) => text.replace(/\n\s*"deploymentsScale": \{[^}]*\},/, ''),
      (text: string) =>
        text.replace(
          '"workloads": { "$ref": "#/definitions/webhookFailingOpen" }',
          '"workloads": { "$ref": "#/definitions/webhook" }',
        ),
      (text: string) => text.replace('{ "items": { "enum": ["Warn", "Audit"] } }', '{}'),
      (text: string) =>
        text.replace(
          '"delete-guard": { "$ref": "#/definitions/validationActions" },',
          '"delete-guard": { "$ref": "#/definitions/validationActions" },\n"extra": {},',
        ),
    ]) {
      const { problem, generated } = await edited(VALUES_SCHEMA, edit)
      t.match(problem, schemaProblem)
      t.equal(
        generated,
        await committedText(VALUES_SCHEMA),
        'and the command writes it back in place',
      )
    }
    t.equal(
      (
        await edited(VALUES_SCHEMA, (text) =>
          text.replace(
            '"replicas": { "type": "integer", "minimum": 1 }',
            '"replicas": { "type": "integer", "minimum": 2 }',
          ),
        )
      ).problem,
      undefined,
      'the rest is hand-written',
    )
    // A table change makes both stale: a webhook's default timeout, a webhook added.
    const values = (await committedText(VALUES))!
    const schema = (await committedText(VALUES_SCHEMA))!
    const slower = WEBHOOK_TABLE.map((webhook) => ({ ...webhook, timeoutSeconds: 7 }))
    t.not(await withWebhookValues(values, slower), values)
    const more = [...WEBHOOK_TABLE, { ...WEBHOOK_TABLE[0], id: 'extra' as WebhookId }]
    t.match(await withWebhookSchema(schema, more), '"extra": { "$ref": "#/definitions/webhook" }')
    // A rule added, or one narrowed to warnings only.
    const rules = [...RULE_TABLE, { ...RULE_TABLE[0], name: 'extra-rule' }]
    t.match(await withRuleActionsValues(values, rules), /^# {3}extra-rule {2}/m)
    t.match(
      await withRuleActionsSchema(schema, rules),
      '"extra-rule": { "$ref": "#/definitions/validationActions" }',
    )
    const warnsOnly = RULE_TABLE.map((rule) =>
      rule.name === 'delete-guard'
        ? { ...rule, actions: { default: ['Warn'], allowed: ['Warn', 'Audit'] } as const }
        : rule,
    )
    t.match(
      await withRuleActionsSchema(schema, warnsOnly),
      /"delete-guard": \{\s*"allOf": \[\s*\{ "\$ref": "#\/definitions\/validationActions" \},\s*\{ "items": \{ "enum": \["Warn", "Audit"\] \} \}/,
    )
  },
)
