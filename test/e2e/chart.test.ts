/**
 * The Helm chart (manifests/charts/mcp-admission) with a real `helm` (harness/helm.ts) and the
 * real API server: it lints; the kustomize install in manifests/ is what `npm run manifests`
 * generates from it (test/manifests/generate.ts) and renders the same objects for the same
 * settings; it rejects mistyped values, and once installed is what the API server calls — its own
 * webhook configurations, unmodified, reaching the Service through the service network and
 * verifying TLS with the chart's caBundle. Upgrades take effect and uninstall removes the webhooks.
 */

import { isDeepStrictEqual } from 'node:util'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { createDevCertificates, writeDevCertificates } from '../../src/http/dev-certs.ts'
import {
  MANIFESTS_DIR,
  SERVICE_NAMESPACE,
  renderBaseWith,
  startEnvironment,
  waitUntilWebhooksAreCalled,
} from './harness/environment.ts'
import type { RunningAdmission } from './harness/environment.ts'
import { runCli } from '../helpers/cli.ts'
import { ensureHelm, helmFor, mustHelm } from './harness/helm.ts'
import { MONITORING_ON } from './harness/monitoring.ts'
import { mustKubectl } from './harness/kubectl.ts'
import { waitFor } from './harness/processes.ts'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import { WEBHOOK_TABLE } from '../../src/policy/webhooks.ts'
import type { WebhookEntry, WebhookId } from '../../src/policy/webhooks.ts'
import { renderedFailurePolicy } from '../manifests/failure-policy.ts'
import type { ChartSettings } from '../manifests/failure-policy.ts'
import {
  COMMAND,
  HELM_ONLY_LABELS,
  committedFiles,
  differences,
  generate,
} from '../manifests/generate.ts'

const CHART = join(MANIFESTS_DIR, 'charts/mcp-admission')
// The kustomize install's names: release `mcp-admission` in namespace `mcp-admission`.
const RELEASE = 'mcp-admission'
const NAMESPACE = SERVICE_NAMESPACE
const CHECKSUM = 'toolhive.stacklok.dev/content-checksum'

/**
 * Everything the chart and kustomize may differ in with the same settings, and why: Helm's own
 * labels (HELM_ONLY_LABELS, which the generator leaves out) and these kinds. Nothing else is
 * removed before comparing.
 */
const KUSTOMIZE_ONLY_KINDS: Readonly<Record<string, string>> = {
  Namespace:
    "Helm convention: the release namespace is the user's (`--create-namespace`); NOTES.txt and the README give the PSS label the base sets on it",
}

type K8sObject = {
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string> }
  [key: string]: unknown
}

const start = Date.now()
const helmBinary =
  process.env['E2E_HELM'] ||
  (await ensureHelm((line) => {
    t.comment(line)
  }))
// A bare control plane with a service network: the chart brings the rest, in the tests below.
const env = await startEnvironment(t, {
  serviceNetwork: true,
  crds: [],
  identity: false,
  service: false,
})
const { plane, kubectl, network } = env
const helm = await helmFor(helmBinary, plane.kubeconfig)
t.teardown(() => helm.close())
/** `helm template` of the chart as the kustomize install names it, with `values`, parsed. */
const template = async (...values: string[]) =>
  parse(await mustHelm(helm, ['template', RELEASE, CHART, '-n', NAMESPACE, ...values]))

// A CA and a serving certificate for the Service's DNS name, as certificates.source=secret expects.
const certDir = join(plane.dir, 'serving-certs')
const certificates = await createDevCertificates({
  hosts: [`${RELEASE}.${NAMESPACE}.svc`],
  validDays: 2,
})
await writeDevCertificates(certDir, certificates)
const secretValues = join(plane.dir, 'secret-values.json')
// JSON is YAML: a values file with the PEM bundle as it is.
await writeFile(
  secretValues,
  JSON.stringify({ certificates: { source: 'secret', caBundle: certificates.ca } }),
)

