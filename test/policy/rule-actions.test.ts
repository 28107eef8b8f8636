// What each rule's violations become under the settings (src/policy/rule-actions.ts): the one
// precedence the responses, the live reads, the metrics and the chart follow.
import t from 'tap'
import { actionsOf } from '../../src/policy/rule-actions.ts'
import type { ActionSettings } from '../../src/policy/rule-actions.ts'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import type { RuleEntry, ValidationAction } from '../../src/policy/rules.ts'

const RULES: readonly RuleEntry[] = RULE_TABLE
const rule = (name: string): RuleEntry => {
  const found = RULES.find((entry) => entry.name === name)
  if (found === undefined) throw new Error(`no rule ${name} in the table`)
  return found
}

/** Every list `--validation-actions` accepts. */
const GLOBAL_SETTINGS: readonly (readonly ValidationAction[])[] = [
  ['Deny'],
  ['Deny', 'Audit'],
  ['Warn'],
  ['Audit'],
  ['Warn', 'Audit'],
]

const only = (validationActions: readonly ValidationAction[]): ActionSettings => ({
  validationActions,
})

t.test('a rule that denies by default follows --validation-actions', async (t) => {
  for (const global of GLOBAL_SETTINGS) {
    t.same(actionsOf(rule('webhook-config'), only(global)), global, global.join(','))
    t.same(actionsOf(rule('webhook-config-in-use'), only(global)), global, global.join(','))
  }
})

t.test('a rule that does not deny by default keeps its default, whatever the global', async (t) => {
  for (const global of GLOBAL_SETTINGS) {
    t.same(actionsOf(rule('delete-guard'), only(global)), ['Warn', 'Audit'], global.join(','))
    t.same(actionsOf(rule('workload'), only(global)), ['Warn'], global.join(','))
  }
})

t.test('a setting for the rule wins over the global setting, either way', async (t) => {
  const deleteGuardDenies: ActionSettings = {
    validationActions: ['Warn', 'Audit'],
    ruleActions: new Map([['delete-guard', ['Deny', 'Audit']]]),
  }
  t.same(actionsOf(rule('delete-guard'), deleteGuardDenies), ['Deny', 'Audit'])
  t.same(
    actionsOf(rule('webhook-config'), deleteGuardDenies),
    ['Warn', 'Audit'],
    'the other rules are left to the precedence',
  )
  const configWarns: ActionSettings = {
    validationActions: ['Deny'],
    ruleActions: new Map([['webhook-config', ['Warn']]]),
  }
  t.same(actionsOf(rule('webhook-config'), configWarns), ['Warn'])
  t.same(actionsOf(rule('webhook-config-in-use'), configWarns), ['Deny'])
})

t.test('while the global setting lacks Deny, only a rule a setting names denies', async (t) => {
  for (const global of GLOBAL_SETTINGS.filter((actions) => !actions.includes('Deny')))
    for (const entry of RULES)
      t.notOk(
        actionsOf(entry, only(global)).includes('Deny'),
        `${entry.name} under ${global.join(',')}`,
      )
})

t.test("with no setting of its own, a rule's actions are ones its entry allows", async (t) => {
  // So a warnings-only rule never denies, whatever --validation-actions says.
  for (const global of GLOBAL_SETTINGS)
    for (const entry of RULES)
      for (const action of actionsOf(entry, only(global)))
        t.ok(entry.actions.allowed.includes(action), `${entry.name} under ${global.join(',')}`)
})
