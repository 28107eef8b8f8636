/**
 * What the monitoring tests read from the chart and from a live /metrics: the chart's
 * PrometheusRule and dashboard as `helm template` renders them with monitoring on, every PromQL
 * expression in them (the dashboard's with its variables set as Grafana would), the series
 * selectors of each as Prometheus's own parser reads them (harness/prometheus.ts), and which of
 * those a /metrics text really exports.
 */

import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { MANIFESTS_DIR } from './admission.ts'
import { mustHelm } from './helm.ts'
import type { Helm } from './helm.ts'
import { runTool } from './prometheus.ts'

const CHART = join(MANIFESTS_DIR, 'charts/mcp-admission')
/** The runbooks' address the tests render with (the chart's default is none). */
export const RUNBOOKS = 'https://runbooks.example.test/mcp-admission/monitoring'

/** The values that turn every part of the monitoring on. */
export const MONITORING_ON = [
  '--set',
  'monitoring.serviceMonitor.enabled=true',
  '--set',
  'monitoring.prometheusRule.enabled=true',
  '--set',
  'monitoring.dashboard.enabled=true',
] as const

export interface AlertRule {
  readonly alert: string
  readonly expr: string
  readonly for?: string
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
}

/** A PrometheusRule's spec: exactly a Prometheus rules file. */
export interface RuleGroups {
  readonly groups: readonly { readonly name: string; readonly rules: readonly AlertRule[] }[]
}

interface Panel {
  readonly title?: string
  readonly type: string
  readonly targets?: readonly { readonly expr?: string }[]
  readonly panels?: readonly Panel[]
}

export interface Dashboard {
  readonly panels: readonly Panel[]
  readonly templating: {
    readonly list: readonly { readonly name: string; readonly query?: unknown }[]
  }
}

export interface Monitoring {
  readonly kinds: readonly string[]
  readonly rules: RuleGroups
  readonly dashboard: Dashboard
}

/**
 * The chart rendered (release and namespace mcp-admission) with monitoring on, runbooks at
 * RUNBOOKS, and `values`.
 */
export async function renderMonitoring(
  helm: Helm,
  values: readonly string[] = [],
): Promise<Monitoring> {
  const text = await mustHelm(helm, [
    'template',
    'mcp-admission',
    CHART,
    '-n',
    'mcp-admission',
    ...MONITORING_ON,
    '--set',
    `monitoring.prometheusRule.runbookBaseURL=${RUNBOOKS}`,
    ...values,
  ])
  const objects = parseAllDocuments(text)
    .map((document) => document.toJS() as Record<string, any> | null)
    .filter((object) => object !== null)
  const rule = objects.find((object) => object['kind'] === 'PrometheusRule')
  const dashboard = objects.find((object) => object['metadata']?.name === 'mcp-admission-dashboard')
  if (rule === undefined || dashboard === undefined)
    throw new Error('the chart rendered no PrometheusRule or no dashboard with monitoring on')
  return {
    kinds: objects.map((object) => String(object['kind'])),
    rules: rule['spec'] as RuleGroups,
    dashboard: JSON.parse(dashboard['data']['mcp-admission.json'] as string) as Dashboard,
  }
}

export function alertRules(rules: RuleGroups): AlertRule[] {
  return rules.groups.flatMap((group) => group.rules)
}

/**
 * Grafana's variables as one instance of the service would set them: the chart's defaults, and
 * $__rate_interval as Grafana computes it for a 30 s scrape interval (four of them, at least).
 */
export const DASHBOARD_VARIABLES: Readonly<Record<string, string>> = {
  $__rate_interval: '2m',
  $namespace: 'mcp-admission',
  $job: 'mcp-admission',
}

export interface Query {
  /** Where it is: a panel's title, or `variable <name>`. */
  readonly where: string
  readonly expr: string
}

/**
 * Every PromQL expression of the dashboard, variables set: each panel target's, and each query
 * variable's series selector (`label_values(<selector>, <label>)`, Grafana's own function).
 */
