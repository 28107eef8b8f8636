/**
 * The mutating adapter leaves `metadata.managedFields` out of the copy and the diff: a review the
 * API server sends carries it, often as large as the rest of the object, and no rule reads it.
 * The patch must be the one the whole object would get, and never name managedFields.
 */

import t from 'tap'
import { mutatingHandler, pureMutator, withoutManagedFields } from '../../src/admission/mutating.ts'
import { createAdmission } from '../../src/admission/webhook.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { patchOf, review } from '../helpers/objects.ts'
import { applyPatch } from '../helpers/apply-patch.ts'
import { proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

type Any = Record<string, any>

const MANAGED_FIELDS = [
  {
    manager: 'toolhive-operator',
    operation: 'Update',
    apiVersion: 'apps/v1',
    time: '2026-11-25T10:00:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:toolhive': {} } }, 'f:spec': {} },
  },
]

function withManagedFields(object: KubeObject): KubeObject {
  return { ...object, metadata: { ...(object['metadata'] as Any), managedFields: MANAGED_FIELDS } }
}

t.test('withoutManagedFields copies only what it must and shares the rest', async (t) => {
  const object = withManagedFields(proxyDeployment('MCPServer', 'demo'))
  const stripped = withoutManagedFields(object)
  t.notOk('managedFields' in (stripped['metadata'] as Any))
  t.equal(stripped['spec'], object['spec'], 'the spec is shared, not copied')
  t.ok('managedFields' in (object['metadata'] as Any), 'the request object is not changed')
  const plain = proxyDeployment('MCPServer', 'demo')
  t.equal(withoutManagedFields(plain), plain, 'nothing to leave out: the object itself')
})

t.test('a rule never sees managedFields, and its patch never names them', async (t) => {
  let seen: unknown = 'not called'
  const handler = mutatingHandler(
    pureMutator((object) => {
      seen = (object['metadata'] as Any)['managedFields']
      ;(object['metadata'] as Any)['annotations'] = { stamped: 'yes' }
      return { object, warnings: [] }
    }),
  )
  const request = review(withManagedFields(runConfigFor('MCPServer', 'demo'))) as Any
  const verdict = await handler(request.request, {
    view: new MemoryView([]),
    denies: true,
    exactOperator: false,
  })
  t.equal(seen, undefined)
  t.same(verdict.kind === 'admitted' && verdict.patch, [
    { op: 'add', path: '/metadata/annotations', value: { stamped: 'yes' } },
  ])
})

t.test('a proxy Deployment with managedFields gets the patch it gets without them', async (t) => {
  const admission = createAdmission({
    view: new MemoryView([
      workload('MCPServer', 'demo', { spec: { transport: 'stdio' } }),
      runConfigFor('MCPServer', 'demo'),
    ]),
  })
  const patchFor = async (object: KubeObject) => {
    const outcome = await admission.review(review(object), 'mutate')
    if (!outcome.ok) throw new Error(outcome.message)
    return patchOf(outcome.review.response)
  }
  const deployment = proxyDeployment('MCPServer', 'demo', { replicas: 3 })
  const expected = await patchFor(deployment)
  t.ok(expected.length > 0, 'the Deployment needs a patch (checksum, generation, replicas)')
  const actual = await patchFor(withManagedFields(deployment))
  t.same(actual, expected)
  t.notMatch(JSON.stringify(actual), /managedFields/)
})

t.test('the object a mutating rule hands over is its own patch applied (the oracle)', async (t) => {
  const owner = workload('MCPServer', 'demo', { spec: { transport: 'stdio' } })
  const admission = createAdmission({
    view: new MemoryView([owner, runConfigFor('MCPServer', 'demo')]),
  })
  for (const object of [
    withManagedFields(proxyDeployment('MCPServer', 'demo', { replicas: 3 })),
    proxyDeployment('MCPServer', 'demo', {
      env: [{ name: 'THV_MCPSERVER_GENERATION', value: '0' }],
    }),
    withManagedFields(runConfigFor('MCPServer', 'demo')),
  ]) {
    const outcome = await admission.review(review(object), 'mutate')
    const verdict = outcome.ok ? outcome.decision?.verdict : undefined
    if (verdict?.kind !== 'admitted') throw new Error('not admitted')
    t.ok(verdict.patch.length > 0, `${String(object['kind'])}: something to patch`)
    t.same(verdict.object, applyPatch(object, verdict.patch), String(object['kind']))
  }
})
