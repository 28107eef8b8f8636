/**
 * The text of the validation-action settings: one list for every rule (`--validation-actions
 * Deny,Audit`) and a list per rule (`--rule-actions 'delete-guard=Deny,Audit;workload=Warn'`),
 * read by the API server's rules for a ValidatingAdmissionPolicyBinding and, per rule, by what
 * the rule table allows it. What they mean together is rule-actions.ts's.
 */

import { RULE_TABLE, VALIDATION_ACTIONS } from './rules.ts'
import type { RuleEntry, ValidationAction } from './rules.ts'
import type { RuleActions } from './rule-actions.ts'

/** Between the `rule=actions` items of `--rule-actions`; a repeated flag is joined with it. */
export const RULE_ACTIONS_SEPARATOR = ';'

/** The example every message about `--rule-actions` gives. */
export const RULE_ACTIONS_EXAMPLE = 'delete-guard=Deny,Audit;workload=Warn'

const quoted = (text: string): string => JSON.stringify(text)

/**
 * The actions a comma-separated list names, or what is wrong with it. The rules are the API
 * server's for a ValidatingAdmissionPolicyBinding: each at most once, and not Deny with Warn
 * (a denial already returns its violations to the client).
 */
export function parseValidationActions(
  text: string,
): { readonly actions: ValidationAction[] } | { readonly problem: string } {
  const names = text.split(',').map((name) => name.trim())
  const actions: ValidationAction[] = []
  for (const name of names) {
    const action = VALIDATION_ACTIONS.find((known) => known === name)
    if (action === undefined)
      return {
        problem: `must be ${VALIDATION_ACTIONS.join(', ')} or a comma-separated combination, got ${quoted(text)}`,
      }
    if (actions.includes(action)) return { problem: `names ${action} twice` }
    actions.push(action)
  }
  if (actions.includes('Deny') && actions.includes('Warn'))
    return {
      problem:
        'Deny and Warn cannot be combined (a denial already returns its violations to the client); use Deny, Deny,Audit, Warn or Warn,Audit',
    }
  return { actions }
}

/**
 * The actions chosen per rule: `rule=actions` items separated by `;`, each rule of `rules` at
 * most once, its list read as parseValidationActions reads one and holding only what the rule's
 * entry allows (a warnings-only rule allows no Deny). Empty text chooses nothing. Every problem
 * is returned, each naming the rule it is about.
 */
export function parseRuleActions(
  text: string,
  rules: readonly RuleEntry[] = RULE_TABLE,
): { readonly ruleActions: RuleActions } | { readonly problems: readonly string[] } {
  const chosen = new Map<string, readonly ValidationAction[]>()
  if (text.trim() === '') return { ruleActions: chosen }
  const problems: string[] = []
  for (const item of text.split(RULE_ACTIONS_SEPARATOR)) {
    const problem = readItem(item, rules, chosen)
    if (problem !== undefined) problems.push(problem)
  }
  return problems.length > 0 ? { problems } : { ruleActions: chosen }
}

/** Reads one `rule=actions` item into `chosen`; what is wrong with it, if anything. */
function readItem(
  item: string,
  rules: readonly RuleEntry[],
  chosen: Map<string, readonly ValidationAction[]>,
): string | undefined {
  const equals = item.indexOf('=')
  const name = item.slice(0, Math.max(equals, 0)).trim()
  if (equals === -1 || name === '')
    return `must be rule=actions items separated by "${RULE_ACTIONS_SEPARATOR}" (${RULE_ACTIONS_EXAMPLE}), got ${quoted(item)}`
  const rule = rules.find((entry) => entry.name === name)
  if (rule === undefined)
    return `no rule is named ${quoted(name)}; the rules are ${rules.map((entry) => entry.name).join(', ')}`
  if (chosen.has(name)) return `names ${name} twice`
  const parsed = parseValidationActions(item.slice(equals + 1))
  if ('problem' in parsed) return `${name}: ${parsed.problem}`
  const { allowed } = rule.actions
  const refused = parsed.actions.filter((action) => !allowed.includes(action))
  if (refused.length > 0)
    return `${name}: ${refused.join(' and ')} not allowed for this rule${allowed.includes('Deny') ? '' : ', which never refuses a write'}; it allows ${allowed.join(', ')}`
  chosen.set(name, parsed.actions)
  return undefined
}
