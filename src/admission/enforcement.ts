/**
 * How the service acts on what its rules decide, so a team can adopt it in a live cluster the way
 * it adopts any policy: watch first, then warn, then enforce. The validation actions are
 * ValidatingAdmissionPolicy's (`Deny`, `Warn`, `Audit`); the mutation mode either applies the
 * patch or only observes it. Nothing here changes what a rule decides, only the response.
 */

import { renderText, renderViolations, renderWarnings } from '../policy/messages/render.ts'
import { VALIDATION_ACTIONS } from '../policy/rules.ts'
import type { RuleName, ValidationAction } from '../policy/rules.ts'
import type { Decision } from './decide.ts'
import { allowed, denied, errored, patched } from './response.ts'
import type { AdmissionResponse, WebhookName } from './review.ts'
import type { Verdict } from './verdict.ts'

export const MUTATION_MODES = ['apply', 'observe'] as const
export type MutationMode = (typeof MUTATION_MODES)[number]

export interface Enforcement {
  /** What a violation becomes: a denial, a warning to the client, an audit-log record. */
  readonly validationActions: readonly ValidationAction[]
  /** `observe`: a patch is computed, counted and recorded, but not returned. */
  readonly mutationMode: MutationMode
}

/** The default, and what `check` and `audit` simulate: every rule enforced. */
export const ENFORCING: Enforcement = { validationActions: ['Deny'], mutationMode: 'apply' }

/** The policy name in audit annotations, as ValidatingAdmissionPolicy names its policy. */
const POLICY = 'mcp-admission'

/** Audit annotation keys; the API server records each as `<webhook name>/<key>`. */
export const AUDIT_KEYS = {
  /** Shaped like the API server's own `validation.policy.admission.k8s.io/validation_failure`. */
  validationFailure: 'validation_failure',
  /** The patch `observe` did not return: each operation and path. */
  mutationObserved: 'mutation_observed',
  /** A request not judged (a fact unreadable, a bug) and admitted because nothing enforces. */
  admissionError: 'admission_error',
} as const

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
        problem: `must be ${VALIDATION_ACTIONS.join(', ')} or a comma-separated combination, got ${JSON.stringify(text)}`,
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

/** Whether a webhook's answers can refuse or change a write under `enforcement`. */
export function enforces(webhook: 'mutate' | 'validate', enforcement: Enforcement): boolean {
  return webhook === 'mutate'
    ? enforcement.mutationMode === 'apply'
    : enforcement.validationActions.includes('Deny')
}

/**
 * The actions taken on `rule`'s violations. Every rule follows the global setting for now; the
 * rule table (`policy/rules.ts`) holds each rule's own default and allowed actions.
 */
export function validationActionsFor(
  _rule: RuleName | undefined,
  enforcement: Enforcement,
): readonly ValidationAction[] {
  return enforcement.validationActions
}

/** Turns a decision into the response `enforcement` asks for. */
export function respond(
  uid: string,
  { rule, verdict }: Pick<Decision, 'rule' | 'verdict'>,
  webhook: WebhookName,
  enforcement: Enforcement,
): AdmissionResponse {
  if (verdict.kind === 'failed')
    return respondToError(uid, verdict.code, verdict.message, webhook, enforcement)
  if (verdict.kind === 'admitted') {
    if (enforcement.mutationMode === 'apply' || verdict.patch.length === 0)
      return patched(uid, verdict.patch, verdict.warnings)
    // Observed: the client sees the write as if no webhook were there, warnings included (they
    // describe a change that is not made).
    const operations = verdict.patch.map(({ op, path }) => ({ op, path }))
    return withAudit(allowed(uid), AUDIT_KEYS.mutationObserved, operations)
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

/**
 * The answer to a request the rules could not judge: `errored` where the webhook enforces (the
 * writer retries), otherwise admitted, with the reason as a warning (Warn) and an audit record.
 */
function respondToError(
  uid: string,
  code: 400 | 500 | 503,
  message: string,
  webhook: WebhookName,
  enforcement: Enforcement,
): AdmissionResponse {
  if (enforces(webhook, enforcement)) return errored(uid, code, message)
  const warn = webhook === 'validate' && enforcement.validationActions.includes('Warn')
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
  // rule's own warnings after them.
  const { items } = renderViolations(verdict.violations)
  return { uid, allowed: true, warnings: [...items, ...renderWarnings(verdict.warnings)] }
}

function withAudit(response: AdmissionResponse, key: string, value: unknown): AdmissionResponse {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return { ...response, auditAnnotations: { ...response.auditAnnotations, [key]: text } }
}
