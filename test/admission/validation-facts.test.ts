/**
 * What the validating rules read from the view: the objects a workload's references name, looked
 * up where the cluster serves their kind, and the referrers of an object being deleted, live.
 */

import t from 'tap'
import { requestFor } from '../../src/admission/request.ts'
import type { AdmissionRequest } from '../../src/admission/review.ts'
import { gatherReferrers, gatherWorkloadFacts } from '../../src/admission/validation-facts.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import type { ObjectKey, ReadOptions, ToolHiveKey } from '../../src/cluster/view.ts'
import type { ToolHiveKind } from '../../src/policy/kinds.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'

const GROUP = 'toolhive.stacklok.dev'
const server = (name: string, spec: unknown = { webhookConfigRef: { name: 'hooks' } }) => ({
  apiVersion: `${GROUP}/v1beta1`,
  kind: 'MCPServer',
  metadata: { name, namespace: 'team' },
  spec,
})
const config = {
  apiVersion: `${GROUP}/v1alpha1`,
  kind: 'MCPWebhookConfig',
  metadata: { name: 'hooks', namespace: 'team' },
}

/** A MemoryView that records its reads. */
class CountingView extends MemoryView {
  readonly reads: string[] = []
  override get(key: ObjectKey, options?: ReadOptions) {
    this.reads.push(`${key.kind}/${key.name}${options?.live ? ' live' : ''}`)
    return super.get(key)
  }
  override referrersOf(target: ToolHiveKey) {
    this.reads.push(`referrers of ${target.kind}/${target.name}`)
    return super.referrersOf(target)
  }
}

const writing = (object: KubeObject) =>
  requestFor(object, { operation: 'CREATE', namespace: 'team' })

/** `request` as for a cluster-scoped object: no namespace. */
function clusterScoped(request: AdmissionRequest): AdmissionRequest {
  const copy = { ...request }
  delete copy.namespace
  return copy
}

t.test('the objects a workload names are looked up, once each', async (t) => {
  const empty = new CountingView()
  t.same(await gatherWorkloadFacts(writing(server('a')), empty), {
    missing: [{ kind: 'MCPWebhookConfig', name: 'hooks' }],
  })
  t.same(empty.reads, ['MCPWebhookConfig/hooks'], 'from the cache (a miss is read live there)')
  t.same(await gatherWorkloadFacts(writing(server('a')), new CountingView([config])), {
    missing: [],
  })
})

t.test('nothing is looked up where nothing can be', async (t) => {
  const serves = (kind: ToolHiveKind) => kind !== 'MCPWebhookConfig'
  const cases: [string, ReturnType<typeof writing>, CountingView][] = [
    ['no reference', writing(server('a', {})), new CountingView()],
    ['the kind is not served', writing(server('a')), new CountingView([], { serves })],
    ['no namespace', clusterScoped(writing(server('a'))), new CountingView()],
    ['no object', { ...writing(server('a')), object: null }, new CountingView()],
    [
      'a field of another kind, which its CRD prunes',
      writing({ ...server('a'), kind: 'VirtualMCPServer' }),
      new CountingView(),
    ],
  ]
  for (const [name, request, view] of cases) {
    t.same(await gatherWorkloadFacts(request, view), {}, name)
    t.same(view.reads, [], `${name}: no read`)
  }
})

t.test('the referrers of a deleted object are listed live', async (t) => {
  const view = new CountingView([server('b'), server('a'), server('c', {}), config])
  const deleting = requestFor(undefined, {
    operation: 'DELETE',
    namespace: 'team',
    oldObject: config,
  })
  t.same(await gatherReferrers(deleting, view), {
    name: 'hooks',
    referrers: [
      { kind: 'MCPServer', name: 'a', path: 'spec.webhookConfigRef.name' },
      { kind: 'MCPServer', name: 'b', path: 'spec.webhookConfigRef.name' },
    ],
  })
  t.same(view.reads, ['referrers of MCPWebhookConfig/hooks'])
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'hooks', namespace: 'team' } }
  t.same(
    await gatherReferrers(
      requestFor(undefined, { operation: 'DELETE', namespace: 'team', oldObject: pod }),
      view,
    ),
    { name: 'hooks', referrers: [] },
    'no ToolHive kind, no referrers',
  )
  t.same(
    await gatherReferrers(clusterScoped(deleting), view),
    { name: 'hooks', referrers: [] },
    'no namespace',
  )
})
