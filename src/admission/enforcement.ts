/**
 * How the service acts on what its rules decide, so a team can adopt it in a live cluster the way
 * it adopts any policy: watch first, then warn, then enforce. The validation actions are
 * ValidatingAdmissionPolicy's (`Deny`, `Warn`, `Audit`), taken per rule; the mutation mode
 * either applies the patch or only observes it. Nothing here changes what a rule decides, only
 * the response.
 */

import { renderText, renderViolations, renderWarnings } from '../policy/messages/render.ts'
import { actionsOf } from '../policy/rule-actions.ts'
import type { RuleActions } from '../policy/rule-actions.ts'
import { RULE_TABLE } from '../policy/rules.ts'
import type { RuleEntry, RuleName, ValidationAction } from '../policy/rules.ts'
import type { Decision } from './decide.ts'
import { allowed, denied, errored, patched } from './response.ts'
import type { AdmissionResponse, WebhookName } from './review.ts'
import type { Verdict } from './verdict.ts'

export const MUTATION_MODES = ['apply', 'observe'] as const
export type MutationMode = (typeof MUTATION_MODES)[number]

export interface Enforcement {
  /**
   * What a violation becomes: a denial, a warning to the client, an audit-log record. For the
   * rules that deny by default; the others keep their own (policy/rule-actions.ts).
   */
  readonly validationActions: readonly ValidationAction[]
  /** Per rule, actions chosen instead (`--rule-actions`); absent: none chosen. */
  readonly ruleActions?: RuleActions
  /** `observe`: a patch is computed, counted and recorded, but not returned. */
  readonly mutationMode: MutationMode
}

/**
 * The default, and what `check`, `review` and `audit` simulate: every rule at its table default,
 * so the rules that deny by default deny and the others warn as they do out of the box.
 */
export const ENFORCING: Enforcement = { validationActions: ['Deny'], mutationMode: 'apply' }

/** The policy name in audit annotations, as ValidatingAdmissionPolicy names its policy. */
const POLICY = 'mcp-admission'

/** Audit annotation keys; the API server records each as `<webhook name>/<key>`. */
export const AUDIT_KEYS = {
  /** Shaped like the API server's own `validation.policy.admission.k8s.io/validation_failure`. */
  validationFailure: 'validation_failure',
  /** The patch `observe` did not return: each operation and path. */
  mutationObserved: 'mutation_observed',
  /** A request not judged (a fact unreadable, a bug) and admitted: its answer does not enforce. */
  admissionError: 'admission_error',
  /**
   * The operator's proxy Deployment write admitted with the stamps it carries, the live reads
   * proving them current having missed their deadline (docs/enforcement.md#a-slow-api-server).
   */
  liveReadFallback: 'live_read_fallback',
} as const

/**
 * Whether the answer to `rule` at `webhook` can refuse or change a write under `enforcement`: a
 * mutating webhook's while patches are applied, a validating rule's while it denies.
 */
export function enforces(
  webhook: 'mutate' | 'validate',
  rule: RuleName | undefined,
  enforcement: Enforcement,
): boolean {
  return webhook === 'mutate'
    ? enforcement.mutationMode === 'apply'
    : validationActionsFor(rule, enforcement).includes('Deny')
}

/**
 * The actions taken on `rule`'s violations: its own setting, else its table default or the
 * global setting, as rule-actions.ts says. With no rule (nothing answered), the global setting.
 */
export function validationActionsFor(
  rule: RuleName | undefined,
  enforcement: Enforcement,
): readonly ValidationAction[] {
  const entry: RuleEntry | undefined = RULE_TABLE.find(({ name }) => name === rule)
  return entry === undefined ? enforcement.validationActions : actionsOf(entry, enforcement)
}

/** Turns a decision into the response `enforcement` asks for. */
export function respond(
  uid: string,
  { rule, verdict }: Pick<Decision, 'rule' | 'verdict'>,
  webhook: WebhookName,
  enforcement: Enforcement,
): AdmissionResponse {
  if (verdict.kind === 'failed') return respondToError(uid, rule, verdict, webhook, enforcement)
  if (verdict.kind === 'admitted') {
    const response = admittedResponse(uid, verdict, enforcement)
    if (verdict.unproven === undefined) return response
    const text = `${verdict.unproven.unread}; admitted with the stamps the operator wrote, not proven current`
    return withAudit(response, AUDIT_KEYS.liveReadFallback, renderText(text))
  }
  const actions = validationActionsFor(rule, enforcement)
  const response = actions.includes('Deny')
    ? denied(uid, verdict.violations, verdict.warnings, verdict.subject)
    : allowedWithViolations(uid, verdict, actions.includes('Warn'))
  if (!actions.includes('Audit')) return response
  const { items } = renderViolations(verdict.violations)
  return withAudit(
    response,
    AUDIT_KEYS.validationFailure,
    items.map((message) => ({ message, policy: POLICY, rule, validationActions: actions })),
  )
}

function admittedResponse(
  uid: string,
  verdict: Extract<Verdict, { kind: 'admitted' }>,
  enforcement: Enforcement,
): AdmissionResponse {
  if (enforcement.mutationMode === 'apply' || verdict.patch.length === 0)
    return patched(uid, verdict.patch, verdict.warnings)
  // Observed: the client sees the write as if no webhook were there, warnings included (they
  // describe a change that is not made).
  const operations = verdict.patch.map(({ op, path }) => ({ op, path }))
  return withAudit(allowed(uid), AUDIT_KEYS.mutationObserved, operations)
}

/**
 * The answer to a request the rules could not judge: `errored` where the answer enforces (the
 * writer retries), otherwise admitted, with the reason as a warning where the rule warns and an
 * audit record: a rule that only warns or audits never refuses a write, not even one it could
 * not check.
 */
function respondToError(
  uid: string,
  rule: RuleName | undefined,
  { code, message }: Extract<Verdict, { kind: 'failed' }>,
  webhook: WebhookName,
  enforcement: Enforcement,
): AdmissionResponse {
  if (enforces(webhook, rule, enforcement)) return errored(uid, code, message)
  return notChecked(uid, rule, message, webhook, enforcement)
}

/**
 * A request admitted unjudged where the answer does not enforce: a `not checked` warning where
 * the rule warns, and an audit record (docs/rollout.md, "Failure policy follows enforcement").
 */
export function notChecked(
  uid: string,
  rule: RuleName | undefined,
  message: string,
  webhook: WebhookName,
  enforcement: Enforcement,
): AdmissionResponse {
  const warn = webhook === 'validate' && validationActionsFor(rule, enforcement).includes('Warn')
  const response = allowed(uid, warn ? [`not checked: ${message}`] : [])
  return withAudit(response, AUDIT_KEYS.admissionError, renderText(message))
}

function allowedWithViolations(
  uid: string,
  verdict: Extract<Verdict, { kind: 'refused' }>,
  warn: boolean,
): AdmissionResponse {
  if (!warn) return allowed(uid, verdict.warnings)
  // Each violation as its own warning, listed and bounded as a denial's message lists them; the
  // rule's own warnings after them, in what is left of the 4096 characters the API server passes
  // on in all (docs/wire.md).
  const { items } = renderViolations(verdict.violations)
  const used = items.reduce((chars, item) => chars + item.length, 0)
  return { uid, allowed: true, warnings: [...items, ...renderWarnings(verdict.warnings, used)] }
}

function withAudit(response: AdmissionResponse, key: string, value: unknown): AdmissionResponse {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return { ...response, auditAnnotations: { ...response.auditAnnotations, [key]: text } }
}
