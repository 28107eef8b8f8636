/**
 * What the validating rules read from the view: the objects a workload's references name, looked
 * up where the cluster serves their kind, and the referrers of an object being deleted (live
 * where the rule denies), after its exemptions.
 */

import t from 'tap'
import { requestFor } from '../../src/admission/request.ts'
import type { AdmissionRequest } from '../../src/admission/review.ts'
import { gatherDeleteFacts, gatherWorkloadFacts } from '../../src/admission/validation-facts.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { ClusterReadError } from '../../src/cluster/view.ts'
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
  override referrersOf(target: ToolHiveKey, options?: ReadOptions) {
    this.reads.push(`referrers of ${target.kind}/${target.name}${options?.live ? ' live' : ''}`)
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
    targets: new Map([['MCPWebhookConfig/hooks', undefined]]),
  })
  t.same(empty.reads, ['MCPWebhookConfig/hooks'], 'from the cache (a miss is read live there)')
  t.same(await gatherWorkloadFacts(writing(server('a')), new CountingView([config])), {
    targets: new Map([['MCPWebhookConfig/hooks', config]]),
  })
  const twice = server('a', { groupRef: { name: 'g' }, toolConfigRef: { name: 'g' } })
  const view = new CountingView()
  const facts = await gatherWorkloadFacts(writing(twice), view)
  t.same([...(facts.targets?.keys() ?? [])], ['MCPGroup/g', 'MCPToolConfig/g'], 'by kind and name')
  t.same(view.reads, ['MCPGroup/g', 'MCPToolConfig/g'])
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

const deleting = requestFor(undefined, {
  operation: 'DELETE',
  namespace: 'team',
  oldObject: config,
})
const HOOKS = { kind: 'MCPWebhookConfig', name: 'hooks' }

t.test('the referrers of a deleted object: live where the rule denies, else cached', async (t) => {
  const view = new CountingView([server('b'), server('a'), server('c', {}), config])
  const facts = await gatherDeleteFacts(deleting, view, {
    view,
    denies: true,
    exactOperator: false,
  })
  t.same(
    'referrers' in facts && facts.referrers.map(({ kind, name, path }) => ({ kind, name, path })),
    [
      { kind: 'MCPServer', name: 'a', path: 'spec.webhookConfigRef.name' },
      { kind: 'MCPServer', name: 'b', path: 'spec.webhookConfigRef.name' },
    ],
  )
  t.same(view.reads, ['referrers of MCPWebhookConfig/hooks live'])
  await gatherDeleteFacts(deleting, view, { view, denies: false, exactOperator: false })
  t.same(view.reads.at(-1), 'referrers of MCPWebhookConfig/hooks', 'from the cache')
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'hooks', namespace: 'team' } }
  const deletingPod = requestFor(undefined, {
    operation: 'DELETE',
    namespace: 'team',
    oldObject: pod,
  })
  t.same(
    await gatherDeleteFacts(deletingPod, view, { view, denies: true, exactOperator: false }),
    { kind: 'Pod', name: 'hooks', referrers: [] },
    'no ToolHive kind, no referrers',
  )
  t.same(
    await gatherDeleteFacts(clusterScoped(deleting), view, {
      view,
      denies: true,
      exactOperator: false,
    }),
    { ...HOOKS, referrers: [] },
    'no namespace',
  )
})

t.test('a DeleteCollection: each review names no object, its stored object does', async (t) => {
  const view = new CountingView([server('a'), config])
  const swept = { ...deleting }
  delete swept.name
  const facts = await gatherDeleteFacts(swept, view, { view, denies: true, exactOperator: false })
  t.same(
    'referrers' in facts && [facts.name, facts.referrers.map(({ name }) => name)],
    ['hooks', ['a']],
    'judged as the DELETE of that object is',
  )
})

t.test('exemptions are decided before anything is listed', async (t) => {
  const terminating = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'team', deletionTimestamp: '2026-11-29T00:00:00Z' },
  }
  const view = new CountingView([server('a'), config, terminating])
  t.same(await gatherDeleteFacts(deleting, view, { view, denies: true, exactOperator: false }), {
    ...HOOKS,
    exempt: 'namespace team is terminating',
  })
  const open = new CountingView([server('a'), config])
  for (const username of [
    'system:serviceaccount:kube-system:namespace-controller',
    'system:serviceaccount:kube-system:generic-garbage-collector',
    'system:kube-controller-manager',
  ]) {
    const request = { ...deleting, userInfo: { username } }
    t.same(
      await gatherDeleteFacts(request, open, { view: open, denies: true, exactOperator: false }),
      {
        ...HOOKS,
        exempt: `deleted by ${username}`,
      },
    )
  }
  t.same([...view.reads, ...open.reads], [], 'nothing listed')
})

t.test('a failed read is said, not thrown: the guard never holds a delete up', async (t) => {
  class Unreadable extends MemoryView {
    override referrersOf(): never {
      throw new ClusterReadError('the mcpservers of namespace team', new Error('timeout'))
    }
  }
  const view = new Unreadable()
  t.same(await gatherDeleteFacts(deleting, view, { view, denies: true, exactOperator: false }), {
    ...HOOKS,
    unread: 'cannot read the mcpservers of namespace team from the API server: timeout',
  })
  class Broken extends MemoryView {
    override referrersOf(): never {
      throw new Error('a bug')
    }
  }
  const broken = new Broken()
  await t.rejects(
    gatherDeleteFacts(deleting, broken, { view: broken, denies: true, exactOperator: false }),
    /a bug/,
    'a bug is no read error',
  )
})
