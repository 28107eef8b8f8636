/**
 * The admission core, shared by the HTTPS server and every CLI command: a request in, a decision
 * out, as values. It routes the request to the rule that answers it, guards nesting, gathers the
 * rule's facts and runs it, and turns a fact it could not read into a verdict of its own: nothing
 * here knows the wire format (`webhook.ts` decodes and encodes) or the enforcement settings
 * (`enforcement.ts` makes a decision a response).
 */

import { ClusterReadError } from '../cluster/view.ts'
import type { ClusterView } from '../cluster/view.ts'
import { MAX_NESTING, nestsDeeperThan } from '../policy/kube/nesting.ts'
import { errorMessage } from '../policy/messages/render.ts'
import { RULE_TABLE } from '../policy/rules.ts'
import type { RuleEntry, RuleName } from '../policy/rules.ts'
import type { AdmissionRequest, WebhookName } from './review.ts'
import { Router } from './router.ts'
import type { Route } from './router.ts'
import { productRoutes } from './routes.ts'
import { admitted, failed } from './verdict.ts'
import type { Verdict } from './verdict.ts'
import { operatorWriter } from './writer.ts'
import type { Writer } from './writer.ts'

export interface Decision {
  /** The rule that answered; absent when none applies (the request is allowed as it is). */
  readonly rule?: RuleName
  /** The route that matched: the rule, and the kind and resource it matched them on. */
  readonly route?: Route
  readonly verdict: Verdict
  /** Whether the ToolHive operator sent the request (`mcp_admission_mutations_total`). */
  readonly writer: Writer
}

/** Decides one request sent to `webhook`. Never throws: a bug is a `failed` verdict (500). */
export type Decide = (webhook: WebhookName, request: AdmissionRequest) => Promise<Decision>

export interface DecideOptions {
  readonly view: ClusterView
  readonly routes?: readonly Route[]
  /** The operator's service account, `name` or `namespace/name` (writer.ts). */
  readonly operatorServiceAccount?: string | undefined
  /** Whether a rule's violations are refused (enforcement.ts); by default, its table default. */
  readonly denies?: (rule: RuleName) => boolean
}

/** Whether `rule` denies by its table default. */
function deniesByDefault(rule: RuleName): boolean {
  const entry: RuleEntry | undefined = RULE_TABLE.find(({ name }) => name === rule)
  return entry?.actions.default.includes('Deny') === true
}

export function createDecide({
  view,
  routes = productRoutes(),
  operatorServiceAccount,
  denies = deniesByDefault,
}: DecideOptions): Decide {
  const router = new Router(routes)
  const writerOf = operatorWriter(operatorServiceAccount)
  return async (webhook, request) => {
    const { writer, exactOperator } = writerOf(request.userInfo)
    const route = router.find(webhook, request)
    if (!route) return { verdict: admitted(), writer }
    const decided = { rule: route.rule, route, writer }
    // The one limit on untrusted nesting, checked only for what a rule will read: a request no
    // route takes is allowed above, whatever its shape.
    if (nestsDeeperThan(request, MAX_NESTING))
      return {
        ...decided,
        verdict: failed(400, `the request is nested deeper than ${MAX_NESTING} levels`),
      }
    try {
      const context = { view, denies: denies(route.rule), exactOperator }
      return { ...decided, verdict: await route.handler(request, context) }
    } catch (error) {
      // A live read that failed is not a bug: say in-band what could not be read (the writer
      // retries) instead of deciding from a cache that may be stale (docs/enforcement.md).
      if (error instanceof ClusterReadError)
        return { ...decided, verdict: failed(503, error.message) }
      const message = `internal error while admitting: ${errorMessage(error)}`
      return { ...decided, verdict: failed(500, message, error) }
    }
  }
}
