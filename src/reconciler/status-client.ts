/**
 * Writes status by server-side apply on the `status` subresource with the service's own field
 * manager, **without force**: a field another manager owns is never taken over; the API server
 * answers 409 naming it instead, and the caller leaves it to its owner. The applied object holds
 * only this controller's conditions, so conditions of other types are left alone (`conditions`
 * is a list-map keyed by `type` in the CRDs). Spec, metadata and other objects are never written.
 * The one write that is not an apply removes a validation verdict the reconciler owns
 * (`removeStatusFields`).
 */

import type { KubeApi } from '../cluster/kube-api.ts'
import { apiVersionOf, resourcePath } from '../cluster/resources.ts'
import type { ViewResource } from '../cluster/resources.ts'
import { errorMessage } from '../policy/messages/render.ts'

export const FIELD_MANAGER = 'mcp-admission-status'

type ApplyOutcome =
  | { readonly result: 'written' }
  /** The object is gone: nothing left to do. */
  | { readonly result: 'gone' }
  /** Another field manager owns these fields (`.status.conditions[type="X"]…`). */
  | { readonly result: 'conflict'; readonly fields: readonly string[] }
  /** Throttling, a server error or no answer: try again later. */
  | { readonly result: 'retry'; readonly reason: string }
  /** Refused for good (e.g. 422): retrying the same write cannot help. */
  | { readonly result: 'refused'; readonly reason: string }

/**
 * Applies `status` to one object; never throws. `signal` abandons the write (leadership lost):
 * the outcome is then 'retry', and the caller must not count it as written.
 */
export async function applyStatus(
  api: Pick<KubeApi, 'write'>,
  resource: ViewResource,
  object: { readonly namespace: string; readonly name: string },
  status: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<ApplyOutcome> {
  const body = {
    apiVersion: apiVersionOf(resource),
    kind: resource.kind,
    metadata: { name: object.name, namespace: object.namespace },
    status,
  }
  // JSON is YAML, so the apply body needs no YAML encoder.
  return writeStatus(api, resource, object, body, 'application/apply-patch+yaml', signal)
}

/**
 * Removes `fields` of `status` the reconciler owns, from the object as read at `resourceVersion`;
 * never throws. Not by applying a status without them: once they are its only fields, server-side
 * apply takes `status` itself away, and a CRD whose schema types `status` as an object refuses
 * the `null` (422). A merge patch sets them to null and leaves `status: {}`; the
 * `resourceVersion` it carries makes it conditional, so a change since the read is a 409 and the
 * caller reads again ('retry') instead of removing what someone else wrote meanwhile. The API
 * server drops removed fields from every manager's managedFields.
 */
export async function removeStatusFields(
  api: Pick<KubeApi, 'write'>,
  resource: ViewResource,
  object: { readonly namespace: string; readonly name: string; readonly resourceVersion: string },
  fields: readonly string[],
  signal?: AbortSignal,
): Promise<ApplyOutcome> {
  const body = {
    metadata: { resourceVersion: object.resourceVersion },
    status: Object.fromEntries(fields.map((field) => [field, null])),
  }
  return writeStatus(api, resource, object, body, 'application/merge-patch+json', signal)
}

async function writeStatus(
  api: Pick<KubeApi, 'write'>,
  resource: ViewResource,
  object: { readonly namespace: string; readonly name: string },
  body: unknown,
  contentType: string,
  signal: AbortSignal | undefined,
): Promise<ApplyOutcome> {
  try {
    const response = await api.write('PATCH', `${resourcePath(resource, object)}/status`, body, {
      contentType,
      query: { fieldManager: FIELD_MANAGER },
      signal,
    })
    const message = response.body?.['message']
    const reason = `${response.status} ${typeof message === 'string' ? message : ''}`.trim()
    if (response.status === 200 || response.status === 201) return { result: 'written' }
    if (response.status === 404) return { result: 'gone' }
    if (response.status === 409) {
      const fields = conflictFields(response.body)
      // A 409 without field causes is an optimistic-concurrency conflict: just try again.
      return fields.length > 0 ? { result: 'conflict', fields } : { result: 'retry', reason }
    }
    if (response.status === 429 || response.status >= 500) return { result: 'retry', reason }
    return { result: 'refused', reason }
  } catch (error) {
    return { result: 'retry', reason: errorMessage(error) }
  }
}

/** The `field` of each cause of a 409 Status (`details.causes[].field`). */
function conflictFields(body: Record<string, unknown> | undefined): string[] {
  const details = body?.['details']
  const causes =
    typeof details === 'object' && details !== null
      ? (details as Record<string, unknown>)['causes']
      : undefined
  if (!Array.isArray(causes)) return []
  return causes
    .map((cause: unknown) =>
      typeof cause === 'object' && cause !== null
        ? (cause as Record<string, unknown>)['field']
        : undefined,
    )
    .filter((field): field is string => typeof field === 'string')
}
