/**
 * The alerts and the dashboard name only series that really exist: every selector of the chart's
 * PrometheusRule and dashboard (read by Prometheus's own parser, harness/monitoring.ts) against
 * the live /metrics of mcp-admission and of the real kube-apiserver, after the traffic that makes
 * each appear: a mutation, a denial, status writes and a yielded condition, then calls that fail
 * closed and open with the service stopped (the API server's admission webhook series exist only
 * once a webhook was called, rejected or failed open). A metric or a matched label that neither
 * exports fails the test, naming it.
 */

import t from 'tap'
import { startEnvironment } from './harness/environment.ts'
import { ensureHelm, helmFor } from './harness/helm.ts'
import { mustKubectl } from './harness/kubectl.ts'
import {
  alertRules,
  dashboardQueries,
  declaredOnly,
  exportedSeries,
  parseQueries,
  renderMonitoring,
  unexported,
} from './harness/monitoring.ts'
import type { Selector } from './harness/monitoring.ts'
import { waitFor } from './harness/processes.ts'
import { prometheusTools } from './harness/prometheus.ts'

const helm = await helmFor(
  process.env['E2E_HELM'] ||
    (await ensureHelm((line) => {
      t.comment(line)
    })),
)
t.teardown(() => helm.close())
const { promqlSelectors } = await prometheusTools()
const monitoring = await renderMonitoring(helm)
const env = await startEnvironment(t)
const { kubectl, admission } = env

const queries = [
  ...alertRules(monitoring.rules).map((rule) => ({ where: rule.alert, expr: rule.expr })),
  ...dashboardQueries(monitoring.dashboard),
]
const parsed = await parseQueries(
  promqlSelectors,
  queries.map((query) => query.expr),
)
const selectors: Selector[] = parsed.flatMap((result) => result.selectors)

const create = (object: unknown) => kubectl(['create', '-f', '-'], JSON.stringify(object))
const ns = await env.namespace()
const server = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'toolhive.stacklok.dev/v1beta1',
  kind: 'MCPServer',
  metadata: { name, namespace: ns },
  spec,
})
const runConfig = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, labels: { 'toolhive.stacklok.io/component': 'run-config' } },
  data: { 'runconfig.json': '{"name": "demo"}' },
})

// What each side exports once the traffic below has made its series appear.
let ours = new Map<string, Set<string> | null>()
let apiServer = new Map<string, Set<string> | null>()

t.test('traffic that makes every series appear', async (t) => {
  // A mutation (the RunConfig's checksum) and a denial (a plain-http webhook URL).
  t.equal((await create(runConfig('a-runconfig'))).code, 0)
  const denied = await create({
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'plain-http', namespace: ns },
    spec: { mutating: [{ name: 'm', url: 'http://m.example.com' }] },
  })
  t.not(denied.code, 0, 'the invalid MCPWebhookConfig is denied')
  // Status conditions written, then one of them taken by the operator's field manager, which the
  // reconciler yields at its next reconcile.
  t.equal((await create(server('stdio', { transport: 'stdio', replicas: 3 }))).code, 0)
  await waitFor(
    'a status write',
    async () =>
      (await admission.metric('mcp_admission_status_writes_total')) > 0 ? true : undefined,
    { timeoutMs: 20_000, intervalMs: 200 },
  )
  await mustKubectl(
    kubectl,
    [
      'apply',
      '--server-side',
      '--field-manager=toolhive-operator',
      // Taking the condition over, as a newer operator release that writes it does.
      '--force-conflicts',
      '--subresource=status',
      '-f',
      '-',
    ],
    JSON.stringify({
      apiVersion: 'toolhive.stacklok.dev/v1beta1',
      kind: 'MCPServer',
      metadata: { name: 'stdio', namespace: ns },
      status: {
        conditions: [
          {
            type: 'SessionStorageWarning',
            status: 'False',
            reason: 'SessionStorageWarningNotApplicable',
            message: 'owned by the operator',
            lastTransitionTime: '2026-11-27T00:00:00Z',
          },
        ],
      },
    }),
  )
  await mustKubectl(kubectl, [
    'patch',
    'mcpserver',
    'stdio',
    '-n',
    ns,
    '--type=merge',
    '-p',
    '{"spec":{"replicas":2}}',
  ])
  await waitFor(
    'a yielded condition',
    async () =>
      (await admission.metric('mcp_admission_status_fields_yielded_total')) > 0 ? true : undefined,
    { timeoutMs: 20_000, intervalMs: 200 },
  )
  ours = exportedSeries((await admission.probe('/metrics')).body)

  // With no replica answering: a fail-closed webhook refuses (calling_webhook_error), the workloads
  // webhook fails open.
  await admission.stop()
  t.not((await create(runConfig('b-runconfig'))).code, 0, 'refused with the service down')
  t.equal((await create(server('unchecked', { transport: 'sse' }))).code, 0, 'admitted unchecked')
  apiServer = exportedSeries(await mustKubectl(kubectl, ['get', '--raw', '/metrics']))
})

t.test('every expression parses and selects by metric name', async (t) => {
  queries.forEach((query, i) => {
    t.equal(parsed[i]?.error, undefined, `${query.where}: ${query.expr}`)
  })
})

t.test('every series the alerts and the dashboard select is exported', async (t) => {
  const exported = new Map([...apiServer, ...ours])
  const missing = unexported(selectors, exported)
  t.same(missing, [], `not exported by mcp-admission or kube-apiserver:\n${missing.join('\n')}`)
  const names = new Set(selectors.map((selector) => selector.metric))
  t.comment(
    `${names.size} metrics checked: ${[...names].filter((name) => apiServer.has(name)).length} ` +
      `from kube-apiserver, ${[...names].filter((name) => ours.has(name)).length} from mcp-admission`,
  )
  // Declared by the service, with no sample here: a failed list or watch, and an operator write
  // admitted without its live reads, are what they count, and nothing here breaks the API
  // server's lists (api-outage.test.ts does) or slows its answers past the 2 s deadline. Their
  // names are checked, their labels are not.
  t.same(declaredOnly(selectors, exported), [
    'mcp_admission_cluster_view_errors_total',
    'mcp_admission_live_read_fallbacks_total',
  ])
  // Each side exports what it should, and the sides do not overlap by chance.
  for (const name of names) {
    if (name.startsWith('apiserver_')) t.ok(apiServer.has(name), `${name} from kube-apiserver`)
    else t.ok(ours.has(name), `${name} from mcp-admission`)
  }
})

t.test('the check notices a misspelt metric and a label no sample carries', async (t) => {
  const exported = new Map([...apiServer, ...ours])
  t.same(
    unexported(
      [
        { metric: 'mcp_admission_certificate_expiry_seconds', labels: [] },
        { metric: 'apiserver_admission_webhook_rejection_count', labels: ['error_typ'] },
        { metric: 'mcp_admission_violations_total', labels: ['job', 'namespace', 'kind'] },
      ],
      exported,
    ),
    [
      'apiserver_admission_webhook_rejection_count: no sample has label error_typ',
      'mcp_admission_certificate_expiry_seconds: no such series',
    ],
  )
})
