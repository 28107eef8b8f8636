/**
 * Which failurePolicy the chart gives each webhook, from the webhook and rule tables and the
 * settings: what the chart's helper (`mcp-admission.failurePolicy` in templates/_helpers.tpl,
 * with the rules webhooks-template.ts passes it) renders, stated again here so that tests can hold
 * helm's render to it. A webhook fails closed only while a failed call would let through what the
 * service enforces: a mutating webhook's patches under `apply`, or a violation of one of a
 * validating webhook's rules that denies under the settings (src/policy/rule-actions.ts).
 */

import type { MutationMode } from '../../src/admission/enforcement.ts'
import { actionsOf } from '../../src/policy/rule-actions.ts'
import type { ActionSettings } from '../../src/policy/rule-actions.ts'
import type { RuleEntry } from '../../src/policy/rules.ts'
import type { WebhookEntry } from '../../src/policy/webhooks.ts'

/** The chart values a failurePolicy depends on, besides the webhook's own. */
export interface ChartSettings extends ActionSettings {
  readonly mutationMode: MutationMode
}

/**
 * The rules of a validating webhook that could make it fail closed: those it serves that may deny.
 * None where the table never lets the webhook fail closed.
 */
export function failsClosedBy(webhook: WebhookEntry, rules: readonly RuleEntry[]): RuleEntry[] {
  if (!webhook.allowsFail || webhook.path !== 'validate') return []
  return rules.filter(
    (rule) => rule.webhook === webhook.id && rule.actions.allowed.includes('Deny'),
  )
}

/** Whether a configured Fail can ever apply to `webhook`, whatever the settings. */
export function mayFailClosed(webhook: WebhookEntry, rules: readonly RuleEntry[]): boolean {
  if (!webhook.allowsFail) return false
  return webhook.path === 'mutate' || failsClosedBy(webhook, rules).length > 0
}

/** The failurePolicy the chart renders for `webhook`, configured as `configured`, under `settings`. */
export function renderedFailurePolicy(
  webhook: WebhookEntry,
  configured: 'Fail' | 'Ignore',
  settings: ChartSettings,
  rules: readonly RuleEntry[],
): 'Fail' | 'Ignore' {
  if (!mayFailClosed(webhook, rules)) return 'Ignore'
  const enforces =
    webhook.path === 'mutate'
      ? settings.mutationMode === 'apply'
      : failsClosedBy(webhook, rules).some((rule) => actionsOf(rule, settings).includes('Deny'))
  return enforces ? configured : 'Ignore'
}
