/**
 * docs/enforcement.md#read-live-not-from-the-cache: a proxy Deployment's owner and RunConfig
 * ConfigMap are always read live, even when the cache agrees with the request (both may be equally
 * stale), with a deadline.
 */

import t from 'tap'
import { gatherProxyDeploymentFacts, gatherScaleFacts } from '../../src/admission/proxy-facts.ts'
import { requestFor } from '../../src/admission/request.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import type { ClusterView, ObjectKey, ReadOptions, ToolHiveKey } from '../../src/cluster/view.ts'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { NAMESPACE, proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

/** A cache and the "API server" behind it, which may disagree; counts live reads. */
class SplitView implements ClusterView {
  readonly liveReads: string[] = []
  synced = true
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
  referrersOf(target: ToolHiveKey) {
    return this.cache.referrersOf(target)
  }
  served = true
  serves() {
    return this.served
  }
  isSynced() {
    return this.synced
  }
  isTerminating() {
    return false
  }
  isReady() {
    return true
  }
}

const OTHER_WRITER = { exactOperator: false }

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
    OTHER_WRITER,
  )
  return { facts, liveReads: view.liveReads }
}

const scaleOf = (name: string) =>
  requestFor(
    {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name, namespace: NAMESPACE },
      spec: { replicas: 3 },
    },
    { operation: 'UPDATE', namespace: NAMESPACE },
  )

t.test('a stale cache that agrees with a stale request is not trusted', async (t) => {
  // An operator's get-modify-update keeps the old values while the service's watch lags.
  const oldMap = runConfigFor('MCPServer', 'demo', '{"name":"old"}')
  const deployment = deploymentCarrying({
    [ANNOTATIONS.mcpServerGeneration]: '4',
    [ANNOTATIONS.runConfigChecksum]: effectiveContentChecksum(oldMap)!,
  })
  const { facts, liveReads } = await gather([stale, oldMap], [fresh, map], deployment)
  t.same(liveReads.sort(), ['ConfigMap/demo-runconfig', 'MCPServer/demo'])
  t.equal(facts.owner?.metadata?.generation, 5, 'the live owner')
  t.equal(effectiveContentChecksum(facts.runConfigMap!), checksum, 'the live ConfigMap')
})

t.test('every write is settled live, whatever the request carries', async (t) => {
  const carrying = deploymentCarrying({
    [ANNOTATIONS.mcpServerGeneration]: '5',
    [ANNOTATIONS.runConfigChecksum]: checksum,
  })
  for (const deployment of [carrying, deploymentCarrying(undefined)]) {
    for (const cache of [[], [fresh, map]]) {
      const { facts, liveReads } = await gather(cache, [fresh, map], deployment)
      t.same(liveReads.sort(), ['ConfigMap/demo-runconfig', 'MCPServer/demo'])
      t.equal(facts.owner?.metadata?.uid, 'demo-uid')
    }
  }
})

t.test('every read of a Scale carries the deadline, the cache-miss one too', async (t) => {
  const signals: (AbortSignal | undefined)[] = []
  const view = new SplitView(
    new MemoryView([]),
    new MemoryView([fresh, proxyDeployment('MCPServer', 'demo')]),
  )
  view.synced = false
  const get = view.get.bind(view)
  view.get = (key, options) => {
    signals.push(options?.signal)
    return get(key, options)
  }
  await gatherScaleFacts(scaleOf('demo'), view)
  t.equal(signals.length, 3, 'the Deployment, the owner from the cache, the owner live')
  t.ok(
    signals.every((signal) => signal instanceof AbortSignal && signal === signals[0]),
    'one deadline for all',
  )
})

t.test('the live reads carry one deadline', async (t) => {
  const signals: (AbortSignal | undefined)[] = []
  const abortedWhenRead: boolean[] = []
  const view = new SplitView(new MemoryView([]), new MemoryView([fresh, map]))
  const get = view.get.bind(view)
  view.get = (key, options) => {
    signals.push(options?.signal)
    abortedWhenRead.push(options?.signal?.aborted ?? true)
    return get(key, options)
  }
  await gatherProxyDeploymentFacts(
    requestFor(deploymentCarrying(undefined), { operation: 'CREATE', namespace: NAMESPACE }),
    view,
    OTHER_WRITER,
  )
  t.equal(signals.length, 2)
  t.ok(signals[0] instanceof AbortSignal && signals[0] === signals[1], 'shared by both reads')
  t.same(abortedWhenRead, [false, false], 'not yet expired when the reads start')
  t.equal(signals[0]?.aborted, true, 'ended once the reads settled: nothing is left running')
})

t.test('the stored Deployment is passed on for the generation floor', async (t) => {
  const stored = deploymentCarrying({ [ANNOTATIONS.mcpServerGeneration]: '9' })
  const view = new SplitView(new MemoryView([fresh, map]), new MemoryView([fresh, map]))
  const request = requestFor(deploymentCarrying(undefined), {
    operation: 'UPDATE',
    namespace: NAMESPACE,
    oldObject: stored,
  })
  t.equal((await gatherProxyDeploymentFacts(request, view, OTHER_WRITER)).stored, stored)
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
  const facts = await gatherScaleFacts(scaleOf('demo'), view)
  t.same(view.liveReads, ['Deployment/demo'])
  t.equal(facts.owner?.metadata?.name, 'demo')
  t.equal(facts.deployment?.metadata?.name, 'demo')
})

t.test('a Scale with no stdio MCPServer of its name is answered from the cache', async (t) => {
  const http = workload('MCPServer', 'web', { spec: { transport: 'streamable-http' } })
  const remote = workload('MCPRemoteProxy', 'remote')
  const server = new MemoryView([
    http,
    remote,
    proxyDeployment('MCPServer', 'web'),
    proxyDeployment('MCPRemoteProxy', 'remote'),
    // Not in the cache yet: a server the watch has not delivered is not looked for live.
    workload('MCPServer', 'unseen'),
  ])
  for (const name of ['web', 'remote', 'unseen', 'plain-app']) {
    const view = new SplitView(new MemoryView([http, remote]), server)
    t.same(await gatherScaleFacts(scaleOf(name), view), { deployment: undefined, owner: undefined })
    t.same(view.liveReads, [], `${name}: no live read`)
  }
})

t.test('before the cache has synced, every Scale is settled live', async (t) => {
  const deployment = proxyDeployment('MCPServer', 'demo', { replicas: 1 })
  const view = new SplitView(new MemoryView([]), new MemoryView([fresh, deployment]))
  view.synced = false
  const facts = await gatherScaleFacts(scaleOf('demo'), view)
  t.same(view.liveReads, ['Deployment/demo', 'MCPServer/demo'])
  t.equal(facts.owner?.metadata?.uid, 'demo-uid')
})

t.test('no MCPServer served: no Scale is capped, and nothing is read', async (t) => {
  const deployment = proxyDeployment('MCPServer', 'demo', { replicas: 1 })
  const view = new SplitView(new MemoryView([fresh]), new MemoryView([fresh, deployment]))
  view.served = false
  view.synced = false
  t.same(await gatherScaleFacts(scaleOf('demo'), view), { deployment: undefined, owner: undefined })
  t.same(view.liveReads, [])
})
