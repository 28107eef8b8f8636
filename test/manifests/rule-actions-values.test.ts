/**
 * The chart's `ruleActions` value against the rule table, without helm: values.yaml lists every
 * rule with its default and what it accepts, and values.schema.json accepts exactly those rules
 * and, for each, those actions (checked with ajv as helm checks it: JSON Schema draft-07). The
 * e2e chart test renders the value with helm.
 */

import { readFile } from 'node:fs/promises'
import { Ajv } from 'ajv'
import t from 'tap'
import { parse } from 'yaml'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import type { RuleEntry } from '../../src/policy/rules.ts'
import { MANIFESTS_DIR } from './generate.ts'
import { ruleActionsSection } from './rule-actions-values.ts'
import { VALUES, VALUES_SCHEMA } from './values-sections.ts'

const RULES: readonly RuleEntry[] = RULE_TABLE
const valuesText = await readFile(`${MANIFESTS_DIR}/${VALUES}`, 'utf8')
const values = parse(valuesText) as Record<string, unknown>
const schema = JSON.parse(await readFile(`${MANIFESTS_DIR}/${VALUES_SCHEMA}`, 'utf8')) as object
const validate = new Ajv({ allErrors: true }).compile(schema)

/** Whether the chart's defaults with `ruleActions` set to `ruleActions` pass the schema. */
const accepts = (ruleActions: unknown) => validate({ ...values, ruleActions })

t.test(
  'values.yaml: no rule set by default, and each rule listed as the table has it',
  async (t) => {
    t.same(values['ruleActions'], {})
    const rows = valuesText
      .split('\n')
      .filter((line) => /^# {3}\S/.test(line))
      .map((line) => line.slice(4).split(/ {2,}/))
    t.same(rows, [
      ['rule', 'default', 'accepts'],
      ['runconfig-content-checksum', 'validationActions', 'Deny, Warn, Audit'],
      ['proxy-deployment', 'validationActions', 'Deny, Warn, Audit'],
      ['stdio-scale', 'validationActions', 'Deny, Warn, Audit'],
      ['webhook-config', 'validationActions', 'Deny, Warn, Audit'],
      ['webhook-config-in-use', 'validationActions', 'Deny, Warn, Audit'],
      ['composite-tool-definition', 'validationActions', 'Deny, Warn, Audit'],
      ['delete-guard', '[Warn, Audit]', 'Deny, Warn, Audit'],
      ['workload', '[Warn]', 'Warn, Audit'],
    ])
  },
)

t.test('the schema accepts each rule of the table with the actions it allows', async (t) => {
  t.ok(validate(values), 'the defaults')
  for (const rule of RULES)
    for (const action of rule.actions.allowed)
      t.ok(accepts({ [rule.name]: [action] }), `${rule.name}: [${action}]`)
  t.ok(accepts({ 'delete-guard': ['Deny', 'Audit'], workload: ['Warn', 'Audit'] }))
})

t.test('the schema refuses what the service would refuse at start-up', async (t) => {
  const refused: [string, unknown][] = [
    ['a rule not in the table', { 'delte-guard': ['Deny'] }],
    ['Deny on a rule that only warns', { workload: ['Deny'] }],
    ['Deny with Warn', { 'delete-guard': ['Deny', 'Warn'] }],
    ['an action twice', { 'delete-guard': ['Audit', 'Audit'] }],
    ['no action', { 'delete-guard': [] }],
    ['an unknown action', { 'delete-guard': ['Block'] }],
    ['a list written as text', { 'delete-guard': 'Deny' }],
  ]
  for (const [name, ruleActions] of refused) t.notOk(accepts(ruleActions), name)
})

t.test('another table: its rules, defaults and allowed actions', async (t) => {
  const table: readonly RuleEntry[] = [
    { ...RULES[0]!, name: 'audits', actions: { default: ['Audit'], allowed: ['Audit'] } },
  ]
  t.same(ruleActionsSection(table).slice(-4), [
    '#   rule    default  accepts',
    '#   audits  [Audit]  Audit',
    '# `{}` renders no flag.',
    'ruleActions: {}',
  ])
})
