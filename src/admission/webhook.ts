/**
 * The server's review of one AdmissionReview: decode the envelope, decide (`decide.ts`, the core
 * every command shares), respond as the enforcement settings ask, and wrap the response in a
 * review of the version received. The wire format is decoded here once and encoded here once.
 */

import type { ClusterView } from '../cluster/view.ts'
import { renderText } from '../policy/messages/render.ts'
import { decodeReview } from './decode.ts'
import { createDecide } from './decide.ts'
import type { Decision } from './decide.ts'
import { ENFORCING, enforces, notChecked, respond, validationActionsFor } from './enforcement.ts'
import type { Enforcement } from './enforcement.ts'
import { errored, toReview } from './response.ts'
import { Router } from './router.ts'
import type { Route } from './router.ts'
import { productRoutes } from './routes.ts'
import type { AdmissionRequest, AdmissionReviewResponse, WebhookName } from './review.ts'

export type ReviewOutcome =
  | {
      readonly ok: true
      readonly review: AdmissionReviewResponse
      /** The decoded request, and what was decided of it: absent when the envelope was unreadable. */
      readonly request?: AdmissionRequest
      readonly decision?: Decision
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
  routes,
  operatorServiceAccount,
  enforcement = ENFORCING,
}: AdmissionOptions): Admission {
  const allRoutes = routes ?? productRoutes()
  const router = new Router(allRoutes)
  const decide = createDecide({
    view,
    routes: allRoutes,
    operatorServiceAccount,
    // A rule that denies under these settings reads what it judges live, one that does not may
    // read the cache (handler.ts).
    denies: (rule) => validationActionsFor(rule, enforcement).includes('Deny'),
  })
  return {
    enforcement,
    async review(body, webhook) {
      const decoded = decodeReview(body)
      if (!decoded.ok) {
        // With a readable uid the API server can still be told in-band what was wrong. The
        // message is answered and logged, so it is bounded like a denial's (errored does too).
        // Without one there is no response to form: the transport answers 400, and the API
        // server applies the webhook's failurePolicy (Ignore where it does not enforce).
        if (decoded.uid === undefined) return { ok: false, message: renderText(decoded.message) }
        const apiVersion = decoded.apiVersion ?? 'admission.k8s.io/v1'
        // Refused in-band only where the answer enforces; elsewhere admitted `not checked`, as
        // any request the rules could not judge (docs/rollout.md).
        const rule = decoded.routable && router.find(webhook, decoded.routable)?.rule
        const enforcing =
          rule === undefined
            ? allRoutes.some(
                (route) => route.webhook === webhook && enforces(webhook, route.rule, enforcement),
              )
            : enforces(webhook, rule, enforcement)
        const response = enforcing
          ? errored(decoded.uid, 400, decoded.message)
          : notChecked(decoded.uid, rule, decoded.message, webhook, enforcement)
        return { ok: true, review: toReview(apiVersion, response) }
      }
      const { apiVersion, request } = decoded.review
      const decision = await decide(webhook, request)
      const response = respond(request.uid, decision, webhook, enforcement)
      return { ok: true, review: toReview(apiVersion, response), request, decision }
    },
  }
}
