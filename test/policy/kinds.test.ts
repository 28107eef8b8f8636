/**
 * The kind table (src/policy/kinds.ts) is what the rest of the service reads: for every entry the
 * routes answer its writes, the view lists and watches it, the reconciler stamps its conditions
 * and synthesised requests name its resource. A kind added to the table is served by all of them.
 */

import t from 'tap'
import { requestFor, resourceOf } from '../../src/admission/request.ts'
import { productRoutes } from '../../src/admission/routes.ts'
import { Router } from '../../src/admission/router.ts'
import { VIEW_RESOURCES, resourcePath } from '../../src/cluster/resources.ts'
import { TOOLHIVE_GROUP, TOOLHIVE_KIND_TABLE, WORKLOAD_KINDS } from '../../src/policy/kinds.ts'
import { runConfigMapName } from '../../src/policy/names.ts'
import { CONDITION_TYPES, desiredStatus } from '../../src/policy/status-conditions.ts'
import { RECONCILED_KINDS } from '../../src/reconciler/reconcile.ts'

const router = new Router(productRoutes())

for (const entry of TOOLHIVE_KIND_TABLE) {
  t.test(`${entry.kind}: every reader follows its entry`, async (t) => {
    const at = (version: string) => ({
      apiVersion: `${entry.group}/${version}`,
      kind: entry.kind,
      metadata: { name: 'x', namespace: 'team', generation: 2 },
      spec: {},
    })
    const object = at(entry.versions[0])
    t.equal(resourceOf(entry.kind), entry.plural)
    // An object at any version the kind is served at reaches the same rule.
    for (const version of entry.versions) {
      for (const operation of ['CREATE', 'UPDATE'] as const) {
        const request = requestFor(at(version), { operation })
        t.equal(
          router.find('validate', request),
          router.find('validate', requestFor(object, { operation })),
          `the validating webhook answers its ${operation} at ${version} by the same rule`,
        )
        t.ok(router.find('validate', request), `the validating webhook answers its ${operation}`)
      }
    }
    const view = VIEW_RESOURCES.find((resource) => resource.kind === entry.kind)
    t.ok(view, 'the view lists and watches it')
    t.equal(
      view && resourcePath(view, { namespace: 'team', name: 'x' }),
      `/apis/${TOOLHIVE_GROUP}/${entry.versions[0]}/namespaces/team/${entry.plural}/x`,
    )
    t.equal(RECONCILED_KINDS.includes(entry.kind), entry.conditions.length > 0)
    t.equal(desiredStatus(object)?.conditions.length, entry.conditions.length, 'its conditions')
  })
}

t.test('status rules name the conditions of DESIGN §6', async (t) => {
  const typesOf = (kind: string) =>
    desiredStatus({ apiVersion: `${TOOLHIVE_GROUP}/v1beta1`, kind, spec: {} })?.conditions.map(
      (condition) => condition.type,
    )
  t.same(typesOf('MCPServer'), [
    CONDITION_TYPES.stdioReplicaCapped,
    CONDITION_TYPES.sessionStorageWarning,
  ])
  t.same(typesOf('VirtualMCPServer'), [CONDITION_TYPES.sessionStorageWarning])
  t.same(typesOf('MCPWebhookConfig'), [CONDITION_TYPES.valid])
  t.equal(typesOf('ConfigMap'), undefined)
})

t.test('RunConfig ConfigMap names (DESIGN §3)', async (t) => {
  t.same(
    WORKLOAD_KINDS.map((kind) => runConfigMapName(kind, 'demo')),
    ['demo-runconfig', 'demo-runconfig', 'demo-vmcp-config'],
  )
})
