/**
 * DESIGN §4.2 freshness: the cache answers only when it is the owner's incarnation and agrees
 * with the request; everything else is settled by a live read.
 */

import t from 'tap'
import { gatherProxyDeploymentFacts, gatherScaleFacts } from '../../src/admission/proxy-facts.ts'
import { requestFor } from '../../src/admission/request.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import type { ClusterView, ObjectKey, ReadOptions } from '../../src/cluster/view.ts'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import type { KubeObject } from '../../src/policy/kube.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { NAMESPACE, proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

/** A cache and the "API server" behind it, which may disagree; counts live reads. */
class SplitView implements ClusterView {
  readonly liveReads: string[] = []
  readonly cache: MemoryView
  readonly server: MemoryView
  constructor(cache: MemoryView, server: MemoryView) {
    this.cache = cache
    this.server = server
  }
  async get(key: ObjectKey, options: ReadOptions = {}) {
    if (!options.live) return this.cache.get(key)
    this.liveReads.push(`${key.kind}/${key.name}`)
    return this.server.get(key)
  }
  serversReferencingWebhookConfig(namespace: string, name: string) {
    return this.cache.serversReferencingWebhookConfig(namespace, name)
  }
  isSynced() {
    return true
  }
}

const fresh = workload('MCPServer', 'demo', { generation: 5 })
const stale = workload('MCPServer', 'demo', { generation: 4 })
const map = runConfigFor('MCPServer', 'demo')
const checksum = effectiveContentChecksum(map)!

function deploymentCarrying(annotations: Record<string, string> | undefined): KubeObject {
  return proxyDeployment('MCPServer', 'demo', annotations ? { podAnnotations: annotations } : {})
}

async function gather(cache: KubeObject[], server: KubeObject[], deployment: KubeObject) {
  const view = new SplitView(new MemoryView(cache), new MemoryView(server))
  const facts = await gatherProxyDeploymentFacts(
    requestFor(deployment, { operation: 'CREATE', namespace: NAMESPACE }),
    view,
  )
  return { facts, liveReads: view.liveReads }
}

t.test('a cache that agrees with the request is used as is', async (t) => {
  const deployment = deploymentCarrying({
    [ANNOTATIONS.mcpServerGeneration]: '5',
    [ANNOTATIONS.runConfigChecksum]: checksum,
  })
  const { facts, liveReads } = await gather([fresh, map], [fresh, map], deployment)
  t.same(liveReads, [])
  t.equal(facts.owner?.metadata?.generation, 5)
})

t.test('a request without the values (a first write) is settled live', async (t) => {
  const { facts, liveReads } = await gather(
    [stale, map],
    [fresh, map],
    deploymentCarrying(undefined),
  )
  t.same(liveReads.sort(), ['ConfigMap/demo-runconfig', 'MCPServer/demo'])
  t.equal(facts.owner?.metadata?.generation, 5, 'the live owner, not the stale cache')
})

t.test('a request that disagrees with the cache is settled live', async (t) => {
  const deployment = deploymentCarrying({
    [ANNOTATIONS.mcpServerGeneration]: '5',
    [ANNOTATIONS.runConfigChecksum]: 'other',
  })
  const { facts, liveReads } = await gather([stale, map], [fresh, map], deployment)
  t.same(liveReads.sort(), ['ConfigMap/demo-runconfig', 'MCPServer/demo'])
  t.equal(facts.owner?.metadata?.generation, 5)
})

t.test('a missing cache entry or another incarnation is settled live', async (t) => {
  const carrying = deploymentCarrying({
    [ANNOTATIONS.mcpServerGeneration]: '5',
    [ANNOTATIONS.runConfigChecksum]: checksum,
  })
  const missing = await gather([], [fresh, map], carrying)
  t.same(missing.liveReads.sort(), ['ConfigMap/demo-runconfig', 'MCPServer/demo'])
  t.equal(missing.facts.runConfigMap?.metadata?.name, 'demo-runconfig')

  const recreated = workload('MCPServer', 'demo', { generation: 5, uid: 'previous-life' })
  const incarnation = await gather([recreated, map], [fresh, map], carrying)
  t.same(incarnation.liveReads, ['MCPServer/demo'])
  t.equal(incarnation.facts.owner?.metadata?.uid, 'demo-uid')
})

t.test('the stored Deployment is passed on for the generation floor', async (t) => {
  const stored = deploymentCarrying({ [ANNOTATIONS.mcpServerGeneration]: '9' })
  const view = new SplitView(new MemoryView([fresh, map]), new MemoryView([fresh, map]))
  const request = requestFor(deploymentCarrying(undefined), {
    operation: 'UPDATE',
    namespace: NAMESPACE,
    oldObject: stored,
  })
  t.equal((await gatherProxyDeploymentFacts(request, view)).stored, stored)
})

t.test('a Deployment that is not a proxy reads nothing', async (t) => {
  const plain = {
    ...proxyDeployment('MCPServer', 'demo'),
    metadata: { name: 'plain', namespace: NAMESPACE },
  }
  const { facts, liveReads } = await gather([fresh, map], [fresh, map], plain)
  t.same(liveReads, [])
  t.same(facts, { owner: undefined, runConfigMap: undefined, stored: undefined })
})

t.test('a Scale reads its Deployment live and the owner from the cache', async (t) => {
  const deployment = proxyDeployment('MCPServer', 'demo', { replicas: 1 })
  const view = new SplitView(new MemoryView([fresh]), new MemoryView([fresh, deployment]))
  const scale: KubeObject = {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name: 'demo', namespace: NAMESPACE },
    spec: { replicas: 3 },
  }
  const facts = await gatherScaleFacts(
    requestFor(scale, { operation: 'UPDATE', namespace: NAMESPACE }),
    view,
  )
  t.same(view.liveReads, ['Deployment/demo'])
  t.equal(facts.owner?.metadata?.name, 'demo')
  t.equal(facts.deployment?.metadata?.name, 'demo')
})
