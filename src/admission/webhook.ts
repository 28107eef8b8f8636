/**
 * The transport-free admission entry point shared by the HTTPS server and the CLI: decode the
 * envelope, route, run the policy, wrap the verdict in a review of the version received.
 */

import { MAX_NESTING, nestsDeeperThan } from '../policy/kube/nesting.ts'
import { ClusterReadError } from '../cluster/view.ts'
import type { ClusterView } from '../cluster/view.ts'
import { renderText } from '../policy/messages/render.ts'
import { decodeReview } from './decode.ts'
import { ENFORCING, respond, respondToError } from './enforcement.ts'
import type { Enforcement } from './enforcement.ts'
import { allowed, errored, toReview } from './response.ts'
import { Router } from './router.ts'
import type { Route } from './router.ts'
import { productRoutes } from './routes.ts'
import type { AdmissionRequest, AdmissionReviewResponse, WebhookName } from './review.ts'
import { operatorWriter } from './writer.ts'
import type { Writer } from './writer.ts'
import { errorMessage } from '../policy/messages/render.ts'
import type { Verdict } from './verdict.ts'

export type ReviewOutcome =
  | {
      readonly ok: true
      readonly review: AdmissionReviewResponse
      readonly request?: AdmissionRequest
      /** The route that answered, when one did (otherwise the request was allowed as it is). */
      readonly route?: Route
      /** Whether the ToolHive operator sent the request, for `mcp_admission_mutations_total`. */
      readonly writer?: Writer
      /** What the route's rules decided, before `enforcement` made it the response. */
      readonly verdict?: Verdict
      /** Set when a policy threw: the verdict is a 500 and the caller should log this. */
      readonly error?: unknown
    }
  /** Not an AdmissionReview at all: the transport answers 400 with the message. */
  | { readonly ok: false; readonly message: string }

export interface Admission {
  /** Answers a decoded JSON body sent to one of the webhooks. Never throws. */
  review(body: unknown, webhook: WebhookName): Promise<ReviewOutcome>
  /** How verdicts become responses (metrics label what was done by it). */
  readonly enforcement: Enforcement
}

interface AdmissionOptions {
  readonly view: ClusterView
  readonly routes?: readonly Route[]
  /** The operator's service account, `name` or `namespace/name` (writer.ts). */
  readonly operatorServiceAccount?: string
  /** How violations and patches are acted on (default: enforced). */
  readonly enforcement?: Enforcement
}

export function createAdmission({
  view,
  routes = productRoutes(),
  operatorServiceAccount,
  enforcement = ENFORCING,
}: AdmissionOptions): Admission {
  const router = new Router(routes)
  const writerOf = operatorWriter(operatorServiceAccount)
  const context = { view }
  return {
    enforcement,
    async review(body, webhook) {
      const decoded = decodeReview(body)
      if (!decoded.ok) {
        // With a readable uid the API server can still be told in-band what was wrong. The
        // message is answered and logged, so it is bounded like a denial's (errored does too).
        if (decoded.uid === undefined) return { ok: false, message: renderText(decoded.message) }
        const apiVersion = decoded.apiVersion ?? 'admission.k8s.io/v1'
        return {
          ok: true,
          review: toReview(apiVersion, errored(decoded.uid, 400, decoded.message)),
        }
      }
      const { apiVersion, request } = decoded.review
      const route = router.find(webhook, request)
      if (!route) return { ok: true, review: toReview(apiVersion, allowed(request.uid)), request }
      // The one limit on untrusted nesting, checked only for what a rule will read: a request no
      // route takes is allowed above, whatever its shape, so no failure here reaches it.
      const failed = (code: 400 | 500 | 503, message: string) =>
        toReview(apiVersion, respondToError(request.uid, code, message, webhook, enforcement))
      if (nestsDeeperThan(request, MAX_NESTING)) {
        const message = `the request is nested deeper than ${MAX_NESTING} levels`
        return { ok: true, review: failed(400, message), request }
      }
      const writer = writerOf(request.userInfo)
      try {
        const verdict = await route.handler(request, context)
        const response = respond(request.uid, verdict, route.rule, enforcement)
        return { ok: true, review: toReview(apiVersion, response), request, route, writer, verdict }
      } catch (error) {
        // A live read that failed is not a bug: say in-band what could not be read (the writer
        // retries) instead of deciding from a cache that may be stale (DESIGN §4.2).
        if (error instanceof ClusterReadError)
          return { ok: true, review: failed(503, error.message), request, route, writer }
        const message = `internal error while admitting: ${errorMessage(error)}`
        return { ok: true, review: failed(500, message), request, route, writer, error }
      }
    },
  }
}
