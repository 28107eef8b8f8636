/** The contract between the router and the adapters that run policies. */

import type { ClusterView } from '../cluster/view.ts'
import type { AdmissionRequest } from './review.ts'
import type { Verdict } from './verdict.ts'

export interface HandlerContext {
  readonly view: ClusterView
  /**
   * Whether the rule's violations are refused under the service's settings: a rule that only
   * warns may read from the cache where one that denies reads live (docs/enforcement.md).
   */
  readonly denies: boolean
  /**
   * Whether the operator's exact service account (namespace and name, writer.ts) sent the request:
   * only its proxy Deployment writes may be admitted without the freshness proof when the API
   * server is too slow to answer the live reads in time (docs/enforcement.md#a-slow-api-server).
   */
  readonly exactOperator: boolean
}

/**
 * Decides one admission request. May throw only on bugs (the webhook answers a 500) and
 * ClusterReadError (a fact could not be read: the webhook says so in-band).
 */
export type Handler = (request: AdmissionRequest, context: HandlerContext) => Promise<Verdict>
