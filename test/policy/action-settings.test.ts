// The text of the validation-action settings (src/policy/action-settings.ts): the global list
// and the per-rule lists, refused with the reason where the API server or the rule table would.
import t from 'tap'
import { parseRuleActions, parseValidationActions } from '../../src/policy/action-settings.ts'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import type { RuleEntry } from '../../src/policy/rules.ts'

const RULE_NAMES = RULE_TABLE.map((rule) => rule.name).join(', ')

t.test('validation actions are parsed as the API server reads a policy binding', async (t) => {
  for (const [text, actions] of [
    ['Deny', ['Deny']],
    ['Warn', ['Warn']],
    ['Audit', ['Audit']],
    ['Deny,Audit', ['Deny', 'Audit']],
    ['Audit, Warn', ['Audit', 'Warn']],
  ] as const)
    t.same(parseValidationActions(text), { actions }, text)
  t.same(parseValidationActions('Deny,Warn'), {
    problem:
      'Deny and Warn cannot be combined (a denial already returns its violations to the client); use Deny, Deny,Audit, Warn or Warn,Audit',
  })
  t.same(parseValidationActions('Audit,Audit'), { problem: 'names Audit twice' })
  for (const text of ['deny', '', 'Deny,', 'Block'])
    t.same(
      parseValidationActions(text),
      {
        problem: `must be Deny, Warn, Audit or a comma-separated combination, got ${JSON.stringify(text)}`,
      },
      JSON.stringify(text),
    )
})

t.test('rule actions: rule=actions items, ";"-separated, spaces allowed', async (t) => {
  t.same(parseRuleActions('delete-guard=Deny,Audit'), {
    ruleActions: new Map([['delete-guard', ['Deny', 'Audit']]]),
  })
  t.same(parseRuleActions(' delete-guard = Deny ; workload=Warn,Audit;webhook-config=Warn'), {
    ruleActions: new Map([
      ['delete-guard', ['Deny']],
      ['workload', ['Warn', 'Audit']],
      ['webhook-config', ['Warn']],
    ]),
  })
  for (const empty of ['', ' '])
    t.same(parseRuleActions(empty), { ruleActions: new Map() }, 'empty text names no rule')
})

t.test('rule actions: each problem named by its rule, all of them at once', async (t) => {
  const problems = (text: string) => {
    const parsed = parseRuleActions(text)
    return 'problems' in parsed ? parsed.problems : []
  }
  t.same(problems('delte-guard=Deny'), [
    `no rule is named "delte-guard"; the rules are ${RULE_NAMES}`,
  ])
  t.same(problems('workload=Deny'), [
    'workload: Deny not allowed for this rule, which never refuses a write; it allows Warn, Audit',
  ])
  t.same(problems('delete-guard=Deny,Warn'), [
    'delete-guard: Deny and Warn cannot be combined (a denial already returns its violations to the client); use Deny, Deny,Audit, Warn or Warn,Audit',
  ])
  t.same(problems('delete-guard=Audit,Audit'), ['delete-guard: names Audit twice'])
  t.same(problems('delete-guard='), [
    'delete-guard: must be Deny, Warn, Audit or a comma-separated combination, got ""',
  ])
  t.same(problems('delete-guard=Deny;delete-guard=Audit'), ['names delete-guard twice'])
  for (const item of ['delete-guard', '=Deny', ''])
    t.same(
      problems(`workload=Warn;${item}`),
      [
        `must be rule=actions items separated by ";" (delete-guard=Deny,Audit;workload=Warn), got ${JSON.stringify(item)}`,
      ],
      JSON.stringify(item),
    )
  t.same(problems('workload=Deny;nope=Warn;webhook-config=Warn'), [
    'workload: Deny not allowed for this rule, which never refuses a write; it allows Warn, Audit',
    `no rule is named "nope"; the rules are ${RULE_NAMES}`,
  ])
})

t.test('rule actions are read against the rule table given', async (t) => {
  const table: readonly RuleEntry[] = [
    { ...RULE_TABLE[0], name: 'only-audits', actions: { default: ['Audit'], allowed: ['Audit'] } },
  ]
  t.same(parseRuleActions('only-audits=Audit', table), {
    ruleActions: new Map([['only-audits', ['Audit']]]),
  })
  t.same(parseRuleActions('only-audits=Warn;delete-guard=Deny', table), {
    problems: [
      'only-audits: Warn not allowed for this rule, which never refuses a write; it allows Audit',
      'no rule is named "delete-guard"; the rules are only-audits',
    ],
  })
})
