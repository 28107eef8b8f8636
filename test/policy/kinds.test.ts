/**
 * The kind table (src/policy/kinds.ts) is what the rest of the service reads: for every entry the
 * routes answer its writes, the view lists and watches it, the reconciler stamps its conditions
 * (or its validation status) and synthesised requests name its resource. A kind added to the table is served by all of them.
 */

import t from 'tap'
import { requestFor, resourceOf } from '../../src/admission/request.ts'
import { productRoutes } from '../../src/admission/routes.ts'
import { Router } from '../../src/admission/router.ts'
import { VIEW_RESOURCES, resourcePath } from '../../src/cluster/resources.ts'
import { trimForView } from '../../src/cluster/trim.ts'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import { generationEnvEntry } from '../../src/policy/generation-env.ts'
import {
  TOOLHIVE_GROUP,
  TOOLHIVE_KIND_TABLE,
  VALIDATION_STATUS_KINDS,
  WORKLOAD_KINDS,
} from '../../src/policy/kinds.ts'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import type { KindTable, ToolHiveKindEntry } from '../../src/policy/kinds.ts'
import { parsePathPattern } from '../../src/policy/kube/path-patterns.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { mutateProxyDeployment } from '../../src/policy/proxy-deployment.ts'
import { proxyOwnerOf, runConfigMapName } from '../../src/policy/proxy-owner.ts'
import { keptPaths } from '../../src/policy/references.ts'
import { CONDITION_TYPES, desiredStatus } from '../../src/policy/status-conditions.ts'
import { capStdioScale } from '../../src/policy/stdio-scale.ts'
import { RECONCILED_KINDS } from '../../src/reconciler/reconcile.ts'
import { NAMESPACE, proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

type Any = Record<string, any>

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
    // An object at any version the kind is served at reaches the same rule, where one matches.
    const ruled = RULE_TABLE.filter((rule) =>
      (rule.matches as readonly string[]).includes(entry.kind),
    )
    for (const version of entry.versions) {
      for (const operation of ['CREATE', 'UPDATE', 'DELETE'] as const) {
        const request = requestFor(at(version), { operation })
        t.equal(
          router.find('validate', request),
          router.find('validate', requestFor(object, { operation })),
          `the validating webhook answers its ${operation} at ${version} by the same rule`,
        )
        t.equal(
          router.find('validate', request)?.rule,
          ruled.find((rule) => (rule.operations as readonly string[]).includes(operation))?.name,
          `its ${operation} is answered by the rule the table matches it to`,
        )
      }
    }
    const view = VIEW_RESOURCES.find((resource) => resource.kind === entry.kind)
    t.ok(view, 'the view lists and watches it')
    t.equal(
      view && resourcePath(view, { namespace: 'team', name: 'x' }),
      `/apis/${TOOLHIVE_GROUP}/${entry.versions[0]}/namespaces/team/${entry.plural}/x`,
    )
    const validated = (entry as ToolHiveKindEntry).validationStatus !== undefined
    t.equal(RECONCILED_KINDS.includes(entry.kind), entry.conditions.length > 0 || validated)
    // One status write per change: conditions or a validation verdict, never both.
    t.notOk(validated && entry.conditions.length > 0, 'conditions or a validation status')
    t.equal(VALIDATION_STATUS_KINDS.includes(entry.kind), validated)
    t.equal(
      desiredStatus(object)?.conditions.length ?? 0,
      entry.conditions.length,
      'its conditions',
    )
  })
}

t.test('references and keep-lists are well formed', async (t) => {
  const kinds = TOOLHIVE_KIND_TABLE.map((entry) => entry.kind as string)
  for (const entry of TOOLHIVE_KIND_TABLE as KindTable) {
    for (const [version, references] of Object.entries(entry.references ?? {})) {
      t.ok(entry.versions.includes(version), `${entry.kind}: ${version} is one of its versions`)
      for (const { path, target, protectedBy } of references) {
        t.doesNotThrow(() => parsePathPattern(path), `${entry.kind} ${path}`)
        t.match(path, /(^|\.)[A-Za-z]+$/, `${path} ends on the name field`)
        const targets = 'kind' in target ? [target.kind] : target.allowed
        t.ok(targets.length > 0 && targets.every((kind) => kinds.includes(kind)), 'table kinds')
        if (protectedBy) t.match(protectedBy.since, /^v\d+\.\d+\.\d+$/, 'a release')
      }
    }
    for (const path of keptPaths(entry))
      t.doesNotThrow(() => parsePathPattern(path), `${entry.kind} keeps ${path}`)
  }
})

