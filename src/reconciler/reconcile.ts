/**
 * reconcile(key): read the cached object, compute its status with the pure rules of
 * policy/status-conditions.ts, and apply it only when it differs from what is stored (ignoring
 * lastTransitionTime). The watch then brings the new status back, and the next reconcile of the
 * key finds nothing to do.
 */

import type { Logger } from 'pino'
import type { KubeApi } from '../cluster/kube-api.ts'
import type { KubeView } from '../cluster/kube-view.ts'
import { VIEW_RESOURCES } from '../cluster/resources.ts'
import type { ObjectKey } from '../cluster/view.ts'
import { isRecord } from '../policy/kube.ts'
import { desiredStatus, mergeConditions, statusNeedsWrite } from '../policy/status-conditions.ts'
import type { ReconcileOutcome } from './queue.ts'
import { applyStatus } from './status-client.ts'

/** The kinds whose status this controller stamps. */
export const RECONCILED_KINDS = [
  'MCPServer',
  'MCPRemoteProxy',
  'VirtualMCPServer',
  'MCPWebhookConfig',
] as const

export interface ReconcileDeps {
  readonly api: KubeApi
  readonly view: Pick<KubeView, 'cached'>
  readonly logger: Logger
  /** Aborted when leadership is lost: no write may start after that. */
  readonly leadership: AbortSignal
  readonly now?: () => string
  readonly onWrite?: (kind: string) => void
}

/** `Kind/namespace/name`, the queue's key. */
export function keyOf(key: ObjectKey): string {
  return `${key.kind}/${key.namespace}/${key.name}`
}

export function parseKey(text: string): ObjectKey | undefined {
  const [kind, namespace, name, ...rest] = text.split('/')
  if (!kind || namespace === undefined || !name || rest.length > 0) return undefined
  if (!(RECONCILED_KINDS as readonly string[]).includes(kind)) return undefined
  return { kind: kind as ObjectKey['kind'], namespace, name }
}

export function createReconcile(deps: ReconcileDeps): (key: string) => Promise<ReconcileOutcome> {
  const now = deps.now ?? (() => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'))
  return async (text) => {
    const key = parseKey(text)
    const resource = VIEW_RESOURCES.find((candidate) => candidate.kind === key?.kind)
    if (!key || !resource) return { result: 'done' }
    const object = await deps.view.cached(key)
    if (!object) return { result: 'done' }
    const desired = desiredStatus(object)
    if (!desired || !statusNeedsWrite(object.status, desired)) return { result: 'done' }
    if (deps.leadership.aborted) return { result: 'done' }

    const current = isRecord(object.status) ? object.status.conditions : undefined
    const status: Record<string, unknown> = {
      conditions: mergeConditions(current, desired.conditions, now()),
    }
    if (desired.observedGeneration !== undefined)
      status['observedGeneration'] = desired.observedGeneration
    if (desired.configHash !== undefined) status['configHash'] = desired.configHash
    const outcome = await applyStatus(deps.api, resource, key, status)
    switch (outcome.result) {
      case 'written':
        deps.onWrite?.(key.kind)
        deps.logger.debug({ key: text }, 'status written')
        return { result: 'done' }
      case 'gone':
        return { result: 'done' }
      case 'retry':
        return { result: 'retry', error: new Error(outcome.reason) }
      case 'refused':
        deps.logger.error(
          { key: text, reason: outcome.reason },
          'status write refused; not retrying',
        )
        return { result: 'done' }
    }
  }
}