t.test(
  'helm lint --strict passes with the defaults, certificates from a Secret, and monitoring on',
  async (t) => {
    for (const extra of [[], ['-f', secretValues], [...MONITORING_ON]]) {
      const result = await helm(['lint', '--strict', CHART, ...extra])
      t.equal(result.code, 0, `${extra.join(' ')}\n${result.stdout}${result.stderr}`)
    }
  },
)

t.test(`the kustomize install is what \`${COMMAND}\` generates from the chart`, async (t) => {
  const generated = await generate(helm)
  const stale = differences(await committedFiles(), generated)
  t.same(stale, [], `out of date, run \`${COMMAND}\`:\n${stale.join('\n')}`)
  // The check is not vacuous: a chart that renders one value differently makes the files that
  // hold it stale (a webhook's timeout is also its latency alert's threshold).
  t.same(
    differences(generated, await generate(helm, ['--set', 'webhooks.workloads.timeoutSeconds=7'])),
    [
      'manifests/base/webhooks.yaml: differs from what the chart renders',
      'manifests/components/monitoring/prometheus-rule.yaml: differs from what the chart renders',
    ],
  )
})

// The generated files composed by kustomize (patches, components) against the chart's renders.
t.test('the chart renders the objects kustomize renders, for the same settings', async (t) => {
  const caBundle = Buffer.from(certificates.ca).toString('base64')
  const cases: [string, string[], () => Promise<string>, (objects: K8sObject[]) => void][] = [
    ['defaults vs manifests/ (base + cert-manager)', [], () => kustomize(MANIFESTS_DIR), noop],
    [
      'certificates.source=secret vs manifests/base with that caBundle',
      ['-f', secretValues],
      () => kustomize(join(MANIFESTS_DIR, 'base')),
      (objects) => {
        setCaBundle(objects, caBundle)
      },
    ],
    [
      'networkPolicy.enabled vs manifests/ + components/network-policy',
      ['--set', 'networkPolicy.enabled=true'],
      () =>
        renderBaseWith(kubectl, plane.dir, [
          'components/cert-manager',
          'components/network-policy',
        ]),
      noop,
    ],
    [
      'monitoring.*.enabled vs manifests/ + components/monitoring',
      [...MONITORING_ON],
      () =>
        renderBaseWith(kubectl, plane.dir, ['components/cert-manager', 'components/monitoring']),
      noop,
    ],
  ]
  for (const [name, values, render, adjust] of cases) {
    const helmObjects = parse(
      await mustHelm(helm, ['template', RELEASE, CHART, '-n', NAMESPACE, ...values]),
    )
    const kustomizeObjects = parse(await render())
    adjust(kustomizeObjects)
    const differences = compare(normalise(kustomizeObjects), normalise(helmObjects))
    t.same(differences, [], `${name}:\n${differences.join('\n')}`)
  }
  // The comparison is not vacuous: one changed value is one difference, named by its path.
  const changed = compare(
    normalise(parse(await kustomize(MANIFESTS_DIR))),
    normalise(await template('--set', 'webhooks.workloads.timeoutSeconds=7')),
  )
  t.same(changed, [
    'ValidatingWebhookConfiguration//mcp-admission.webhooks[2].timeoutSeconds: kustomize 5, chart 7',
  ])
  t.comment(
    `compared after removing only labels ${Object.keys(HELM_ONLY_LABELS).join(', ')} and kinds ${Object.keys(KUSTOMIZE_ONLY_KINDS).join(', ')}`,
  )
})

