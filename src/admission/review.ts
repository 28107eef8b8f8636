/** The AdmissionReview wire format (admission.k8s.io/v1 and v1beta1 share it). */

export const ADMISSION_API_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const
export type AdmissionApiVersion = (typeof ADMISSION_API_VERSIONS)[number]

export const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const
export type Operation = (typeof OPERATIONS)[number]

export interface GroupVersionKind {
  group: string
  version: string
  kind: string
}

interface GroupVersionResource {
  group: string
  version: string
  resource: string
}

export interface AdmissionRequest {
  uid: string
  kind: GroupVersionKind
  resource: GroupVersionResource
  subResource?: string
  requestKind?: GroupVersionKind
  requestResource?: GroupVersionResource
  requestSubResource?: string
  name?: string
  namespace?: string
  operation: Operation
  userInfo?: { username?: string; uid?: string; groups?: string[] }
  object?: Record<string, unknown> | null
  oldObject?: Record<string, unknown> | null
  dryRun?: boolean
  options?: unknown
}

export interface StatusCause {
  reason: string
  message: string
  field: string
}

/** metav1.Status as carried in a response. */
interface ResponseStatus {
  status: 'Success' | 'Failure'
  message?: string
  reason?: string
  code: number
  details?: StatusDetails
}

/** metav1.StatusDetails: kubectl names the object from these and lists the causes. */
interface StatusDetails {
  name?: string
  group?: string
  kind?: string
  causes: StatusCause[]
}

export interface AdmissionResponse {
  uid: string
  allowed: boolean
  status?: ResponseStatus
  patch?: string
  patchType?: 'JSONPatch'
  warnings?: string[]
  /** Recorded by the API server in its audit log, each key prefixed `<webhook name>/`. */
  auditAnnotations?: Record<string, string>
}

export interface AdmissionReviewRequest {
  apiVersion: AdmissionApiVersion
  kind: 'AdmissionReview'
  request: AdmissionRequest
}

export interface AdmissionReviewResponse {
  apiVersion: AdmissionApiVersion
  kind: 'AdmissionReview'
  response: AdmissionResponse
}

/** The two webhooks this service serves; each maps to one HTTP path. */
export const WEBHOOKS = ['mutate', 'validate'] as const
export type WebhookName = (typeof WEBHOOKS)[number]
