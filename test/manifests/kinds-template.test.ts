/**
 * How `npm run manifests` turns the kind table into the chart's ToolHive webhook rules
 * (kinds-template.ts) for tables other than today's: kinds sharing versions, scope and operations
 * share a rule, any difference splits it, and a kind no route answers stops the generator. The
 * committed file against today's table is generated.test.ts's; the rendered rules against the
 * table, manifests.test.ts's.
 */

import t from 'tap'
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import type { ToolHiveKindEntry } from '../../src/policy/kinds.ts'
import { answeredOperations, kindsTemplate, webhookRules } from './kinds-template.ts'

const [server, proxy] = TOOLHIVE_KIND_TABLE
const config = TOOLHIVE_KIND_TABLE.find((entry) => entry.validation === 'webhookConfig')!

t.test('the operations are the ones the routes answer', async (t) => {
  t.same(answeredOperations(server), ['CREATE', 'UPDATE'])
  t.same(answeredOperations(config), ['CREATE', 'UPDATE', 'DELETE'])
  t.same(answeredOperations({ ...server, kind: 'Unknown' }), [])
})

t.test('kinds share a rule only when versions, scope and operations agree', async (t) => {
  t.same(webhookRules([server, proxy]), [
    {
      apiGroups: ['toolhive.stacklok.dev'],
      apiVersions: ['v1beta1', 'v1alpha1'],
      operations: ['CREATE', 'UPDATE'],
      scope: 'Namespaced',
      resources: ['mcpservers', 'mcpremoteproxies'],
    },
  ])
  const moved: ToolHiveKindEntry = { ...proxy, versions: ['v1', 'v1beta1', 'v1alpha1'] }
  const clusterWide: ToolHiveKindEntry = { ...proxy, namespaced: false }
  t.same(
    webhookRules([server, moved, clusterWide]).map((rule) => [
      rule.resources,
      rule.apiVersions,
      rule.scope,
    ]),
    [
      [['mcpservers'], ['v1beta1', 'v1alpha1'], 'Namespaced'],
      [['mcpremoteproxies'], ['v1', 'v1beta1', 'v1alpha1'], 'Namespaced'],
      [['mcpremoteproxies'], ['v1beta1', 'v1alpha1'], 'Cluster'],
    ],
  )
  t.throws(() => webhookRules([{ ...server, kind: 'Unknown' }]), /Unknown: no validating route/)
})

t.test('the template defines what webhooks.yaml and rbac.yaml include', async (t) => {
  const text = kindsTemplate()
  for (const name of [
    'mcp-admission.toolhive.validatingRules.workload',
    'mcp-admission.toolhive.validatingRules.webhookConfig',
    'mcp-admission.toolhive.resources',
    'mcp-admission.toolhive.statusResources',
  ])
    t.match(text, `{{- define "${name}" -}}`, name)
  // A kind without conditions is read, and its status never written.
  const unstamped = kindsTemplate([{ ...server, conditions: [] }, proxy])
  t.match(unstamped, /resources" -}}\n- mcpservers\n- mcpremoteproxies\n/)
  t.match(unstamped, /statusResources" -}}\n- mcpremoteproxies\/status\n\{\{- end/)
})
