/** The contract between the router and the adapters that run policies. */

import type { ClusterView } from '../cluster/view.ts'
import type { AdmissionRequest } from './review.ts'
import type { Verdict } from './verdict.ts'

interface HandlerContext {
  readonly view: ClusterView
}

/**
 * Decides one admission request. May throw only on bugs (the webhook answers a 500) and
 * ClusterReadError (a fact could not be read: the webhook says so in-band).
 */
export type Handler = (request: AdmissionRequest, context: HandlerContext) => Promise<Verdict>
