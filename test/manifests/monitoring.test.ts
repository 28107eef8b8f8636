/**
 * The monitoring component as shipped (manifests/components/monitoring, generated from the chart
 * with monitoring on), checked without helm or promtool: every alert has a severity, a summary, a
 * description and a runbook section in docs/monitoring.md (its anchor the alert's name); every alert
 * has promtool unit tests that see it fire and stay quiet (test/e2e/prometheus/alerts-test.yaml,
 * run by test/e2e/monitoring-rules.test.ts); the dashboard ConfigMap holds the chart's
 * files/dashboard.json, whose panels are laid out and queried as Grafana expects.
 */

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'

type Any = Record<string, any>

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string) => readFileSync(`${REPO}${path}`, 'utf8')
const component = (file: string) =>
  parseAllDocuments(read(`manifests/components/monitoring/${file}`)).map(
    (document) => document.toJS() as Any,
  )

const [rule] = component('prometheus-rule.yaml')
const alerts = (rule?.['spec'].groups as Any[]).flatMap((group) => group.rules as Any[])
const names = [...new Set(alerts.map((alert) => alert['alert'] as string))]

/** The anchors of docs/monitoring.md's headings, as GitHub writes them (lower case, no punctuation). */
const runbookAnchors = new Set(
  [...read('docs/monitoring.md').matchAll(/^#{2,4} (.+)$/gm)].map((match) =>
    (match[1] ?? '')
      .toLowerCase()
      .replace(/[^a-z0-9 -]/g, '')
      .replace(/ /g, '-'),
  ),
)

t.test('every alert has a severity, a summary, a description and its runbook', async (t) => {
  t.ok(names.length >= 12, `${names.length} alerts`)
  for (const alert of alerts) {
    const name = alert['alert'] as string
    t.match(alert['labels']?.severity, /^(critical|warning|info)$/, `${name} severity`)
    t.ok((alert['annotations']?.summary ?? '').length > 10, `${name} summary`)
    t.ok((alert['annotations']?.description ?? '').length > 40, `${name} description`)
    const anchor = name.toLowerCase()
    // Where the runbooks are published is the user's to say (runbookBaseURL): none by default.
    t.equal(alert['annotations']?.runbook_url, undefined, `${name} has no runbook_url by default`)
    t.ok(runbookAnchors.has(anchor), `docs/monitoring.md has a section ${name}`)
  }
})

t.test('every alert has promtool unit tests where it fires and where it stays quiet', async (t) => {
  const unit = parse(read('test/e2e/prometheus/alerts-test.yaml')) as Any
  const cases = (unit['tests'] as Any[]).flatMap((test) => test['alert_rule_test'] as Any[])
  for (const name of names) {
    const own = cases.filter((check) => check['alertname'] === name)
    t.ok(
      own.some((check) => (check['exp_alerts'] as Any[]).length > 0),
      `${name} fires in a test`,
    )
    t.ok(
      own.some((check) => (check['exp_alerts'] as Any[]).length === 0),
      `${name} stays quiet in a test`,
    )
  }
  const unknown = cases
    .map((check) => check['alertname'] as string)
    .filter((n) => !names.includes(n))
  t.same(unknown, [], 'no test of an alert that does not exist')
})

t.test(
  'the dashboard ConfigMap holds files/dashboard.json, labelled for the sidecar',
  async (t) => {
    const [configMap] = component('dashboard.yaml')
    t.equal(configMap?.['metadata'].labels.grafana_dashboard, '1')
    t.equal(
      configMap?.['data']['mcp-admission.json'],
      read('manifests/charts/mcp-admission/files/dashboard.json').trim(),
    )
  },
)

t.test(
  'the dashboard: unique ids, a 24-column grid without overlaps, queries per panel',
  async (t) => {
    const dashboard = JSON.parse(read('manifests/charts/mcp-admission/files/dashboard.json')) as Any
    t.equal(dashboard['uid'], 'mcp-admission', 'a stable uid: links and provisioning keep working')
    const panels = dashboard['panels'] as Any[]
    const ids = panels.map((panel) => panel['id'] as number)
    t.same(ids.length, new Set(ids).size, 'unique panel ids')
    const cells = new Map<string, string>()
    const overlaps: string[] = []
    const variables = new Set([
      ...(dashboard['templating'].list as Any[]).map(
        (variable) => `$${variable['name'] as string}`,
      ),
      '$__rate_interval',
    ])
    for (const panel of panels) {
      const { x, y, w, h } = panel['gridPos'] as Record<string, number>
      t.ok(x! >= 0 && x! + w! <= 24, `${panel['title']} fits the grid`)
      for (let row = y!; row < y! + h!; row++)
        for (let column = x!; column < x! + w!; column++) {
          const other = cells.get(`${row},${column}`)
          if (other !== undefined) overlaps.push(`${panel['title']} over ${other}`)
          cells.set(`${row},${column}`, panel['title'] as string)
        }
      if (panel['type'] === 'row') continue
      t.ok((panel['description'] ?? '').length > 20, `${panel['title']} says what it shows`)
      t.same(panel['datasource'], { type: 'prometheus', uid: '${datasource}' }, panel['title'])
      const targets = panel['targets'] as Any[]
      t.ok(targets.length > 0, `${panel['title']} has queries`)
      t.same(
        targets.map((target) => target['refId']),
        targets.map((_, i) => String.fromCharCode(65 + i)),
        `${panel['title']} refIds`,
      )
      for (const target of targets)
        for (const [variable] of (target['expr'] as string).matchAll(/\$\w+/g))
          t.ok(variables.has(variable), `${panel['title']}: ${variable} is a variable`)
    }
    t.same([...new Set(overlaps)], [], 'no panel overlaps another')
  },
)
