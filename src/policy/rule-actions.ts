/**
 * What each rule's violations become under the service's settings: the one precedence that the
 * response, the choice of live reads, the metrics and the chart's failurePolicy all follow (the
 * chart's template states it again in Helm's words: templates/_helpers.tpl).
 */

import type { RuleEntry, ValidationAction } from './rules.ts'

/** Per rule, by name, the actions a setting chose for it (`--rule-actions`). */
export type RuleActions = ReadonlyMap<string, readonly ValidationAction[]>

export interface ActionSettings {
  /** `--validation-actions`: what the rules that deny by default do. */
  readonly validationActions: readonly ValidationAction[]
  /** `--rule-actions`: absent, or without a rule's name, leaves that rule to the precedence. */
  readonly ruleActions?: RuleActions
}

/**
 * The actions taken on `rule`'s violations. A setting for the rule itself wins. Otherwise a rule
 * that denies by default follows `validationActions`, so one setting moves every enforcing rule
 * from watching to denying; a rule that does not (a new guard, a warnings-only rule) keeps its
 * default, which holds no Deny, so while `validationActions` lacks Deny no rule denies unless a
 * setting names it.
 */
export function actionsOf(
  rule: Pick<RuleEntry, 'name' | 'actions'>,
  settings: ActionSettings,
): readonly ValidationAction[] {
  const chosen = settings.ruleActions?.get(rule.name)
  if (chosen !== undefined) return chosen
  return rule.actions.default.includes('Deny') ? settings.validationActions : rule.actions.default
}