t.test('status rules name the conditions of docs/enforcement.md#status-conditions', async (t) => {
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

t.test(
  'the validation status: written on composite tool definitions, judged from the cache',
  async (t) => {
    t.same(VALIDATION_STATUS_KINDS, ['VirtualMCPCompositeToolDefinition'])
    // Step 1 of reconcile judges the cached object: it must keep the spec and the two fields.
    const stored = {
      apiVersion: `${TOOLHIVE_GROUP}/v1beta1`,
      kind: 'VirtualMCPCompositeToolDefinition',
      metadata: { name: 'triage', namespace: 'team', managedFields: [{ manager: 'x' }] },
      spec: { name: 'triage', steps: [{ id: 'a', tool: 'github.get_issue' }] },
      status: {
        validationStatus: 'Invalid',
        validationErrors: ['e'],
        referencingVirtualServers: ['vmcp'],
        conditions: [],
      },
    }
    const cached = trimForView('VirtualMCPCompositeToolDefinition', stored)
    t.same(cached.spec, stored.spec)
    t.same(cached['status'], { validationStatus: 'Invalid', validationErrors: ['e'] })
    t.equal(cached.metadata?.managedFields, undefined, 'ownership is read live, not cached')
  },
)

t.test('RunConfig ConfigMap names (docs/enforcement.md#which-objects-it-recognises)', async (t) => {
  t.same(
    WORKLOAD_KINDS.map((kind) => runConfigMapName(proxyOwnerOf(proxyDeployment(kind, 'demo'))!)),
    ['demo-runconfig', 'demo-runconfig', 'demo-vmcp-config'],
  )
})

t.test('a kind that owns a proxy is one entry more: the proxy rules apply to it', async (t) => {
  const entry: ToolHiveKindEntry = {
    ...TOOLHIVE_KIND_TABLE[0],
    kind: 'MCPTestServer',
    plural: 'mcptestservers',
    proxy: {
      runConfigSuffix: '-test-config',
      container: 'tester',
      stampsGeneration: true,
      transportCap: { transport: 'pipe', byDefault: false },
    },
  }
  const kinds = [...TOOLHIVE_KIND_TABLE, entry]
  const owner = { ...workload('MCPServer', 'demo', { generation: 7 }), kind: entry.kind }
  const piped = { ...owner, spec: { transport: 'pipe' } }
  const deployment = proxyDeployment('MCPServer', 'demo', { replicas: 3 }) as Any
  deployment.metadata.ownerReferences[0].kind = entry.kind
  deployment.spec.template.spec.containers = [{ name: 'sidecar' }, { name: 'tester' }]
  const runConfigMap = {
    ...runConfigFor('MCPServer', 'demo'),
    metadata: { name: 'demo-test-config', namespace: NAMESPACE },
  }

  const mutate = (owner: KubeObject) =>
    mutateProxyDeployment(
      structuredClone(deployment),
      { owner, runConfigMap, stored: undefined },
      kinds,
    ) as { object: Any; warnings: string[] }
  const { object, warnings } = mutate(piped)
  t.same(object.spec.template.metadata.annotations, {
    [ANNOTATIONS.runConfigChecksum]: effectiveContentChecksum(runConfigMap),
    [ANNOTATIONS.mcpServerGeneration]: '7',
  })
  t.same(object.spec.template.spec.containers, [
    { name: 'sidecar' },
    { name: 'tester', env: [generationEnvEntry()] },
  ])
  t.equal(object.spec.replicas, 1, 'its transport is capped')
  t.same(warnings, ['spec.replicas: pipe MCPTestServer demo supports 1 replica; set to 1 (was 3)'])
  t.equal(mutate(owner).object.spec.replicas, 3, 'not by default: an unset transport is not')
  t.match(
    mutateProxyDeployment(structuredClone(deployment), {
      owner: piped,
      runConfigMap,
      stored: undefined,
    }),
    { object: deployment, warnings: [] },
    'without the entry it owns no proxy',
  )

  const scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 2 } }
  t.same(capStdioScale(structuredClone(scale), { deployment, owner: piped }, kinds), {
    object: { ...scale, spec: { replicas: 1 } },
    warnings: ['spec.replicas: pipe MCPTestServer demo supports 1 replica; set to 1 (was 2)'],
  })
})