t.test('another release namespace is the one every webhook calls and excludes', async (t) => {
  const objects = parse(await mustHelm(helm, ['template', RELEASE, CHART, '-n', 'tools']))
  for (const configuration of objects.filter((o) => o.kind.endsWith('WebhookConfiguration'))) {
    for (const webhook of configuration['webhooks'] as {
      name: string
      namespaceSelector: { matchExpressions: { values: string[] }[] }
      clientConfig: { service: { namespace: string } }
    }[]) {
      t.same(webhook.namespaceSelector.matchExpressions[0]?.values, ['kube-system', 'tools'])
      t.equal(webhook.clientConfig.service.namespace, 'tools', webhook.name)
    }
  }
  const serving = objects.find(
    (o) => o.kind === 'Certificate' && o.metadata.name.endsWith('serving'),
  )
  t.same((serving?.['spec'] as { dnsNames: string[] }).dnsNames, [
    'mcp-admission.tools.svc',
    'mcp-admission.tools.svc.cluster.local',
  ])
})

t.test(
  'operator names the writer classifier, as a flag only when not the default; operatorServiceAccount fails with the way out',
  async (t) => {
    const args = async (values: string[]) => {
      const objects = parse(
        await mustHelm(helm, ['template', RELEASE, CHART, '-n', NAMESPACE, ...values]),
      )
      const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as {
        spec: { template: { spec: { containers: { args: string[] }[] } } }
      }
      return deployment.spec.template.spec.containers[0]?.args ?? []
    }
    const flags = async (values: string[]) =>
      (await args(values)).filter((arg) => arg.startsWith('--operator-service-account'))
    // The defaults are the service's own (toolhive-system/toolhive-operator): no flag.
    t.same(await flags([]), [])
    t.same(
      await flags(['--set', 'operator.namespace=toolhive-system']),
      [],
      'the default set explicitly',
    )
    t.same(await flags(['--set', 'operator.namespace=ops']), [
      '--operator-service-account=ops/toolhive-operator',
    ])
    t.same(
      await flags([
        '--set',
        'operator.namespace=ops',
        '--set',
        'operator.serviceAccount=thv-operator',
      ]),
      ['--operator-service-account=ops/thv-operator'],
    )
    // An empty namespace: the name alone, in any namespace (the metric only, no fallback).
    t.same(await flags(['--set', 'operator.namespace=']), [
      '--operator-service-account=toolhive-operator',
    ])
    const old = await helmTemplate(['--set', 'operatorServiceAccount=ops/thv-operator'])
    t.not(old.code, 0, 'the replaced value fails the render')
    t.match(
      old.stderr,
      /operatorServiceAccount was replaced by operator\.namespace and operator\.serviceAccount: set those instead \(docs\/configuration\.md#upgrading\)\. On helm upgrade, --reuse-values .*--reset-then-reuse-values/,
    )
  },
)

t.test(
  'watching only: the flags are rendered and every webhook that stops enforcing fails open',
  async (t) => {
    const render = async (values: string[]) =>
      parse(await mustHelm(helm, ['template', RELEASE, CHART, '-n', NAMESPACE, ...values]))
    const policies = (objects: K8sObject[]) =>
      Object.fromEntries(
        objects
          .filter((o) => o.kind.endsWith('WebhookConfiguration'))
          .flatMap((o) => o['webhooks'] as { name: string; failurePolicy: string }[])
          .map((w) => [w.name.split('.')[0], w.failurePolicy]),
      )
    const argsOf = (objects: K8sObject[]) =>
      (
        objects.find((o) => o.kind === 'Deployment') as unknown as {
          spec: { template: { spec: { containers: { args: string[] }[] } } }
        }
      ).spec.template.spec.containers[0]?.args ?? []
    const defaults = await render([])
    t.same(policies(defaults), {
      deployments: 'Fail',
      'deployments-scale': 'Fail',
      runconfigs: 'Fail',
      webhookconfigs: 'Fail',
      compositetools: 'Ignore',
      workloads: 'Ignore',
      deletes: 'Ignore',
    })
    t.same(
      argsOf(defaults).filter((a) => /validation-actions|mutation-mode/.test(a)),
      [],
    )
    const watching = await render([
      '--set',
      'validationActions={Warn,Audit}',
      '--set',
      'mutationMode=observe',
    ])
    t.same(
      Object.values(policies(watching)),
      WEBHOOK_TABLE.map(() => 'Ignore'),
    )
    t.same(
      argsOf(watching).filter((a) => /validation-actions|mutation-mode/.test(a)),
      ['--validation-actions=Warn,Audit', '--mutation-mode=observe'],
    )
    // Mutations applied, validations still watched: only the validating webhooks fail open.
    t.same(policies(await render(['--set', 'validationActions={Audit}'])), {
      deployments: 'Fail',
      'deployments-scale': 'Fail',
      runconfigs: 'Fail',
      webhookconfigs: 'Ignore',
      compositetools: 'Ignore',
      workloads: 'Ignore',
      deletes: 'Ignore',
    })
    const refused = await helmTemplate(['--set', 'validationActions={Deny,Warn}'])
    t.not(refused.code, 0, 'Deny with Warn is refused, as the service refuses it')
    t.match(refused.stderr, /validationActions/)
  },
)

t.test(
  "ruleActions: passed as --rule-actions, and each webhook's failurePolicy follows its rules",
  async (t) => {
    const webhooksOf = (objects: K8sObject[]) =>
      objects
        .filter((o) => o.kind.endsWith('WebhookConfiguration'))
        .flatMap((o) => o['webhooks'] as { name: string; failurePolicy: string }[])
    const argsOf = (objects: K8sObject[]) =>
      (
        objects.find((o) => o.kind === 'Deployment') as unknown as {
          spec: { template: { spec: { containers: { args: string[] }[] } } }
        }
      ).spec.template.spec.containers[0]?.args ?? []
    // Each case: the values, as helm --set takes them and as failure-policy.ts takes them.
    const cases: {
      set: string[]
      settings: ChartSettings
      configured?: Partial<Record<WebhookId, 'Fail' | 'Ignore'>>
      flag?: string
    }[] = [
      { set: [], settings: { validationActions: ['Deny'], mutationMode: 'apply' } },
      {
        set: ['validationActions={Warn,Audit}', 'ruleActions.webhook-config={Deny}'],
        settings: {
          validationActions: ['Warn', 'Audit'],
          ruleActions: new Map([['webhook-config', ['Deny']]]),
          mutationMode: 'apply',
        },
        flag: '--rule-actions=webhook-config=Deny',
      },
      {
        set: ['ruleActions.webhook-config={Warn,Audit}', 'ruleActions.delete-guard={Deny,Audit}'],
        settings: {
          validationActions: ['Deny'],
          ruleActions: new Map([
            ['webhook-config', ['Warn', 'Audit']],
            ['delete-guard', ['Deny', 'Audit']],
          ]),
          mutationMode: 'apply',
        },
        flag: '--rule-actions=delete-guard=Deny,Audit;webhook-config=Warn,Audit',
      },
      {
        set: [
          'mutationMode=observe',
          'webhooks.webhookConfigs.failurePolicy=Ignore',
          'ruleActions.workload={Warn,Audit}',
        ],
        settings: {
          validationActions: ['Deny'],
          ruleActions: new Map([['workload', ['Warn', 'Audit']]]),
          mutationMode: 'observe',
        },
        configured: { webhookConfigs: 'Ignore' },
        flag: '--rule-actions=workload=Warn,Audit',
      },
    ]
    for (const { set, settings, configured = {}, flag } of cases) {
      const objects = await template(...set.flatMap((value) => ['--set', value]))
      const rendered = Object.fromEntries(webhooksOf(objects).map((w) => [w.name, w.failurePolicy]))
      const expected = Object.fromEntries(
        (WEBHOOK_TABLE as readonly WebhookEntry[]).map((webhook) => [
          webhook.name,
          renderedFailurePolicy(
            webhook,
            configured[webhook.id] ?? webhook.failurePolicy,
            settings,
            RULE_TABLE,
          ),
        ]),
      )
      t.same(rendered, expected, set.join(' ') || 'the defaults')
      t.same(
        argsOf(objects).filter((arg) => arg.startsWith('--rule-actions')),
        flag === undefined ? [] : [flag],
        `${set.join(' ') || 'the defaults'}: the flag`,
      )
    }
  },
)

t.test(
  'monitoring: off by default; its selector labels, namespace and runbooks as set',
  async (t) => {
    t.notOk((await template()).some((o) => /^(ServiceMonitor|PrometheusRule)$/.test(o.kind)))
    const objects = await template(
      ...MONITORING_ON,
      '--set',
      'monitoring.serviceMonitor.labels.release=kube-prometheus-stack',
      '--set',
      'monitoring.prometheusRule.labels.release=kube-prometheus-stack',
      '--set',
      'monitoring.prometheusRule.runbookBaseURL=https://wiki.example.com/mcp-admission',
      '--set',
      'monitoring.dashboard.namespace=monitoring',
      '--set',
      'monitoring.dashboard.annotations.grafana_folder=ToolHive',
    )
    const find = (kind: string) => objects.find((o) => o.kind === kind) as Record<string, any>
    t.match(find('ServiceMonitor'), {
      metadata: { namespace: NAMESPACE, labels: { release: 'kube-prometheus-stack' } },
      spec: { endpoints: [{ port: 'metrics', path: '/metrics', scheme: 'http', interval: '30s' }] },
    })
    // The ServiceMonitor selects the Service the chart renders, on its metrics port.
    const service = find('Service')
    for (const [key, value] of Object.entries(
      find('ServiceMonitor')['spec'].selector.matchLabels as Record<string, string>,
    ))
      t.equal(service['metadata'].labels[key], value, `the Service carries ${key}`)
    t.ok((service['spec'].ports as { name: string }[]).some((port) => port.name === 'metrics'))
    const rule = find('PrometheusRule')
    t.equal(rule['metadata'].labels.release, 'kube-prometheus-stack')
    t.equal(
      rule['spec'].groups[0].rules[0].annotations.runbook_url,
      'https://wiki.example.com/mcp-admission#mcpadmissionnoreadyreplica',
    )
    t.match(find('ConfigMap'), {
      metadata: {
        name: 'mcp-admission-dashboard',
        namespace: 'monitoring',
        labels: { grafana_dashboard: '1' },
        annotations: { grafana_folder: 'ToolHive' },
      },
    })
  },
)

t.test('helm template piped into check --crds DIR - is checked as a file would be', async (t) => {
  const rendered = await mustHelm(helm, ['template', RELEASE, CHART, '-n', NAMESPACE])
  const crds = ['mcpservers', 'mcpremoteproxies', 'virtualmcpservers', 'mcpwebhookconfigs'].flatMap(
    (plural) => ['--crds', join(import.meta.dirname, `fixtures/crds/${plural}.yaml`)],
  )
  const piped = await runCli(['check', '--namespace', NAMESPACE, ...crds, '-'], rendered)
  t.equal(piped.code, 0, piped.stderr)
  t.match(piped.stdout, /admitted Deployment mcp-admission\/mcp-admission: unchanged\n/)
  // cert-manager's kinds: nothing here judges them, and the report says so.
  t.match(piped.stdout, /unchecked Certificate mcp-admission\/mcp-admission-serving: /)
  const dir = t.testdir({ 'chart.yaml': rendered })
  const fromFile = await runCli([
    'check',
    '--namespace',
    NAMESPACE,
    ...crds,
    join(dir, 'chart.yaml'),
  ])
  t.equal(piped.stdout, fromFile.stdout, 'the same report as from a file')
})

t.test('mistyped values fail the render with the reason', async (t) => {
  const failures: [string, string[], RegExp][] = [
    ['an unknown key', ['--set', 'replicass=3'], /additional properties 'replicass' not allowed/],
    ['a wrong type', ['--set', 'replicas=two'], /at '\/replicas': got string, want integer/],
    [
      'a failure policy outside the enum',
      ['--set', 'webhooks.deployments.failurePolicy=Fial'],
      /at '\/webhooks\/deployments\/failurePolicy': value must be one of 'Fail', 'Ignore'/,
    ],
    [
      'an operator namespace that is no namespace name',
      ['--set', 'operator.namespace=tool.hive'],
      /at '\/operator\/namespace': .*does not match pattern/,
    ],
    [
      'an operator service account that is no name',
      ['--set', 'operator.serviceAccount=Tool Hive'],
      /at '\/operator\/serviceAccount': .*does not match pattern/,
    ],
    [
      'the operator account as one value',
      ['--set', 'operator.name=ops/thv'],
      /at '\/operator': additional properties 'name' not allowed/,
    ],
    [
      'a scrape interval that is no Prometheus duration',
      ['--set', 'monitoring.serviceMonitor.interval=30 seconds'],
      /at '\/monitoring\/serviceMonitor\/interval': .*does not match pattern/,
    ],
    [
      'a runbook URL with its own fragment',
      ['--set', 'monitoring.prometheusRule.runbookBaseURL=https://example.com/runbooks#x'],
      /at '\/monitoring\/prometheusRule\/runbookBaseURL': .*does not match pattern/,
    ],
    [
      'a rule that is not in the rule table',
      ['--set', 'ruleActions.delte-guard={Deny}'],
      /at '\/ruleActions': additional properties 'delte-guard' not allowed/,
    ],
    [
      'Deny on a rule that only warns',
      ['--set', 'ruleActions.workload={Deny}'],
      /at '\/ruleActions\/workload\/0': value must be one of 'Warn', 'Audit'/,
    ],
    [
      'Fail on a webhook that never fails closed',
      ['--set', 'webhooks.deletes.failurePolicy=Fail'],
      /at '\/webhooks\/deletes\/failurePolicy': value must be 'Ignore'/,
    ],
    [
      'a Secret source without its CA bundle',
      ['--set', 'certificates.source=secret'],
      /certificates\.source=secret needs certificates\.caBundle/,
    ],
  ]
  for (const [name, values, message] of failures) {
    const result = await helmTemplate(values)
    t.not(result.code, 0, `${name} fails`)
    t.match(result.stderr, message, name)
  }
})

t.test('installed into the API server, the chart is what admits', async (t) => {
  await env.installCrds('fixtures')
  // The namespace as the README has users prepare it; the Secret the chart's pods would mount.
  await mustKubectl(kubectl, ['create', 'namespace', NAMESPACE])
  await mustKubectl(kubectl, [
    'label',
    'namespace',
    NAMESPACE,
    'pod-security.kubernetes.io/enforce=restricted',
  ])
  await mustKubectl(kubectl, [
    'create',
    'secret',
    'tls',
    `${RELEASE}-tls`,
    '-n',
    NAMESPACE,
    `--cert=${join(certDir, 'tls.crt')}`,
    `--key=${join(certDir, 'tls.key')}`,
  ])
  // The README's command (the namespace exists already: --create-namespace leaves it be).
  const installed = Date.now()
  await mustHelm(helm, [
    'install',
    RELEASE,
    CHART,
    '-n',
    NAMESPACE,
    '--create-namespace',
    '-f',
    secretValues,
  ])
  t.comment(`helm install took ${Date.now() - installed} ms`)

  // No kubelet runs here: mcp-admission runs locally as the chart's service account, serving the
  // Secret's pair, and the service network stands in for kube-proxy in front of its Service.
  let admission: RunningAdmission | undefined = await env.startAdmission({ certDir })
  t.teardown(() => admission?.stop())
  await network.route(
    kubectl,
    NAMESPACE,
    RELEASE,
    443,
    Number(new URL(admission.admissionUrl).port),
  )

  const ns = 'chart-e2e'
  await mustKubectl(kubectl, ['create', 'namespace', ns])
  await waitUntilWebhooksAreCalled(kubectl, ns)

  await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(runConfigMap(ns, 'a-runconfig')))
  t.match(
    await storedChecksum(ns, 'a-runconfig'),
    /^[0-9a-f]{64}$/,
    'the RunConfig got its checksum',
  )

  // A plain-http webhook URL: a rule only mcp-admission enforces (the CRD accepts it).
  const validations = () =>
    admission?.metric('controller_runtime_webhook_requests_total', { webhook: '/validate' }) ?? 0
  const before = await validations()
  const denied = await kubectl(
    ['create', '-f', '-'],
    JSON.stringify({
      apiVersion: 'toolhive.stacklok.dev/v1alpha1',
      kind: 'MCPWebhookConfig',
      metadata: { name: 'plain-http', namespace: ns },
      spec: { mutating: [{ name: 'm', url: 'http://m.example.com' }] },
    }),
  )
  t.not(denied.code, 0, 'an MCPWebhookConfig calling a plain-http URL is denied')
  t.match(denied.stderr, 'spec.mutating[0].url: Invalid value: "http://m.example.com"')
  t.match(denied.stderr, 'must use https unless tlsConfig.insecureSkipVerify is true')
  t.ok((await validations()) > before, 'by the service')

  t.ok(network.connections(NAMESPACE, RELEASE, 443) > 0, 'the API server dialled the Service')
  t.same(network.refused, [], 'and nothing else')

  t.test('helm upgrade with another failure policy takes effect', async (t) => {
    // With no replica answering, the fail-closed RunConfig webhook refuses the write…
    await admission?.stop()
    admission = undefined
    const refused = await kubectl(
      ['create', '-f', '-'],
      JSON.stringify(runConfigMap(ns, 'b-runconfig')),
    )
    t.not(refused.code, 0, 'failurePolicy Fail refuses while the service is down')
    t.match(
      refused.stderr,
      'failed calling webhook "runconfigs.mcp-admission.toolhive.stacklok.dev"',
    )

    await mustHelm(helm, [
      'upgrade',
      RELEASE,
      CHART,
      '-n',
      NAMESPACE,
      '-f',
      secretValues,
      '--set',
      'webhooks.runConfigs.failurePolicy=Ignore',
    ])
    const policies = await mustKubectl(kubectl, [
      'get',
      'mutatingwebhookconfiguration',
      RELEASE,
      '-o',
      'jsonpath={.webhooks[*].failurePolicy}',
    ])
    t.same(policies.split(' '), ['Fail', 'Fail', 'Ignore'], 'only the RunConfig webhook changed')
    // …and once the API server has the new configuration, the write goes through unmutated.
    await waitFor(
      'the API server to fail open for RunConfigs',
      async () =>
        (await kubectl(['create', '-f', '-'], JSON.stringify(runConfigMap(ns, 'b-runconfig'))))
          .code === 0
          ? true
          : undefined,
      { timeoutMs: 30_000, intervalMs: 250 },
    )
    t.equal(await storedChecksum(ns, 'b-runconfig'), undefined, 'stored without a checksum')
  })

  t.test('helm uninstall removes the webhook configurations', async (t) => {
    await mustHelm(helm, ['uninstall', RELEASE, '-n', NAMESPACE])
    for (const kind of [
      'mutatingwebhookconfiguration',
      'validatingwebhookconfiguration',
      'clusterrole',
    ]) {
      const result = await kubectl(['get', kind, RELEASE])
      t.match(result.stderr, /NotFound/, `${kind} is gone`)
    }
    const secret = await kubectl(['get', 'secret', `${RELEASE}-tls`, '-n', NAMESPACE])
    t.equal(secret.code, 0, 'the Secret it did not create stays')
  })
})

