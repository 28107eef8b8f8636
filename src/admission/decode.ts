/**
 * Decodes the AdmissionReview envelope. Only the envelope is schema-checked; the admitted objects
 * pass through untouched (no coercion, no defaults, no removal) so the patch is computed against
 * exactly what the API server sent.
 */

import { Ajv } from 'ajv'
import type { ErrorObject } from 'ajv'
import { ADMISSION_API_VERSIONS, OPERATIONS } from './review.ts'
import type { AdmissionApiVersion, AdmissionReviewRequest } from './review.ts'
import type { RoutedFields } from './router.ts'

const groupVersionKind = {
  type: 'object',
  required: ['group', 'version', 'kind'],
  properties: {
    group: { type: 'string' },
    version: { type: 'string' },
    kind: { type: 'string', minLength: 1 },
  },
}

const groupVersionResource = {
  type: 'object',
  required: ['group', 'version', 'resource'],
  properties: {
    group: { type: 'string' },
    version: { type: 'string' },
    resource: { type: 'string', minLength: 1 },
  },
}

const envelopeSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'request'],
  properties: {
    apiVersion: { enum: ADMISSION_API_VERSIONS },
    kind: { const: 'AdmissionReview' },
    request: {
      type: 'object',
      required: ['uid', 'kind', 'resource', 'operation'],
      properties: {
        uid: { type: 'string', minLength: 1 },
        kind: groupVersionKind,
        resource: groupVersionResource,
        subResource: { type: 'string' },
        requestKind: groupVersionKind,
        requestResource: groupVersionResource,
        requestSubResource: { type: 'string' },
        name: { type: 'string' },
        namespace: { type: 'string' },
        operation: { enum: OPERATIONS },
        object: { type: ['object', 'null'] },
        oldObject: { type: ['object', 'null'] },
        dryRun: { type: 'boolean' },
      },
      // A write always carries the object written: without it a rule would judge nothing and
      // the request pass unchecked (a validating UPDATE with `object: null` was allowed).
      if: { required: ['operation'], properties: { operation: { enum: ['CREATE', 'UPDATE'] } } },
      then: { required: ['object'], properties: { object: { type: 'object' } } },
    },
  },
}

/**
 * What routing reads (router.ts): when a malformed request still has these, the rule it would
 * have gone to is known, and so whether its answer enforces (webhook.ts).
 */
const routableSchema = {
  type: 'object',
  required: ['kind', 'resource', 'operation'],
  properties: {
    kind: {
      type: 'object',
      required: ['group', 'kind'],
      properties: { group: { type: 'string' }, kind: { type: 'string' } },
    },
    resource: {
      type: 'object',
      required: ['resource'],
      properties: { resource: { type: 'string' } },
    },
    subResource: { type: 'string' },
    operation: { enum: OPERATIONS },
  },
}

const ajv = new Ajv({
  allErrors: true,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  strict: true,
})
const validateEnvelope = ajv.compile<AdmissionReviewRequest>(envelopeSchema)
const validateRoutable = ajv.compile<RoutedFields>(routableSchema)

type DecodeResult =
  | { ok: true; review: AdmissionReviewRequest }
  /**
   * `uid`/`apiVersion` are set when they could be read, so the caller can still answer in-band;
   * `routable`, when what routing reads could be.
   */
  | {
      ok: false
      message: string
      uid?: string
      apiVersion?: AdmissionApiVersion
      routable?: RoutedFields
    }

/** Checks that `body` is an AdmissionReview request envelope. */
export function decodeReview(body: unknown): DecodeResult {
  if (validateEnvelope(body)) return { ok: true, review: body }
  // ajv adds "must match then schema" beside the error that says why: that one is enough.
  const errors = (validateEnvelope.errors ?? []).filter((error) => error.keyword !== 'if')
  const message = `invalid AdmissionReview: ${errors.map(describe).join('; ')}`
  return { ok: false, message, ...readableIdentity(body) }
}

function describe(error: ErrorObject): string {
  const path = error.instancePath.slice(1).replaceAll('/', '.')
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty
    return `${path === '' ? missing : `${path}.${missing}`}: Required value`
  }
  const allowed = error.params as { allowedValues?: unknown[]; allowedValue?: unknown }
  const values =
    allowed.allowedValues ??
    (allowed.allowedValue === undefined ? undefined : [allowed.allowedValue])
  const detail = values
    ? `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`
    : (error.message ?? 'is invalid')
  return `${path === '' ? '(root)' : path}: ${detail}`
}

function readableIdentity(body: unknown): {
  uid?: string
  apiVersion?: AdmissionApiVersion
  routable?: RoutedFields
} {
  if (typeof body !== 'object' || body === null) return {}
  const { apiVersion, request } = body as { apiVersion?: unknown; request?: unknown }
  const uid =
    typeof request === 'object' && request !== null ? (request as { uid?: unknown }).uid : undefined
  const version = (ADMISSION_API_VERSIONS as readonly unknown[]).includes(apiVersion)
    ? (apiVersion as AdmissionApiVersion)
    : undefined
  return {
    ...(typeof uid === 'string' && uid !== '' ? { uid } : {}),
    ...(version ? { apiVersion: version } : {}),
    ...(validateRoutable(request) ? { routable: request } : {}),
  }
}
