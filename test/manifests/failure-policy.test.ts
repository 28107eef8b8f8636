/**
 * Which failurePolicy the chart gives each webhook (failure-policy.ts, which the chart's helper
 * mirrors; the e2e chart test holds helm's render to it): a webhook fails closed only while it
 * enforces and the table lets it.
 */

import t from 'tap'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import type { RuleEntry, ValidationAction } from '../../src/policy/rules.ts'
import { WEBHOOK_TABLE } from '../../src/policy/webhooks.ts'
import type { WebhookEntry, WebhookId } from '../../src/policy/webhooks.ts'
import { mayFailClosed, renderedFailurePolicy } from './failure-policy.ts'
import type { ChartSettings } from './failure-policy.ts'
import { webhooksSchema } from './webhooks-template.ts'

const RULES: readonly RuleEntry[] = RULE_TABLE
const WEBHOOKS: readonly WebhookEntry[] = WEBHOOK_TABLE

const settings = (
  validationActions: readonly ValidationAction[],
  ruleActions: Record<string, readonly ValidationAction[]> = {},
  mutationMode: ChartSettings['mutationMode'] = 'apply',
): ChartSettings => ({
  validationActions,
  ruleActions: new Map(Object.entries(ruleActions)),
  mutationMode,
})

/** Each webhook's rendered failurePolicy, configured as Fail wherever its values allow it. */
function policies(chart: ChartSettings, webhooks = WEBHOOKS, rules = RULES) {
  return Object.fromEntries(
    webhooks.map((webhook) => [
      webhook.id,
      renderedFailurePolicy(
        webhook,
        mayFailClosed(webhook, rules) ? 'Fail' : 'Ignore',
        chart,
        rules,
      ),
    ]),
  )
}

const ALL_FAIL = {
  deployments: 'Fail',
  deploymentsScale: 'Fail',
  runConfigs: 'Fail',
  webhookConfigs: 'Fail',
  compositeTools: 'Ignore',
  workloads: 'Ignore',
  deletes: 'Ignore',
} satisfies Record<WebhookId, 'Fail' | 'Ignore'>

t.test('by default every webhook that may fail closed does', async (t) => {
  t.same(policies(settings(['Deny'])), ALL_FAIL)
  t.same(policies(settings(['Deny', 'Audit'])), ALL_FAIL)
})

t.test(
  'the deletes, compositeTools and workloads webhooks never fail closed, whatever is set',
  async (t) => {
    for (const chart of [
      settings(['Deny'], { 'delete-guard': ['Deny'], 'webhook-config-in-use': ['Deny', 'Audit'] }),
      settings(['Warn'], { 'delete-guard': ['Deny'], workload: ['Warn', 'Audit'] }),
      settings(['Warn'], { 'composite-tool-definition': ['Deny'] }),
    ]) {
      t.equal(policies(chart)['deletes'], 'Ignore')
      t.equal(policies(chart)['compositeTools'], 'Ignore')
      t.equal(policies(chart)['workloads'], 'Ignore')
    }
  },
)

t.test('a validating webhook fails closed while one of its rules denies', async (t) => {
  t.equal(policies(settings(['Warn', 'Audit']))['webhookConfigs'], 'Ignore', 'watching')
  t.equal(
    policies(settings(['Warn', 'Audit'], { 'webhook-config': ['Deny'] }))['webhookConfigs'],
    'Fail',
    'watching, but its rule set to Deny',
  )
  t.equal(
    policies(settings(['Deny'], { 'webhook-config': ['Warn', 'Audit'] }))['webhookConfigs'],
    'Ignore',
    'denying, but its rule set to warn',
  )
  t.equal(
    renderedFailurePolicy(WEBHOOKS[3]!, 'Ignore', settings(['Deny']), RULES),
    'Ignore',
    'Ignore as configured stays Ignore',
  )
})

t.test('a mutating webhook fails closed while patches are applied', async (t) => {
  const observing = policies(settings(['Deny'], {}, 'observe'))
  t.same(
    [observing['deployments'], observing['deploymentsScale'], observing['runConfigs']],
    ['Ignore', 'Ignore', 'Ignore'],
  )
  t.equal(observing['webhookConfigs'], 'Fail', 'the validating ones follow their rules')
  // A mutating rule's own actions are about its refusals, not whether a patch may be skipped.
  t.equal(policies(settings(['Warn'], { 'proxy-deployment': ['Warn'] }))['deployments'], 'Fail')
})

t.test('another table: a deletes webhook allowed to fail closed follows its rules', async (t) => {
  const webhooks = WEBHOOKS.map((webhook) =>
    webhook.id === 'deletes' ? { ...webhook, allowsFail: true } : webhook,
  )
  t.equal(policies(settings(['Warn']), webhooks)['deletes'], 'Ignore', 'no rule denies')
  t.equal(policies(settings(['Deny']), webhooks)['deletes'], 'Fail', 'webhook-config-in-use')
  t.equal(
    policies(settings(['Warn'], { 'delete-guard': ['Deny'] }), webhooks)['deletes'],
    'Fail',
    'the delete guard set to Deny',
  )
})

t.test('a webhook that may never fail closed may not default to Fail', async (t) => {
  const wrong = WEBHOOKS.map((webhook) =>
    webhook.id === 'deletes' ? { ...webhook, failurePolicy: 'Fail' as const } : webhook,
  )
  t.throws(
    () => webhooksSchema(wrong),
    /webhook deletes: its default failurePolicy is Fail, but it may never fail closed/,
  )
})
