/**
 * The rule table (src/policy/rules.ts) against itself, the webhook table and the kind table: what
 * the chart's webhooks and the routes are built from has to be whole. Every rule is named once, in
 * kebab case (its name is public), is served by a webhook of the webhook table, is sent at least
 * one operation, matches something (ToolHive kinds of the kind table, or other resources) and has
 * default actions among its allowed ones; every webhook serves at least one rule (a webhook sent
 * nothing could not be written). The checks are run on broken tables too, so none is vacuous.
 */

import t from 'tap'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import type { ToolHiveKind, ToolHiveKindEntry } from '../../src/policy/kinds.ts'
import {
  RULE_TABLE,
  SEVERITIES,
  VALIDATION_ACTIONS,
  matchesToolHiveKinds,
} from '../../src/policy/rules.ts'
import type { RuleEntry } from '../../src/policy/rules.ts'
import { WEBHOOK_TABLE } from '../../src/policy/webhooks.ts'
import type { WebhookEntry, WebhookId } from '../../src/policy/webhooks.ts'

/** What is wrong with the tables, one line each; empty when nothing is. */
function tableProblems(
  rules: readonly RuleEntry[],
  webhooks: readonly WebhookEntry[],
  kinds: readonly ToolHiveKindEntry[],
): string[] {
  const problems: string[] = []
  const names = new Set<string>()
  for (const rule of rules) {
    const { name } = rule
    if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name)) problems.push(`${name}: not kebab-case`)
    if (names.has(name)) problems.push(`${name}: named twice`)
    names.add(name)
    if (!webhooks.some((webhook) => webhook.id === rule.webhook))
      problems.push(`${name}: webhook ${rule.webhook} is not in the webhook table`)
    if (rule.operations.length === 0) problems.push(`${name}: no operation`)
    if (new Set(rule.operations).size !== rule.operations.length)
      problems.push(`${name}: an operation twice`)
    if (rule.matches.length === 0) problems.push(`${name}: matches nothing`)
    if (matchesToolHiveKinds(rule.matches))
      for (const kind of rule.matches)
        if (!kinds.some((entry) => entry.kind === kind))
          problems.push(`${name}: ${kind} is not in the kind table`)
    if (!SEVERITIES.includes(rule.severity)) problems.push(`${name}: severity ${rule.severity}`)
    const { allowed, default: actions } = rule.actions
    if (allowed.length === 0) problems.push(`${name}: no allowed action`)
    if (actions.length === 0) problems.push(`${name}: no default action`)
    for (const action of [...allowed, ...actions])
      if (!VALIDATION_ACTIONS.includes(action)) problems.push(`${name}: action ${action}`)
    for (const action of actions)
      if (!allowed.includes(action)) problems.push(`${name}: default ${action} is not allowed`)
  }
  for (const webhook of webhooks)
    if (!rules.some((rule) => rule.webhook === webhook.id))
      problems.push(`webhook ${webhook.id} serves no rule`)
  return problems
}

t.test('the rule, webhook and kind tables agree', async (t) => {
  t.same(tableProblems(RULE_TABLE, WEBHOOK_TABLE, TOOLHIVE_KIND_TABLE), [])
  t.equal(new Set(WEBHOOK_TABLE.map((webhook) => webhook.id)).size, WEBHOOK_TABLE.length)
  t.equal(new Set(WEBHOOK_TABLE.map((webhook) => webhook.name)).size, WEBHOOK_TABLE.length)
})

t.test('the checks notice each broken table', async (t) => {
  const [first, ...rest] = RULE_TABLE as readonly RuleEntry[]
  const broken = (changes: Partial<RuleEntry>) =>
    tableProblems([{ ...first!, ...changes }, ...rest], WEBHOOK_TABLE, TOOLHIVE_KIND_TABLE)
  t.same(broken({ name: 'RunConfig_checksum' }), ['RunConfig_checksum: not kebab-case'])
  t.same(broken({ name: rest[0]!.name }), [`${rest[0]!.name}: named twice`])
  t.same(broken({ webhook: 'nowhere' as WebhookId }), [
    `${first!.name}: webhook nowhere is not in the webhook table`,
    `webhook ${first!.webhook} serves no rule`,
  ])
  t.same(broken({ operations: [] }), [`${first!.name}: no operation`])
  t.same(broken({ operations: ['CREATE', 'CREATE'] }), [`${first!.name}: an operation twice`])
  t.same(broken({ matches: [] }), [`${first!.name}: matches nothing`])
  t.same(broken({ matches: ['MCPGateway' as ToolHiveKind] }), [
    `${first!.name}: MCPGateway is not in the kind table`,
  ])
  t.same(broken({ actions: { default: [], allowed: ['Warn'] } }), [
    `${first!.name}: no default action`,
  ])
  t.same(broken({ actions: { default: ['Deny'], allowed: [] } }), [
    `${first!.name}: no allowed action`,
    `${first!.name}: default Deny is not allowed`,
  ])
  t.same(broken({ actions: { default: ['Deny'], allowed: ['Warn', 'Audit'] } }), [
    `${first!.name}: default Deny is not allowed`,
  ])
  // A webhook of the webhook table that no rule names.
  const extra = { ...WEBHOOK_TABLE[0], id: 'extra' as WebhookId }
  t.same(tableProblems(RULE_TABLE, [...WEBHOOK_TABLE, extra], TOOLHIVE_KIND_TABLE), [
    'webhook extra serves no rule',
  ])
})

t.test('matches are told apart: ToolHive kinds or other resources', async (t) => {
  const entry = (name: string) => RULE_TABLE.find((rule) => rule.name === name)!
  t.ok(matchesToolHiveKinds(entry('workload').matches))
  t.notOk(matchesToolHiveKinds(entry('stdio-scale').matches))
})
