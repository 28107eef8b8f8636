/** Builders for the objects and reviews tests send. */

import { requestFor } from '../../src/admission/request.ts'
import type { PatchOperation } from '../../src/admission/patch.ts'
import type {
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReviewRequest,
  Operation,
} from '../../src/admission/review.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'

export const RUNCONFIG_LABELS = {
  'toolhive.stacklok.io/component': 'run-config',
  'toolhive.stacklok.io/mcp-server': 'demo',
  'toolhive.stacklok.io/managed-by': 'toolhive-operator',
}

/** The test vector of docs/enforcement.md#the-runconfig-checksum: its checksum. */
export const VECTOR_CHECKSUM = '7220370996b543fcd3149832323a57477e6c9b8698fa3119831352da3487a989'

/**
 * The test vector ConfigMap of docs/enforcement.md#the-runconfig-checksum; fields are loosely typed
 * so tests can break them.
 */
export function runConfigMap(
  overrides: { data?: unknown; labels?: unknown; annotations?: unknown; binaryData?: unknown } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'demo-runconfig',
      namespace: 'default',
      labels: overrides.labels ?? { ...RUNCONFIG_LABELS },
      ...(overrides.annotations === undefined ? {} : { annotations: overrides.annotations }),
    },
    data: overrides.data ?? { 'runconfig.json': '{\n  "name": "demo"\n}' },
    ...(overrides.binaryData === undefined ? {} : { binaryData: overrides.binaryData }),
  }
}

/** Wraps a request in an `admission.k8s.io/v1` review, as the API server sends it. */
export function reviewOf(request: AdmissionRequest): AdmissionReviewRequest {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request }
}

/**
 * An AdmissionReview of `object`, as it arrives: through JSON, so admission never holds the
 * caller's objects (a rule writing into the request would otherwise show in the caller's copy).
 */
export function review(
  object: KubeObject,
  options: {
    operation?: Operation
    apiVersion?: AdmissionReviewRequest['apiVersion']
    uid?: string
  } = {},
): AdmissionReviewRequest {
  const built = reviewOf(
    requestFor(object, {
      operation: options.operation ?? 'CREATE',
      uid: options.uid ?? 'test-uid-1',
    }),
  )
  const versioned = options.apiVersion ? { ...built, apiVersion: options.apiVersion } : built
  return JSON.parse(JSON.stringify(versioned)) as AdmissionReviewRequest
}

/** The JSON Patch in a response, decoded (empty when there is none). */
export function patchOf(response: AdmissionResponse): PatchOperation[] {
  return response.patch === undefined
    ? []
    : (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as PatchOperation[])
}
