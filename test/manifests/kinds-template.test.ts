/**
 * How `npm run manifests` turns the kind and rule tables into the chart's ToolHive webhook rules
 * (kinds-template.ts) for tables other than today's: a webhook is sent the operations of every
 * rule it serves, kinds sharing versions, scope and operations share a rule, any difference splits
 * it, and a kind missing from the kind table stops the generator. The committed file against
 * today's tables is generated.test.ts's; the rendered rules against the tables,
 * webhooks-template.test.ts's and manifests.test.ts's.
 */

import t from 'tap'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import type { ToolHiveKind, ToolHiveKindEntry } from '../../src/policy/kinds.ts'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import type { ResourceMatch, RuleEntry } from '../../src/policy/rules.ts'
import { kindsTemplate, resourceRules, scalar, toolHiveRules } from './kinds-template.ts'

const [server, proxy] = TOOLHIVE_KIND_TABLE
const rule = (name: string, changes: Partial<RuleEntry>): RuleEntry => ({
  ...RULE_TABLE.find((entry) => entry.name === name)!,
  ...changes,
})

t.test(
  "a webhook is sent the operations of every rule it serves, in OPERATIONS' order",
  async (t) => {
    t.same(
      toolHiveRules('webhookConfigs').map((one) => [one.resources, one.operations]),
      [[['mcpwebhookconfigs'], ['CREATE', 'UPDATE']]],
      "webhook-config (CREATE, UPDATE); its DELETE is the delete guard's webhook",
    )
    t.same(
      [...new Set(toolHiveRules('deletes').flatMap((one) => one.operations))],
      ['DELETE'],
      'the delete guard: DELETE only',
    )
    const reversed = [
      rule('webhook-config-in-use', {
        webhook: 'webhookConfigs',
        operations: ['DELETE', 'CREATE'],
      }),
      rule('webhook-config', { operations: ['UPDATE'] }),
    ]
    t.same(toolHiveRules('webhookConfigs', reversed)[0]?.operations, ['CREATE', 'UPDATE', 'DELETE'])
    t.same(toolHiveRules('deployments'), [], 'no ToolHive kind')
    t.same(resourceRules('workloads'), [], 'no other resource')
  },
)

t.test('kinds share a rule only when versions, scope and operations agree', async (t) => {
  const two = [rule('workload', { matches: ['MCPServer', 'MCPRemoteProxy'] })]
  t.same(toolHiveRules('workloads', two, [server, proxy]), [
    {
      apiGroups: ['toolhive.stacklok.dev'],
      apiVersions: ['v1beta1', 'v1alpha1'],
      operations: ['CREATE', 'UPDATE'],
      scope: 'Namespaced',
      resources: ['mcpservers', 'mcpremoteproxies'],
    },
  ])
  const moved: ToolHiveKindEntry = { ...proxy, versions: ['v1', 'v1beta1', 'v1alpha1'] }
  const clusterWide: ToolHiveKindEntry = { ...server, kind: 'Cluster', namespaced: false }
  const rules = [
    rule('workload', { matches: ['MCPServer', 'MCPRemoteProxy', 'Cluster' as ToolHiveKind] }),
  ]
  t.same(
    toolHiveRules('workloads', rules, [server, moved, clusterWide]).map((one) => [
      one.resources,
      one.apiVersions,
      one.scope,
    ]),
    [
      [['mcpservers'], ['v1beta1', 'v1alpha1'], 'Namespaced'],
      [['mcpremoteproxies'], ['v1', 'v1beta1', 'v1alpha1'], 'Namespaced'],
      [['mcpservers'], ['v1beta1', 'v1alpha1'], 'Cluster'],
    ],
  )
  // Operations split too: a DELETE for one kind only.
  const deleted = [
    rule('workload', { matches: ['MCPServer', 'MCPRemoteProxy'] }),
    rule('workload', { name: 'server-delete', operations: ['DELETE'], matches: ['MCPServer'] }),
  ]
  t.same(
    toolHiveRules('workloads', deleted, [server, proxy]).map((one) => [
      one.resources,
      one.operations,
    ]),
    [
      [['mcpservers'], ['CREATE', 'UPDATE', 'DELETE']],
      [['mcpremoteproxies'], ['CREATE', 'UPDATE']],
    ],
  )
  t.throws(
    () => toolHiveRules('workloads', [rule('workload', { matches: ['Unknown' as ToolHiveKind] })]),
    /workload: Unknown is not in the kind table/,
  )
})

t.test(
  'other resources: their resource group and version, a subresource after a slash',
  async (t) => {
    t.same(resourceRules('deploymentsScale'), [
      {
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        operations: ['UPDATE'],
        scope: 'Namespaced',
        resources: ['deployments/scale'],
      },
    ])
    t.same(resourceRules('runConfigs')[0]?.apiGroups, [''])
    // Two rules on one resource: one rule with both operations; another resource alike shares it.
    const configMaps = rule('runconfig-content-checksum', {})
    const secrets: ResourceMatch = {
      ...(configMaps.matches[0] as ResourceMatch),
      kind: 'Secret',
      resource: 'secrets',
    }
    const rules = [
      configMaps,
      rule('runconfig-content-checksum', { name: 'b', operations: ['DELETE'] }),
      rule('runconfig-content-checksum', {
        name: 'c',
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        matches: [secrets],
      }),
    ]
    t.same(resourceRules('runConfigs', rules), [
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        scope: 'Namespaced',
        resources: ['configmaps', 'secrets'],
      },
    ])
  },
)

t.test('a scalar is quoted when YAML 1.1 would read it as something else', async (t) => {
  t.same(['apps', 'v1', 'deployments/scale', 'toolhive.stacklok.dev', 'run-config'].map(scalar), [
    'apps',
    'v1',
    'deployments/scale',
    'toolhive.stacklok.dev',
    'run-config',
  ])
  t.same(['', 'true', 'On', 'no', '1', "it's"].map(scalar), [
    "''",
    "'true'",
    "'On'",
    "'no'",
    "'1'",
    "'it''s'",
  ])
})

t.test('the template defines what webhooks.yaml and rbac.yaml include', async (t) => {
  const text = kindsTemplate()
  for (const name of [
    'mcp-admission.toolhive.webhookRules.webhookConfigs',
    'mcp-admission.toolhive.webhookRules.workloads',
    'mcp-admission.toolhive.resources',
    'mcp-admission.toolhive.statusResources',
  ])
    t.match(text, `{{- define "${name}" -}}`, name)
  t.notMatch(text, 'webhookRules.deployments', 'none for a webhook sent no ToolHive kind')
  // A kind without conditions is read, and its status never written.
  const [, ...rest] = TOOLHIVE_KIND_TABLE
  const unstamped = kindsTemplate([{ ...server, conditions: [] }, ...rest])
  t.match(unstamped, /resources" -}}\n- mcpservers\n- mcpremoteproxies\n/)
  t.match(unstamped, /statusResources" -}}\n- mcpremoteproxies\/status\n/)
  t.notMatch(unstamped, /^- mcpservers\/status$/m)
})
