/** The contract between the router and the adapters that run policies. */

import type { ClusterView } from '../cluster/view.ts'
import type { AdmissionRequest, AdmissionResponse } from './review.ts'

interface HandlerContext {
  readonly view: ClusterView
}

/** Answers one admission request. May throw only on bugs; the webhook turns that into a 500 verdict. */
export type Handler = (
  request: AdmissionRequest,
  context: HandlerContext,
) => Promise<AdmissionResponse>
