/**
 * The chart's alerts and dashboard with the real Prometheus tools (harness/prometheus.ts): the
 * PrometheusRule as `helm template` renders it passes `promtool check rules` and the unit tests of
 * prometheus/alerts-test.yaml under `promtool test rules` (each alert firing when it should and
 * quiet when it should not); every dashboard expression parses with Prometheus's parser. Each
 * check is shown able to fail: a broken expression, a changed threshold, a dashboard typo. That
 * they name only metrics the service and the API server really export is
 * monitoring-metrics.test.ts's, against live ones.
 */

import { copyFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { stringify } from 'yaml'
import { ensureHelm, helmFor } from './harness/helm.ts'
import {
  alertRules,
  dashboardQueries,
  parseQueries,
  renderMonitoring,
} from './harness/monitoring.ts'
import type { RuleGroups } from './harness/monitoring.ts'
import { prometheusTools, runTool } from './harness/prometheus.ts'

const UNIT_TESTS = join(import.meta.dirname, 'prometheus/alerts-test.yaml')

const helm = await helmFor(
  process.env['E2E_HELM'] ||
    (await ensureHelm((line) => {
      t.comment(line)
    })),
)
t.teardown(() => helm.close())
const { promtool, promqlSelectors } = await prometheusTools()
const monitoring = await renderMonitoring(helm)

/** `promtool check rules` and `promtool test rules` on `rules`, in a directory of their own. */
async function promtoolOn(rules: RuleGroups) {
  const dir = t.testdir()
  await writeFile(join(dir, 'rules.yaml'), stringify(rules))
  // The unit tests name their rule file `rules.yaml`, relative to themselves.
  await copyFile(UNIT_TESTS, join(dir, 'alerts-test.yaml'))
  return {
    check: await runTool(promtool, ['check', 'rules', join(dir, 'rules.yaml')]),
    test: await runTool(promtool, ['test', 'rules', join(dir, 'alerts-test.yaml')]),
  }
}

/** The rules with one alert's expression changed by `change`. */
function withExpr(alert: string, change: (expr: string) => string): RuleGroups {
  const rules = alertRules(monitoring.rules)
  if (!rules.some((rule) => rule.alert === alert)) throw new Error(`no alert ${alert}`)
  return {
    groups: monitoring.rules.groups.map((group) => ({
      ...group,
      rules: group.rules.map((rule) =>
        rule.alert === alert ? { ...rule, expr: change(rule.expr) } : rule,
      ),
    })),
  }
}

t.test('the rendered rules pass promtool check rules and their unit tests', async (t) => {
  t.comment((await runTool(promtool, ['--version'])).stdout.split('\n')[0] ?? '')
  const { check, test } = await promtoolOn(monitoring.rules)
  t.equal(check.code, 0, `${check.stdout}${check.stderr}`)
  t.match(check.stdout, `SUCCESS: ${alertRules(monitoring.rules).length} rules found`)
  t.equal(test.code, 0, `${test.stdout}${test.stderr}`)
  t.match(test.stdout, /SUCCESS/)
})

t.test('a broken expression fails promtool check rules, naming it', async (t) => {
  const { check } = await promtoolOn(
    withExpr('McpAdmissionCertificateExpired', (expr) => expr.replace('<= time()', '<= time(')),
  )
  t.not(check.code, 0)
  t.match(
    `${check.stdout}${check.stderr}`,
    /McpAdmissionCertificateExpired|unclosed left parenthesis/,
  )
})

t.test('a changed threshold or selector fails the unit tests of that alert', async (t) => {
  const cases: [string, (expr: string) => string][] = [
    // Never fires: its unit test expects it to.
    ['McpAdmissionWebhookCallsFailing', (expr) => expr.replace('> 0.05', '> 1')],
    // Counts denials as failures, which its unit test expects it not to.
    [
      'McpAdmissionWebhookCallsFailing',
      (expr) => expr.replace(', error_type=~"calling_webhook_error|apiserver_internal_error"', ''),
    ],
    // A label value misspelt: the fight is never seen.
    [
      'McpAdmissionMutatesOperatorWrites',
      (expr) => expr.replace('writer="operator"', 'writer="operater"'),
    ],
    // A lower threshold: a trickle of fallbacks (0.05 a second), which its unit test keeps quiet.
    ['McpAdmissionLiveReadFallbacks', (expr) => expr.replace('> 0.1', '> 0.01')],
    // Without the unless, enforcing under [Deny, Audit] would be reported as watching.
    ['McpAdmissionWouldDeny', (expr) => expr.slice(0, expr.indexOf('unless on (kind)'))],
  ]
  for (const [alert, change] of cases) {
    const { check, test } = await promtoolOn(withExpr(alert, change))
    t.equal(check.code, 0, `${alert}: the changed rules still parse`)
    t.not(test.code, 0, `${alert}: the unit tests notice`)
    t.match(`${test.stdout}${test.stderr}`, `alertname: ${alert}`, alert)
  }
})

t.test('each latency rule follows its webhook timeoutSeconds', async (t) => {
  const thresholds = (rules: RuleGroups) =>
    Object.fromEntries(
      alertRules(rules)
        .filter((rule) => rule.alert === 'McpAdmissionWebhookLatencyNearTimeout')
        .map((rule) => [rule.labels?.['webhook'], /> ([\d.]+)\s*$/.exec(rule.expr)?.[1]]),
    )
  t.same(thresholds(monitoring.rules), {
    deployments: '4',
    'deployments-scale': '4',
    runconfigs: '4',
    webhookconfigs: '4',
    compositetools: '4',
    workloads: '4',
  })
  const changed = await renderMonitoring(helm, [
    '--set',
    'webhooks.runConfigs.timeoutSeconds=10',
    '--set',
    'webhooks.workloads.timeoutSeconds=1',
  ])
  t.match(thresholds(changed.rules), { runconfigs: '8', workloads: '0.8', deployments: '4' })
})

t.test('without the reconciler there is no leader alert', async (t) => {
  const alerts = (rules: RuleGroups) => alertRules(rules).map((rule) => rule.alert)
  t.ok(alerts(monitoring.rules).includes('McpAdmissionReconcilerNoLeader'))
  const without = await renderMonitoring(helm, ['--set', 'reconciler.enabled=false'])
  t.notOk(alerts(without.rules).includes('McpAdmissionReconcilerNoLeader'))
})

t.test('every dashboard expression parses with Prometheus’s parser', async (t) => {
  const queries = dashboardQueries(monitoring.dashboard)
  t.ok(queries.length >= 30, `${queries.length} expressions`)
  const parsed = await parseQueries(
    promqlSelectors,
    queries.map((query) => query.expr),
  )
  queries.forEach((query, i) => {
    const result = parsed[i]
    t.equal(result?.error, undefined, `${query.where}: ${query.expr}`)
    t.ok((result?.selectors.length ?? 0) > 0, `${query.where} selects series`)
  })
  // The check is not vacuous: a typo and a selector without a metric are both reported.
  const [typo, nameless] = await parseQueries(promqlSelectors, [
    'sum(rate(mcp_admission_mutations_total[5m])',
    'sum(rate({job="mcp-admission"}[5m]))',
  ])
  t.match(typo?.error, /unclosed left parenthesis/)
  t.match(nameless?.error, /names no metric/)
})
