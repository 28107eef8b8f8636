/**
 * One write as the API server admits it, simulated, in the API server's order: the body decoded
 * against the object's CRD (pruned, defaulted), the mutating webhook, decoding again, the CRD's
 * schema, CEL rules and ratcheting, then the validating webhook. Each webhook step is the service's
 * own decision (`admission/decide.ts`) on a request built here: no AdmissionReview is encoded to
 * be decoded again. `check` admits files this way, `audit` what a cluster holds and `review` one
 * webhook's step: one order, so their verdicts are the webhook's.
 */

import type { Decide, Decision } from '../admission/decide.ts'
import type { PatchOperation } from '../admission/patch.ts'
import type { AdmissionRequest, WebhookName } from '../admission/review.ts'
import type { CrdCatalog, CrdInput, CrdVerdict } from '../policy/crd/crd-catalog.ts'
import { TOOLHIVE_GROUP } from '../policy/kinds.ts'
import { groupOf, isRecord } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { renderWarnings } from '../policy/messages/render.ts'

/**
 * What answered a denial: one of the webhooks, the object's CRD (schema and CEL rules), or the
 * API server itself (no CRD serves the kind).
 */
export type DenyingStep = 'mutate' | 'validate' | 'crd' | 'server'

export interface CrdStep {
  readonly catalog: CrdCatalog
  readonly strict: boolean
}

/** Why a write is refused, as values: the step, and what it decided. */
export type Refusal =
  /** No CRD serves the object's ToolHive kind: the API server has no such resource (404). */
  | { readonly step: 'server'; readonly message: string }
  | { readonly step: 'crd'; readonly verdict: Exclude<CrdVerdict, { allowed: true }> }
  /** A webhook refused (`refused`) or could not judge (`failed`). */
  | { readonly step: WebhookName; readonly decision: Decision }

/** Every step of one write, as values. */
export type WriteResult =
  | {
      readonly admitted: true
      /** The object as the API server would store it. */
      readonly object: KubeObject
      readonly patch: readonly PatchOperation[]
      /** Each webhook's decision, for the webhooks the write went through. */
      readonly decisions: { readonly [Step in WebhookName]?: Decision }
      readonly warnings: readonly string[]
      /** The API server's own warnings among them (decoding, CEL), before any webhook's. */
      readonly serverWarnings: readonly string[]
    }
  | {
      readonly admitted: false
      readonly refusal: Refusal
      readonly decisions: { readonly [Step in WebhookName]?: Decision }
      readonly warnings: readonly string[]
      readonly serverWarnings: readonly string[]
    }

export interface ChainOptions {
  readonly decide: Decide
  readonly crds?: CrdStep | undefined
  /** The webhooks the write goes through (`review` simulates one); both by default. */
  readonly webhooks?: readonly WebhookName[]
}

/** Admits the write `request` describes through the API server's steps; reads only `decide`'s view. */
export async function admitRequest(
  request: AdmissionRequest,
  { decide, crds, webhooks = ['mutate', 'validate'] }: ChainOptions,
): Promise<WriteResult> {
  const decisions: { [Step in WebhookName]?: Decision } = {}
  const warnings: string[] = []
  const serverWarnings: string[] = []
  const fromServer = (more: readonly string[]) => {
    warnings.push(...more)
    serverWarnings.push(...more)
  }
  const refuse = (refusal: Refusal): WriteResult => ({
    admitted: false,
    refusal,
    decisions,
    warnings,
    serverWarnings,
  })
  const write = crdWrite(request)
  if (crds && write && isUnserved(crds.catalog, write.object))
    return refuse({ step: 'server', message: noMatches(write.object) })
  const crd =
    crds && write && crds.catalog.defines(write.object) ? crdSteps(crds, write) : undefined
  let object = request.object ?? undefined
  if (crd && object) {
    const decoded = crd.decode(object)
    if (decoded.kind === 'refused') return refuse(decoded.refusal)
    fromServer(decoded.warnings)
    object = decoded.object
  }
  let patch: readonly PatchOperation[] = []
  if (webhooks.includes('mutate')) {
    const decision = await decide('mutate', { ...request, object: object ?? null })
    decisions.mutate = decision
    const { verdict } = decision
    if (verdict.kind !== 'admitted') return refuse({ step: 'mutate', decision })
    warnings.push(...renderWarnings(verdict.warnings))
    // The mutating rule's own result, not our patch applied again (tests hold the two equal).
    patch = verdict.patch
    object = verdict.object ?? object
  }
  if (crd && object) {
    // Mutated objects are decoded again (pruned, defaulted; no warnings and no strict refusal the
    // second time: field validation is of the client's body), then validated: schema, CEL rules,
    // ratcheting against the stored object.
    const decoded = crd.redecode(object)
    if (decoded.kind === 'refused') return refuse(decoded.refusal)
    const validated = crd.validate(decoded.object)
    if (validated.kind === 'refused') {
      if (validated.refusal.step === 'crd') fromServer(validated.refusal.verdict.warnings)
      return refuse(validated.refusal)
    }
    fromServer(validated.warnings)
    object = decoded.object
  }
  if (webhooks.includes('validate')) {
    const decision = await decide('validate', { ...request, object: object ?? null })
    decisions.validate = decision
    const { verdict } = decision
    if (verdict.kind !== 'admitted') return refuse({ step: 'validate', decision })
    warnings.push(...renderWarnings(verdict.warnings))
  }
  return { admitted: true, object: object ?? {}, patch, decisions, warnings, serverWarnings }
}

/** A CREATE or UPDATE: what the CRD steps read. */
interface CrdWrite {
  readonly operation: 'CREATE' | 'UPDATE'
  readonly object: KubeObject
  readonly oldObject?: KubeObject | undefined
}

function crdWrite(request: AdmissionRequest): CrdWrite | undefined {
  const { operation, object, oldObject } = request
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || !isRecord(object)) return undefined
  return { operation, object, oldObject: isRecord(oldObject) ? oldObject : undefined }
}

type CrdOutcome =
  | { readonly kind: 'refused'; readonly refusal: Refusal }
  | { readonly kind: 'ok'; readonly object: KubeObject; readonly warnings: readonly string[] }

/** The CRD's two steps for a write of a kind it defines. */
function crdSteps({ catalog, strict }: CrdStep, write: CrdWrite) {
  const step =
    (evaluate: (input: CrdInput) => CrdVerdict | undefined) =>
    (object: KubeObject): CrdOutcome => {
      const verdict = evaluate({ ...write, object, strict })
      if (verdict === undefined) return { kind: 'ok', object, warnings: [] } // defined: unreachable
      if (!verdict.allowed) return { kind: 'refused', refusal: { step: 'crd', verdict } }
      return { kind: 'ok', object: verdict.object, warnings: verdict.warnings }
    }
  return {
    decode: step((input) => catalog.decode(input)),
    redecode: step((input) => catalog.decode({ ...input, strict: false })),
    validate: step((input) => catalog.validate(input)),
  }
}

/** A ToolHive kind no CRD given serves: the API server has no such resource. */
function isUnserved(catalog: CrdCatalog, object: KubeObject): boolean {
  return groupOf(object.apiVersion) === TOOLHIVE_GROUP && !catalog.defines(object)
}

function noMatches(object: KubeObject): string {
  return `no matches for kind ${JSON.stringify(String(object.kind))} in version ${JSON.stringify(String(object.apiVersion))}: no CustomResourceDefinition given serves it`
}
