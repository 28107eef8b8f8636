/**
 * Writes status by server-side apply on the `status` subresource with the service's own field
 * manager. The applied object holds only the fields this controller owns, so conditions of other
 * types (owned by the ToolHive operator or anyone else) are left alone: `conditions` is a
 * list-map keyed by `type` in the CRDs. Spec, metadata and other objects are never written.
 */

import type { KubeApi } from '../cluster/kube-api.ts'
import { apiVersionOf, resourcePath } from '../cluster/resources.ts'
import type { ViewResource } from '../cluster/resources.ts'

export const FIELD_MANAGER = 'mcp-admission-status'

export type ApplyOutcome =
  | { readonly result: 'written' }
  /** The object is gone: nothing left to do. */
  | { readonly result: 'gone' }
  /** Conflict, throttling, a server error or no answer: try again later. */
  | { readonly result: 'retry'; readonly reason: string }
  /** Refused for good (e.g. 422): retrying the same write cannot help. */
  | { readonly result: 'refused'; readonly reason: string }

/** Applies `status` to one object; never throws. */
export async function applyStatus(
  api: KubeApi,
  resource: ViewResource,
  object: { readonly namespace: string; readonly name: string },
  status: Record<string, unknown>,
): Promise<ApplyOutcome> {
  const body = {
    apiVersion: apiVersionOf(resource),
    kind: resource.kind,
    metadata: { name: object.name, namespace: object.namespace },
    status,
  }
  try {
    const response = await api.write('PATCH', `${resourcePath(resource, object)}/status`, body, {
      // JSON is YAML, so the apply body needs no YAML encoder.
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force: true },
    })
    const message = response.body?.['message']
    const reason = `${response.status} ${typeof message === 'string' ? message : ''}`.trim()
    if (response.status === 200 || response.status === 201) return { result: 'written' }
    if (response.status === 404) return { result: 'gone' }
    if (response.status === 409 || response.status === 429 || response.status >= 500)
      return { result: 'retry', reason }
    return { result: 'refused', reason }
  } catch (error) {
    return { result: 'retry', reason: error instanceof Error ? error.message : String(error) }
  }
}