t.teardown(() => {
  t.comment(`chart test took ${((Date.now() - start) / 1000).toFixed(1)} s`)
})

function runConfigMap(namespace: string, name: string) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { 'toolhive.stacklok.io/component': 'run-config' } },
    data: { 'runconfig.json': '{"name": "demo"}' },
  }
}

/** `helm template` of the chart with `values`: its exit code and output (never throws). */
function helmTemplate(values: readonly string[]) {
  return helm(['template', RELEASE, CHART, '-n', NAMESPACE, ...values])
}

async function storedChecksum(namespace: string, name: string): Promise<string | undefined> {
  const out = await mustKubectl(kubectl, ['get', 'configmap', name, '-n', namespace, '-o', 'json'])
  return (JSON.parse(out) as { metadata: { annotations?: Record<string, string> } }).metadata
    .annotations?.[CHECKSUM]
}

function kustomize(dir: string): Promise<string> {
  return mustKubectl(kubectl, ['kustomize', dir])
}

function noop(): void {}

function setCaBundle(objects: K8sObject[], caBundle: string): void {
  for (const object of objects) {
    if (!object.kind.endsWith('WebhookConfiguration')) continue
    for (const webhook of object['webhooks'] as { clientConfig: Record<string, unknown> }[])
      webhook.clientConfig['caBundle'] = caBundle
  }
}

