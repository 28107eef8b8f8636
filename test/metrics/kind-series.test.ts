/** The per-kind series: where each kind is served (0 where it was, once gone) and which are degraded. */

import t from 'tap'
import { createMetrics } from '../../src/metrics/metrics.ts'
import type { KindStates } from '../../src/metrics/metrics.ts'

const KINDS = ['MCPServer', 'MCPWebhookConfig']

async function series(metrics: ReturnType<typeof createMetrics>, name: string): Promise<string[]> {
  const text = await metrics.registry.metrics()
  return text.split('\n').filter((line) => line.startsWith(`${name}{`))
}

t.test('kind_served follows the served kinds; a kind gone reads 0 where it was', async (t) => {
  const metrics = createMetrics()
  let states: KindStates = {
    kinds: KINDS,
    served: new Map([['MCPServer', 'v1beta1']]),
    degraded: new Set(),
  }
  metrics.reportKinds(() => states)
  t.same(await series(metrics, 'mcp_admission_kind_served'), [
    'mcp_admission_kind_served{kind="MCPServer",version="v1beta1"} 1',
    'mcp_admission_kind_served{kind="MCPWebhookConfig",version=""} 0',
  ])
  states = { ...states, served: new Map([['MCPWebhookConfig', 'v1alpha1']]) }
  t.same(await series(metrics, 'mcp_admission_kind_served'), [
    'mcp_admission_kind_served{kind="MCPServer",version="v1beta1"} 0',
    'mcp_admission_kind_served{kind="MCPWebhookConfig",version="v1alpha1"} 1',
  ])
  states = { ...states, served: new Map([['MCPWebhookConfig', 'v1beta1']]) }
  t.same(
    await series(metrics, 'mcp_admission_kind_served'),
    [
      'mcp_admission_kind_served{kind="MCPServer",version="v1beta1"} 0',
      'mcp_admission_kind_served{kind="MCPWebhookConfig",version="v1beta1"} 1',
    ],
    'a moved kind: only its new version is reported',
  )
})

t.test('cluster_view_degraded: 1 for each degraded kind, 0 for the others', async (t) => {
  const metrics = createMetrics()
  metrics.reportKinds(() => ({
    kinds: KINDS,
    served: new Map([
      ['MCPServer', 'v1beta1'],
      ['MCPWebhookConfig', 'v1alpha1'],
    ]),
    degraded: new Set(['MCPWebhookConfig']),
  }))
  t.same(await series(metrics, 'mcp_admission_cluster_view_degraded'), [
    'mcp_admission_cluster_view_degraded{kind="MCPServer"} 0',
    'mcp_admission_cluster_view_degraded{kind="MCPWebhookConfig"} 1',
  ])
})

t.test('without a cluster view, no per-kind series at all', async (t) => {
  const metrics = createMetrics()
  t.same(await series(metrics, 'mcp_admission_kind_served'), [])
  t.same(await series(metrics, 'mcp_admission_cluster_view_degraded'), [])
})
