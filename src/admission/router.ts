/** Routes a request to its handler by webhook, (group, kind, subresource) and operation. */

import type { RuleName } from '../policy/rules.ts'
import type { Handler } from './handler.ts'
import type { AdmissionRequest, Operation, WebhookName } from './review.ts'

export interface Route {
  readonly webhook: WebhookName
  /** Group and kind of `request.kind`, the object as the webhook sees it. */
  readonly group: string
  readonly kind: string
  /** `''` for the main resource. */
  readonly subResource: string
  /**
   * The REST resource the route answers (`request.resource.resource`); required for subresources,
   * whose kind is shared (Scale: deployments, statefulsets…). Also the route's metric label.
   */
  readonly resource?: string
  readonly operations: readonly Operation[]
  /** The rule that answers (`policy/rules.ts`): its name is the one audit records and reports use. */
  readonly rule: RuleName
  readonly handler: Handler
}

/** What routing reads of a request (a malformed envelope may still have these readable). */
export interface RoutedFields {
  readonly kind: Pick<AdmissionRequest['kind'], 'group' | 'kind'>
  readonly subResource?: string | undefined
  readonly operation: Operation
  readonly resource: Pick<AdmissionRequest['resource'], 'resource'>
}

export class Router {
  readonly #routes = new Map<string, Route[]>()

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      const key = routeKey(route.webhook, route.group, route.kind, route.subResource)
      this.#routes.set(key, [...(this.#routes.get(key) ?? []), route])
    }
  }

  /** The route for a request, or undefined when nothing applies (the request is allowed as is). */
  find(webhook: WebhookName, request: RoutedFields): Route | undefined {
    const { group, kind } = request.kind
    const candidates = this.#routes.get(routeKey(webhook, group, kind, request.subResource ?? ''))
    return candidates?.find(
      (route) =>
        route.operations.includes(request.operation) &&
        (route.resource === undefined || route.resource === request.resource.resource),
    )
  }
}

function routeKey(webhook: WebhookName, group: string, kind: string, subResource: string): string {
  return `${webhook} ${group} ${kind} ${subResource}`
}
