/**
 * One write as the API server admits it, simulated: the object's CRD first (schema and CEL rules,
 * when CRDs are given), then the mutating webhook, then the validating webhook on the mutated
 * object, each through the service's own admission entry point. `check` admits the files it is
 * given this way, `audit` the objects a cluster holds: one path, so their verdicts are the
 * webhook's.
 */

import type { PatchOperation } from '../admission/patch.ts'
import { requestFor, reviewOf } from '../admission/request.ts'
import type { AdmissionResponse, Operation } from '../admission/review.ts'
import type { Admission } from '../admission/webhook.ts'
import type { Verdict } from '../admission/verdict.ts'
import type { CrdCatalog, CrdVerdict } from '../policy/crd/crd-catalog.ts'
import { TOOLHIVE_GROUP } from '../policy/kinds.ts'
import { groupOf } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { refusalCauses } from './crds.ts'
import { UsageError } from './io.ts'

/**
 * What answered a denial: one of the webhooks, the object's CRD (schema and CEL rules), or the
 * API server itself (no CRD serves the kind).
 */
export type DenyingStep = 'mutate' | 'validate' | 'crd' | 'server'

export interface CrdStep {
  readonly catalog: CrdCatalog
  readonly strict: boolean
}

export type AdmitVerdict =
  | {
      readonly admitted: true
      /** The object as the API server would store it. */
      readonly object: KubeObject
      readonly patch: PatchOperation[]
      /** The rules that answered each webhook, when one did (audit reports name them). */
      readonly rules: {
        readonly mutate?: string | undefined
        readonly validate?: string | undefined
      }
      readonly warnings: string[]
    }
  | {
      readonly admitted: false
      readonly webhook: DenyingStep
      /** The webhook rule that refused, when a webhook did. */
      readonly rule?: string | undefined
      readonly causes: string[]
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

/** What the API server's decoding of one write against the CRDs gives, before any webhook. */
export type CrdStepResult =
  /** No CRD is asked about the object's kind (not ToolHive's, not defined): the webhooks judge. */
  | { readonly kind: 'unjudged' }
  /** A ToolHive kind no CRD given serves: the API server has no such resource. */
  | { readonly kind: 'unserved'; readonly message: string }
  | { readonly kind: 'refused'; readonly verdict: Exclude<CrdVerdict, { allowed: true }> }
  /** Pruned and defaulted, as the webhooks then receive it. */
  | { readonly kind: 'decoded'; readonly object: KubeObject; readonly warnings: readonly string[] }

/**
 * The CRD's part of a write (the same for `check`, `review` and `audit`): the API server decodes
 * a custom resource against its CRD (prunes, defaults) and validates it before the validating
 * webhooks; the mutating webhook never changes these kinds, so the CRD's whole verdict comes first.
 */
export function crdStep(
  crds: CrdStep,
  input: {
    readonly operation: 'CREATE' | 'UPDATE'
    readonly object: KubeObject
    readonly oldObject?: KubeObject | undefined
  },
): CrdStepResult {
  const { object } = input
  if (groupOf(object.apiVersion) === TOOLHIVE_GROUP && !crds.catalog.defines(object))
    return {
      kind: 'unserved',
      message: `no matches for kind ${JSON.stringify(String(object.kind))} in version ${JSON.stringify(String(object.apiVersion))}: no CustomResourceDefinition given serves it`,
    }
  const verdict = crds.catalog.evaluate({
    operation: input.operation,
    object,
    ...(input.oldObject ? { oldObject: input.oldObject } : {}),
    strict: crds.strict,
  })
  if (verdict === undefined) return { kind: 'unjudged' }
  if (!verdict.allowed) return { kind: 'refused', verdict }
  return { kind: 'decoded', object: verdict.object, warnings: verdict.warnings }
}

/** Admits `object` as the API server would; reads nothing but `admission`'s view. */
export async function admit(
  admission: Admission,
  object: KubeObject,
  options: AdmitOptions,
): Promise<AdmitVerdict> {
  const { crds } = options
  const ns =
    typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : options.namespace
  let withNamespace: KubeObject = { ...object, metadata: { ...object.metadata, namespace: ns } }

  const crd =
    crds &&
    crdStep(crds, {
      operation: options.operation ?? 'CREATE',
      object: withNamespace,
      oldObject: options.oldObject,
    })
  if (crd?.kind === 'unserved')
    return { admitted: false, webhook: 'server', causes: [crd.message], warnings: [] }
  if (crd?.kind === 'refused')
    return {
      admitted: false,
      webhook: 'crd',
      causes: refusalCauses(crd.verdict),
      warnings: [...crd.verdict.warnings],
    }
  const crdWarnings = crd?.kind === 'decoded' ? crd.warnings : []
  if (crd?.kind === 'decoded') withNamespace = crd.object

  const mutation = await answer(admission, withNamespace, 'mutate', ns, options)
  if (!mutation.response.allowed) return refusal('mutate', mutation, [...crdWarnings])
  // The mutating rule's own result, not our patch applied again (tests hold the two equal).
  const patch = mutation.verdict?.kind === 'admitted' ? [...mutation.verdict.patch] : []
  const mutated =
    (mutation.verdict?.kind === 'admitted' ? mutation.verdict.object : undefined) ?? withNamespace

  const validation = await answer(admission, mutated, 'validate', ns, options)
  const warnings = [
    ...crdWarnings,
    ...(mutation.response.warnings ?? []),
    ...(validation.response.warnings ?? []),
  ]
  if (!validation.response.allowed) return refusal('validate', validation, warnings)
  return {
    admitted: true,
    object: mutated,
    patch,
    rules: { mutate: mutation.rule, validate: validation.rule },
    warnings,
  }
}

interface Answer {
  readonly response: AdmissionResponse
  readonly verdict: Verdict | undefined
  readonly rule: string | undefined
}

async function answer(
  admission: Admission,
  object: KubeObject,
  webhook: 'mutate' | 'validate',
  namespace: string,
  options: AdmitOptions,
): Promise<Answer> {
  const operation = options.operation ?? 'CREATE'
  const outcome = await admission.review(
    reviewOf(
      requestFor(object, {
        operation,
        namespace,
        ...(operation === 'UPDATE' && options.oldObject ? { oldObject: options.oldObject } : {}),
      }),
    ),
    webhook,
  )
  if (!outcome.ok) throw new UsageError(outcome.message) // only if requestFor built a bad envelope
  return { response: outcome.review.response, verdict: outcome.verdict, rule: outcome.route?.rule }
}

function refusal(
  webhook: 'mutate' | 'validate',
  answered: Answer,
  warnings: string[],
): AdmitVerdict {
  const { response } = answered
  const causes =
    response.status?.details?.causes.map((c) =>
      c.field === '' ? c.message : `${c.field}: ${c.message}`,
    ) ?? []
  return {
    admitted: false,
    webhook,
    rule: answered.rule,
    causes: causes.length > 0 ? causes : [response.status?.message ?? 'denied'],
    warnings: [...warnings, ...(response.warnings ?? [])],
  }
}