export function dashboardQueries(dashboard: Dashboard): Query[] {
  const substitute = (expr: string) =>
    Object.entries(DASHBOARD_VARIABLES).reduce(
      (text, [variable, value]) => text.replaceAll(variable, value),
      expr,
    )
  const queries: Query[] = []
  const visit = (panels: readonly Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? [])
        queries.push({ where: panel.title ?? panel.type, expr: substitute(target.expr ?? '') })
      visit(panel.panels ?? [])
    }
  }
  visit(dashboard.panels)
  for (const variable of dashboard.templating.list) {
    const query = variable.query as { query?: string } | string | undefined
    const text = typeof query === 'string' ? query : query?.query
    if (text === undefined || variable.name === 'datasource') continue
    const selector = /^label_values\((.+),\s*\w+\)$/.exec(text)?.[1]
    queries.push({ where: `variable ${variable.name}`, expr: substitute(selector ?? text) })
  }
  return queries
}

export interface Selector {
  readonly metric: string
  /** The labels its matchers test. */
  readonly labels: readonly string[]
}

export interface Parsed {
  readonly selectors: readonly Selector[]
  /** Why the expression does not parse, or names a selector without a metric. */
  readonly error?: string
}

/** Each expression as Prometheus's parser reads it (promql-selectors, harness/prometheus.ts). */
export async function parseQueries(
  promqlSelectors: string,
  expressions: readonly string[],
): Promise<Parsed[]> {
  const result = await runTool(promqlSelectors, [], JSON.stringify(expressions))
  if (result.code !== 0)
    throw new Error(`promql-selectors failed (${result.code}): ${result.stderr}`)
  return JSON.parse(result.stdout) as Parsed[]
}

/**
 * The series of a /metrics text: metric name → the label names its samples carry, or null for a
 * family declared (`# TYPE`) with no sample yet. prom-client declares every registered metric,
 * so a labelled counter whose event has not happened is known by name only; Go's client (the API
 * server's) declares only families with samples.
 */
export function exportedSeries(text: string): Map<string, Set<string> | null> {
  const series = new Map<string, Set<string> | null>()
  for (const line of text.split('\n')) {
    const declared = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/.exec(line)
    if (declared?.[1] !== undefined) {
      const [name, type] = [declared[1], declared[2]]
      const names =
        type === 'histogram'
          ? [`${name}_bucket`, `${name}_sum`, `${name}_count`]
          : type === 'summary'
            ? [name, `${name}_sum`, `${name}_count`]
            : [name]
      for (const family of names) if (!series.has(family)) series.set(family, null)
      continue
    }
    if (line === '' || line.startsWith('#')) continue
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s/.exec(line)
    if (sample?.[1] === undefined) continue
    const labels = series.get(sample[1]) ?? new Set<string>()
    for (const [, name] of (sample[2] ?? '').matchAll(
      /([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g,
    ))
      if (name !== undefined) labels.add(name)
    series.set(sample[1], labels)
  }
  return series
}

/**
 * The labels a scrape adds to every series (a ServiceMonitor's target labels): selectors may
 * test them although no /metrics text carries them.
 */
export const TARGET_LABELS: ReadonlySet<string> = new Set(['job', 'namespace', 'instance', 'pod'])

/**
 * What `selectors` name that `exported` lacks, one line each: a metric neither sampled nor
 * declared, or a label matched on that its samples never carry. Empty when everything is exported.
 */
export function unexported(
  selectors: readonly Selector[],
  exported: ReadonlyMap<string, ReadonlySet<string> | null>,
): string[] {
  const missing = new Set<string>()
  for (const { metric, labels } of selectors) {
    if (!exported.has(metric)) {
      missing.add(`${metric}: no such series`)
      continue
    }
    const carried = exported.get(metric)
    for (const label of labels)
      if (
        carried !== null &&
        carried !== undefined &&
        !carried.has(label) &&
        !TARGET_LABELS.has(label)
      )
        missing.add(`${metric}: no sample has label ${label}`)
  }
  return [...missing].sort()
}

/** The metrics `selectors` name that `exported` declares with no sample (labels unchecked). */
export function declaredOnly(
  selectors: readonly Selector[],
  exported: ReadonlyMap<string, ReadonlySet<string> | null>,
): string[] {
  const names = selectors.map((selector) => selector.metric)
  return [...new Set(names.filter((name) => exported.get(name) === null))].sort()
}
