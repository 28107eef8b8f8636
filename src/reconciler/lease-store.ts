/**
 * The one Lease an elector campaigns for, as data and as a store: the real store is the cluster
 * (through KubeApi); tests substitute an in-memory one. Writes report what happened as values;
 * only a request that got no answer throws.
 */

import type { KubeApi } from '../cluster/kube-api.ts'
import { pathSegment } from '../cluster/resources.ts'

export interface LeaseSpec {
  readonly holderIdentity?: string
  readonly leaseDurationSeconds?: number
  readonly acquireTime?: string
  readonly renewTime?: string
  readonly leaseTransitions?: number
  /** Fields we do not manage (strategy, preferredHolder) are written back as read. */
  readonly [field: string]: unknown
}

export interface Lease {
  readonly apiVersion: 'coordination.k8s.io/v1'
  readonly kind: 'Lease'
  readonly metadata: {
    readonly name: string
    readonly namespace: string
    readonly resourceVersion?: string
    readonly [field: string]: unknown
  }
  readonly spec: LeaseSpec
}

export type LeaseWrite =
  | { readonly outcome: 'written'; readonly lease: Lease }
  /** Someone else wrote first: the Lease exists already, or its resourceVersion moved on. */
  | { readonly outcome: 'conflict' }
  | { readonly outcome: 'refused'; readonly status: number; readonly message: string }

/** The one Lease an elector campaigns for. Calls throw only when no answer came in time. */
export interface LeaseStore {
  /** The Lease, or `undefined` when it does not exist. */
  get(signal: AbortSignal): Promise<Lease | undefined>
  create(lease: Lease, signal: AbortSignal): Promise<LeaseWrite>
  /** Conditional on `lease.metadata.resourceVersion`: a write since then makes it a conflict. */
  update(lease: Lease, signal: AbortSignal): Promise<LeaseWrite>
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}

/** The Lease in the cluster: 200/201 written, 409 a conflict, any other status refused. */
export function kubeLeaseStore(
  api: Pick<KubeApi, 'get' | 'write'>,
  namespace: string,
  name: string,
): LeaseStore {
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${pathSegment(namespace)}/leases`
  const path = `${collection}/${pathSegment(name)}`
  return {
    get: async (signal) => {
      const body = await api.get(path, {}, signal)
      return body && asLease(body)
    },
    create: async (lease, signal) =>
      writeOutcome(await api.write('POST', collection, lease, { signal })),
    update: async (lease, signal) => writeOutcome(await api.write('PUT', path, lease, { signal })),
  }
}

function writeOutcome(result: {
  status: number
  body: Record<string, unknown> | undefined
}): LeaseWrite {
  const { status, body } = result
  if ((status === 200 || status === 201) && body)
    return { outcome: 'written', lease: asLease(body) }
  if (status === 409) return { outcome: 'conflict' }
  const message = body?.['message']
  return { outcome: 'refused', status, message: typeof message === 'string' ? message : '' }
}

/** A Lease as the API server returns it; a Lease created without a spec reads as an empty one. */
function asLease(body: Record<string, unknown>): Lease {
  const lease = body as unknown as Omit<Lease, 'spec'> & { readonly spec?: LeaseSpec }
  return { ...lease, spec: lease.spec ?? {} }
}
