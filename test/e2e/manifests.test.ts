/**
 * The shipped manifests against the real API server: the full install (with the cert-manager
 * component, validated by cert-manager's own CRDs of the release in harness/cert-manager.ts), the
 * bare base and each optional component on it (the monitoring one validated by the
 * prometheus-operator CRDs of harness/prometheus.ts) pass a server-side dry run, so every object
 * is one the API server accepts as written.
 */

import { join, relative } from 'node:path'
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { certManagerCrdDir } from './harness/cert-manager.ts'
import { prometheusOperatorCrdDir } from './harness/prometheus.ts'
import {
  MANIFESTS_DIR,
  mustKubectl,
  renderBaseWith,
  startEnvironment,
} from './harness/environment.ts'

type Any = Record<string, any>

// cert-manager's and prometheus-operator's CRDs (kubectl reads the directories' .yaml files and
// skips a README) and the ToolHive fixtures; nothing of the install itself, which the dry runs
// below check.
const { plane, kubectl } = await startEnvironment(t, {
  crds: [await certManagerCrdDir(), await prometheusOperatorCrdDir(), 'fixtures'],
  identity: false,
  service: false,
})
// A dry run creates nothing, so the namespaced objects need their namespace for real.
await mustKubectl(kubectl, ['create', 'namespace', 'mcp-admission'])

for (const [name, dir] of [
  ['manifests/ (with cert-manager)', MANIFESTS_DIR],
  ['manifests/base', join(MANIFESTS_DIR, 'base')],
  [
    'manifests/components/network-policy on the base',
    join(MANIFESTS_DIR, 'components/network-policy'),
  ],
  ['manifests/components/monitoring on the base', join(MANIFESTS_DIR, 'components/monitoring')],
] as const) {
  t.test(`kubectl apply --dry-run=server accepts ${name}`, async (t) => {
    const rendered = dir.includes('/components/')
      ? await renderBaseWith(kubectl, plane.dir, [relative(MANIFESTS_DIR, dir)])
      : await mustKubectl(kubectl, ['kustomize', dir])
    const result = await kubectl(
      ['apply', '--dry-run=server', '--server-side', '-f', '-'],
      rendered,
    )
    t.equal(result.code, 0, result.stderr)
    t.match(result.stdout, /deployment\.apps\/mcp-admission serverside-applied \(server dry run\)/)
  })
}

t.test('the monitoring objects are validated by the real CRDs, not merely stored', async (t) => {
  const rendered = await renderBaseWith(kubectl, plane.dir, ['components/monitoring'])
  const applied = await mustKubectl(
    kubectl,
    ['apply', '--dry-run=server', '--server-side', '-f', '-'],
    rendered,
  )
  t.match(applied, /servicemonitor\.monitoring\.coreos\.com\/mcp-admission serverside-applied/)
  t.match(applied, /prometheusrule\.monitoring\.coreos\.com\/mcp-admission serverside-applied/)
  t.match(applied, /configmap\/mcp-admission-dashboard serverside-applied/)
  // An interval that is no Prometheus duration, and a rule without an expression, are refused by
  // the API server itself (kubectl's own validation off).
  const objects = parseAllDocuments(rendered).map((document) => document.toJS() as Any)
  const serviceMonitor = objects.find((object) => object['kind'] === 'ServiceMonitor')!
  serviceMonitor['spec'].endpoints[0].interval = '30 seconds'
  const rule = objects.find((object) => object['kind'] === 'PrometheusRule')!
  delete rule['spec'].groups[0].rules[0].expr
  for (const [object, message] of [
    [serviceMonitor, /spec\.endpoints\[0\]\.interval: Invalid value: "30 seconds"/],
    [rule, /spec\.groups\[0\]\.rules\[0\]\.expr: Required value/],
  ] as const) {
    const refused = await kubectl(
      ['apply', '--dry-run=server', '--server-side', '--validate=false', '-f', '-'],
      JSON.stringify(object),
    )
    t.not(refused.code, 0, `${object['kind']} refused`)
    t.match(refused.stderr, message)
  }
})
