/**
 * The stdio cap on `deployments/scale` (docs/enforcement.md#proxy-deployments-field-by-field),
 * decided from the Scale and the facts the webhook gathered: only a Scale above one replica of a
 * stdio MCPServer's own proxy is changed.
 */

import t from 'tap'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { isRefused } from '../../src/policy/result.ts'
import { capStdioScale } from '../../src/policy/stdio-scale.ts'
import type { ScaleFacts } from '../../src/policy/stdio-scale.ts'
import { NAMESPACE, proxyDeployment, workload } from '../helpers/proxy.ts'

/** An autoscaling/v1 Scale asking for `replicas`. */
function scale(replicas: unknown): KubeObject {
  return scaleWith({ replicas })
}

/** A Scale with `spec` as given, or none at all when undefined. */
function scaleWith(spec: unknown): KubeObject {
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name: 'demo', namespace: NAMESPACE },
    ...(spec === undefined ? {} : { spec }),
  }
}

/** Facts for a `demo` proxy whose owning MCPServer has `transport` (omitted when undefined). */
function stdioFacts(transport?: unknown): ScaleFacts {
  return {
    deployment: proxyDeployment('MCPServer', 'demo'),
    owner: workload('MCPServer', 'demo', { spec: transport === undefined ? {} : { transport } }),
  }
}

function cap(object: KubeObject, facts: ScaleFacts) {
  const before = structuredClone(object)
  const result = capStdioScale(object, facts)
  if (isRefused(result)) throw new Error('capStdioScale never refuses')
  return { before, result }
}

t.test('a stdio MCPServer proxy is capped at one replica, with a warning', async (t) => {
  const cases: [string, unknown][] = [
    ['transport absent', undefined],
    ['transport empty', ''],
    ['transport null', null],
    ['transport stdio', 'stdio'],
  ]
  for (const [label, transport] of cases) {
    const { result } = cap(scale(3), stdioFacts(transport))
    t.same(result.object.spec, { replicas: 1 }, `${label}: replicas set to 1`)
    t.same(
      result.warnings,
      ['spec.replicas: stdio MCPServer demo supports 1 replica; set to 1 (was 3)'],
      `${label}: warns with the replicas asked for`,
    )
  }
})

t.test('everything else about the Scale is kept', async (t) => {
  const object = scale(2)
  const { before, result } = cap(object, stdioFacts())
  t.same(result.object, { ...before, spec: { replicas: 1 } })
})

t.test('a Scale that is not above one replica, or has no number, is left alone', async (t) => {
  const cases: [string, KubeObject][] = [
    ['replicas 0', scale(0)],
    ['replicas 1', scale(1)],
    ['replicas absent', scaleWith({})],
    ['no spec', scaleWith(undefined)],
    ['replicas a string', scale('3')],
    ['replicas null', scale(null)],
  ]
  for (const [label, object] of cases) {
    const { before, result } = cap(object, stdioFacts())
    t.same(result.object, before, `${label}: unchanged`)
    t.same(result.warnings, [], `${label}: no warning`)
  }
})

t.test('a Scale of anything but a stdio MCPServer proxy is left alone', async (t) => {
  const deployment = proxyDeployment('MCPServer', 'demo')
  const cases: [string, ScaleFacts][] = [
    ['transport streamable-http', stdioFacts('streamable-http')],
    ['transport sse', stdioFacts('sse')],
    [
      'owner is another incarnation (uid differs)',
      {
        deployment,
        owner: workload('MCPServer', 'demo', { uid: 'recreated-uid' }),
      },
    ],
    [
      'MCPRemoteProxy owner',
      {
        deployment: proxyDeployment('MCPRemoteProxy', 'demo'),
        owner: workload('MCPRemoteProxy', 'demo'),
      },
    ],
    [
      'VirtualMCPServer owner',
      {
        deployment: proxyDeployment('VirtualMCPServer', 'demo'),
        owner: workload('VirtualMCPServer', 'demo'),
      },
    ],
    ['no Deployment', { deployment: undefined, owner: workload('MCPServer', 'demo') }],
    ['owner gone', { deployment, owner: undefined }],
    [
      'Deployment not a proxy (no ownerReferences)',
      {
        deployment: { ...deployment, metadata: { name: 'demo', namespace: NAMESPACE } },
        owner: workload('MCPServer', 'demo'),
      },
    ],
    [
      'Deployment owned by a non-controller reference',
      {
        deployment: withController(deployment, false),
        owner: workload('MCPServer', 'demo'),
      },
    ],
  ]
  for (const [label, facts] of cases) {
    const { before, result } = cap(scale(3), facts)
    t.same(result.object, before, `${label}: unchanged`)
    t.same(result.warnings, [], `${label}: no warning`)
  }
})

t.test('an owner without a uid to compare is taken as the same one', async (t) => {
  // Files given to the CLI carry no uids; the name alone then links owner and Deployment.
  const owner = workload('MCPServer', 'demo')
  delete owner.metadata?.uid
  const { result } = cap(scale(3), { deployment: proxyDeployment('MCPServer', 'demo'), owner })
  t.same(result.object.spec, { replicas: 1 })
})

function withController(deployment: KubeObject, controller: boolean): KubeObject {
  const copy = structuredClone(deployment)
  const references = copy.metadata?.ownerReferences as Record<string, unknown>[]
  for (const reference of references) reference.controller = controller
  return copy
}
