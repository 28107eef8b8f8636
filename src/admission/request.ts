/**
 * Builds admission requests for objects, as the API server would (the CLI's writes, and tests); an
 * AdmissionReview envelope around one is the tests' to build (test/helpers/objects.ts).
 */

import { randomUUID } from 'node:crypto'
import { LIVE_ONLY_RESOURCES, VIEW_RESOURCES } from '../cluster/resources.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import type { AdmissionRequest, GroupVersionKind, Operation } from './review.ts'

/** Resources whose plural is not the lower-cased kind plus `s`. */
const IRREGULAR_PLURALS: Record<string, string> = {
  NetworkPolicy: 'networkpolicies',
  PodSecurityPolicy: 'podsecuritypolicies',
  Ingress: 'ingresses',
  IngressClass: 'ingressclasses',
  StorageClass: 'storageclasses',
  PriorityClass: 'priorityclasses',
  RuntimeClass: 'runtimeclasses',
  Endpoints: 'endpoints',
}

/** The group/version/kind of an object from its apiVersion and kind. */
function gvkOf(object: KubeObject): GroupVersionKind {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : ''
  const slash = apiVersion.indexOf('/')
  return {
    group: slash === -1 ? '' : apiVersion.slice(0, slash),
    version: slash === -1 ? apiVersion : apiVersion.slice(slash + 1),
    kind: typeof object.kind === 'string' ? object.kind : '',
  }
}

/** Plurals of the kinds the service reads, from their one table (`MCPRemoteProxy` → `mcpremoteproxies`). */
const KNOWN_PLURALS: ReadonlyMap<string, string> = new Map(
  [...VIEW_RESOURCES, ...LIVE_ONLY_RESOURCES].map((resource) => [resource.kind, resource.plural]),
)

/** The REST resource name of a kind (`MCPServer` → `mcpservers`). */
export function resourceOf(kind: string): string {
  return KNOWN_PLURALS.get(kind) ?? IRREGULAR_PLURALS[kind] ?? `${kind.toLowerCase()}s`
}

interface RequestOptions {
  readonly operation: Operation
  readonly namespace?: string
  readonly oldObject?: KubeObject
  readonly uid?: string
}

/** A request for writing `object` (or deleting `oldObject`), like the API server sends it. */
export function requestFor(
  object: KubeObject | undefined,
  options: RequestOptions,
): AdmissionRequest {
  const subject = object ?? options.oldObject ?? {}
  const gvk = gvkOf(subject)
  const name = subject.metadata?.name
  const namespace = options.namespace ?? subject.metadata?.namespace
  return {
    uid: options.uid ?? randomUUID(),
    kind: gvk,
    resource: { group: gvk.group, version: gvk.version, resource: resourceOf(gvk.kind) },
    operation: options.operation,
    ...(typeof name === 'string' ? { name } : {}),
    ...(typeof namespace === 'string' ? { namespace } : {}),
    object: object ?? null,
    oldObject: options.oldObject ?? null,
    dryRun: false,
  }
}
