/**
 * One object admitted as a write (`check`'s files, `audit`'s stored objects), and what its
 * verdict says for people: the stored object and its patch, or the step that refused it and each
 * reason as a line. The lines come from the decisions' values, rendered as a denial renders them,
 * never read back out of a rendered response.
 */

import type { Decide, Decision } from '../admission/decide.ts'
import type { PatchOperation } from '../admission/patch.ts'
import { requestFor } from '../admission/request.ts'
import type { Operation } from '../admission/review.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { renderText, renderViolations, renderWarnings } from '../policy/messages/render.ts'
import type { RuleName } from '../policy/rules.ts'
import { admitRequest } from './admit.ts'
import type { CrdStep, DenyingStep, Refusal } from './admit.ts'
import { refusalCauses } from './crds.ts'

export type AdmitVerdict =
  | {
      readonly admitted: true
      /** The object as the API server would store it. */
      readonly object: KubeObject
      readonly patch: readonly PatchOperation[]
      /** The rules that answered each webhook, when one did (audit reports name them). */
      readonly rules: {
        readonly mutate?: RuleName | undefined
        readonly validate?: RuleName | undefined
      }
      readonly warnings: string[]
    }
  | {
      readonly admitted: false
      readonly webhook: DenyingStep
      /** The webhook rule that refused, when a webhook did. */
      readonly rule?: RuleName | undefined
      readonly causes: readonly string[]
      readonly warnings: string[]
    }

export interface AdmitOptions {
  /** The namespace of an object that names none (`check -n`). */
  readonly namespace: string
  readonly crds?: CrdStep | undefined
  /** CREATE by default; UPDATE of `oldObject` to the object (the object rewritten as it is). */
  readonly operation?: Extract<Operation, 'CREATE' | 'UPDATE'>
  readonly oldObject?: KubeObject
}

/** Admits `object` as the API server would; reads nothing but `decide`'s view. */
export async function admit(
  decide: Decide,
  object: KubeObject,
  options: AdmitOptions,
): Promise<AdmitVerdict> {
  const ns =
    typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : options.namespace
  const operation = options.operation ?? 'CREATE'
  const request = requestFor(
    { ...object, metadata: { ...object.metadata, namespace: ns } },
    {
      operation,
      namespace: ns,
      ...(operation === 'UPDATE' && options.oldObject ? { oldObject: options.oldObject } : {}),
    },
  )
  const result = await admitRequest(request, { decide, crds: options.crds })
  const { decisions } = result
  if (result.admitted)
    return {
      admitted: true,
      object: result.object,
      patch: result.patch,
      rules: { mutate: decisions.mutate?.rule, validate: decisions.validate?.rule },
      warnings: [...result.warnings],
    }
  const { refusal } = result
  const decision = 'decision' in refusal ? refusal.decision : undefined
  return {
    admitted: false,
    webhook: refusal.step,
    rule: decision?.rule,
    causes: refusalLines(refusal),
    warnings: [...result.warnings, ...refusedWarnings(decision)],
  }
}

/** A refusal's reasons, one line each (`field: message`), bounded and redacted as a denial's. */
export function refusalLines(refusal: Refusal): string[] {
  if (refusal.step === 'server') return [refusal.message]
  if (refusal.step === 'crd') return refusalCauses(refusal.verdict)
  const { verdict } = refusal.decision
  if (verdict.kind === 'failed') return [renderText(verdict.message)]
  if (verdict.kind === 'admitted') return [] // not a refusal: unreachable
  const { message, causes } = renderViolations(verdict.violations)
  // A denial about no field at all answers with its message alone, as the webhook does.
  if (verdict.violations.every((violation) => violation.field === '')) return [message]
  return causes.map((c) => (c.field === '' ? c.message : `${c.field}: ${c.message}`))
}

/** The warnings a refusing rule gave beside its violations. */
function refusedWarnings(decision: Decision | undefined): string[] {
  return decision?.verdict.kind === 'refused' ? renderWarnings(decision.verdict.warnings) : []
}