/**
 * Both renders read as Kubernetes tools read them: YAML 1.1, where the base's and the chart's
 * `defaultMode: 0440` is octal (kustomize prints it as 288).
 */
function parse(text: string): K8sObject[] {
  return parseAllDocuments(text, { version: '1.1' })
    .map((document) => document.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null)
}

/** The objects keyed by kind/namespace/name, with only the listed differences removed. */
function normalise(objects: readonly K8sObject[]): Map<string, K8sObject> {
  const keyed = new Map<string, K8sObject>()
  for (const object of objects) {
    if (object.kind in KUSTOMIZE_ONLY_KINDS) continue
    const copy = structuredClone(object)
    const labels = Object.entries(copy.metadata.labels ?? {}).filter(
      ([key]) => !(key in HELM_ONLY_LABELS),
    )
    if (labels.length > 0) copy.metadata.labels = Object.fromEntries(labels)
    else delete copy.metadata.labels
    const key = `${copy.kind}/${copy.metadata.namespace ?? ''}/${copy.metadata.name}`
    if (keyed.has(key)) throw new Error(`${key} is rendered twice`)
    keyed.set(key, copy)
  }
  return keyed
}

/** Readable differences: objects on one side only, then each differing field by path. */
function compare(kustomize: Map<string, K8sObject>, helm: Map<string, K8sObject>): string[] {
  const out: string[] = []
  for (const key of kustomize.keys()) if (!helm.has(key)) out.push(`only in kustomize: ${key}`)
  for (const key of helm.keys()) if (!kustomize.has(key)) out.push(`only in the chart: ${key}`)
  for (const [key, object] of kustomize) {
    const other = helm.get(key)
    if (other !== undefined) out.push(...fieldDifferences(object, other, key))
  }
  return out
}

function fieldDifferences(a: unknown, b: unknown, path: string): string[] {
  if (isDeepStrictEqual(a, b)) return []
  const bothObjects = typeof a === 'object' && a !== null && typeof b === 'object' && b !== null
  if (!bothObjects || Array.isArray(a) !== Array.isArray(b))
    return [`${path}: kustomize ${JSON.stringify(a)}, chart ${JSON.stringify(b)}`]
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  return [...keys].flatMap((key) =>
    fieldDifferences(
      (a as Record<string, unknown>)[key],
      (b as Record<string, unknown>)[key],
      `${path}${Array.isArray(a) ? `[${key}]` : `.${key}`}`,
    ),
  )
}
