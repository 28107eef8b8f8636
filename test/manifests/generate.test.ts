/**
 * How `npm run manifests` lays a chart's renders out as kustomize files, with a stand-in for helm
 * that prints small renders in helm's format: what goes to the base and to each component, what
 * is dropped, and the differences between renders it refuses. The real chart and helm are
 * test/e2e/chart.test.ts's.
 */

import t from 'tap'
import { parseAllDocuments } from 'yaml'
import type { Helm } from '../e2e/harness/helm.ts'
import { generate } from './generate.ts'

type Any = Record<string, any>

const LABELS = {
  'app.kubernetes.io/name': 'mcp-admission',
  'app.kubernetes.io/part-of': 'toolhive',
  'app.kubernetes.io/managed-by': 'Helm',
  'helm.sh/chart': 'mcp-admission-9.9.9',
}

/** A render in helm's format: each document behind `---` and its `# Source:` line. */
function helmText(documents: readonly [string, Any][]): string {
  return documents
    .map(([template, object]) => {
      const body = JSON.stringify(object, null, 2)
      return `---\n# Source: mcp-admission/templates/${template}\n# A comment kept.\n${body}\n`
    })
    .join('')
}

/**
 * The chart's renders, as a fake helm: defaults, certificates.source=secret, and each optional
 * component's switch (network policy, monitoring).
 */
function fakeHelm(change: { secret?: (o: Any[]) => void; policy?: (o: Any[]) => void } = {}) {
  const helm: Helm = (args) => {
    const set = args.filter((_, i) => args[i - 1] === '--set')
    const secret = set.includes('certificates.source=secret')
    const caBundle = set.find((value) => value.startsWith('certificates.caBundle='))?.split('=')[1]
    const policy = set.includes('networkPolicy.enabled=true')
    const monitoring = set.includes('monitoring.serviceMonitor.enabled=true')
    const webhooks: Any = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: {
        name: 'mcp-admission',
        labels: LABELS,
        ...(secret
          ? {}
          : {
              annotations: {
                'cert-manager.io/inject-ca-from': 'mcp-admission/mcp-admission-serving',
              },
            }),
      },
      webhooks: [
        {
          name: 'w.example.com',
          clientConfig: {
            ...(secret ? { caBundle } : {}),
            service: { name: 'mcp-admission', namespace: 'mcp-admission', path: '/validate' },
          },
        },
      ],
    }
    const objects: [string, Any][] = [
      [
        'service-account.yaml',
        {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: 'mcp-admission', namespace: 'mcp-admission', labels: LABELS },
        },
      ],
      ['webhooks.yaml', webhooks],
    ]
    if (!secret)
      objects.push([
        'certificates.yaml',
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Issuer',
          metadata: { name: 'mcp-admission-ca', namespace: 'mcp-admission', labels: LABELS },
          spec: { selfSigned: {} },
        },
      ])
    // What each optional component's switch adds.
    const added = (apiVersion: string, kind: string, spec: Any): Any => ({
      apiVersion,
      kind,
      metadata: { name: 'mcp-admission', namespace: 'mcp-admission', labels: LABELS },
      spec,
    })
    if (policy)
      objects.push([
        'network-policy.yaml',
        added('networking.k8s.io/v1', 'NetworkPolicy', { podSelector: {} }),
      ])
    if (monitoring)
      objects.push([
        'service-monitor.yaml',
        added('monitoring.coreos.com/v1', 'ServiceMonitor', { endpoints: [{ port: 'metrics' }] }),
      ])
    const plain = objects.map(([, object]) => object)
    if (secret) change.secret?.(plain)
    if (policy) change.policy?.(plain)
    return Promise.resolve({ code: 0, stdout: helmText(objects), stderr: '' })
  }
  return helm
}

const parse = (text: string | undefined): Any[] =>
  parseAllDocuments(text ?? '').map((document) => document.toJS() as Any)

t.test('the defaults without cert-manager are the base; each switch is a component', async (t) => {
  const files = await generate(fakeHelm())
  t.same([...files.keys()].sort(), [
    'base/kustomization.yaml',
    'base/namespace.yaml',
    'base/service-account.yaml',
    'base/webhooks.yaml',
    'components/cert-manager/certificates.yaml',
    'components/cert-manager/kustomization.yaml',
    'components/monitoring/kustomization.yaml',
    'components/monitoring/service-monitor.yaml',
    'components/network-policy/kustomization.yaml',
    'components/network-policy/network-policy.yaml',
    'kustomization.yaml',
  ])
  const [webhooks] = parse(files.get('base/webhooks.yaml'))
  t.same(
    webhooks?.['metadata'],
    {
      name: 'mcp-admission',
      labels: {
        'app.kubernetes.io/name': 'mcp-admission',
        'app.kubernetes.io/part-of': 'toolhive',
      },
    },
    'no Helm labels, no cert-manager annotation',
  )
  t.equal(webhooks?.['webhooks'][0].clientConfig.caBundle, undefined, 'no caBundle')
  t.match(files.get('base/webhooks.yaml'), /^# A comment kept\.$/m)
  t.notMatch(files.get('base/webhooks.yaml'), /Source:/)
  t.match(parse(files.get('base/namespace.yaml'))[0], {
    kind: 'Namespace',
    metadata: {
      name: 'mcp-admission',
      labels: {
        'app.kubernetes.io/name': 'mcp-admission',
        'pod-security.kubernetes.io/enforce': 'restricted',
      },
    },
  })
  t.same(parse(files.get('base/kustomization.yaml'))[0]?.['resources'], [
    'namespace.yaml',
    'service-account.yaml',
    'webhooks.yaml',
  ])

  const component = parse(files.get('components/cert-manager/kustomization.yaml'))[0]
  t.same(component?.['resources'], ['certificates.yaml'])
  t.same(component?.['patches'], [
    {
      target: { kind: 'ValidatingWebhookConfiguration', name: 'mcp-admission' },
      patch:
        '- op: add\n  path: /metadata/annotations\n  value:\n' +
        '    cert-manager.io/inject-ca-from: mcp-admission/mcp-admission-serving',
    },
  ])
  t.match(parse(files.get('components/cert-manager/certificates.yaml')), [{ kind: 'Issuer' }])
  t.match(parse(files.get('components/network-policy/network-policy.yaml')), [
    { kind: 'NetworkPolicy' },
  ])
  t.same(parse(files.get('components/monitoring/kustomization.yaml'))[0]?.['resources'], [
    'service-monitor.yaml',
  ])
  t.match(parse(files.get('components/monitoring/service-monitor.yaml')), [
    { kind: 'ServiceMonitor', metadata: { labels: { 'app.kubernetes.io/part-of': 'toolhive' } } },
  ])
  t.same(parse(files.get('kustomization.yaml'))[0], {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: ['base'],
    components: ['components/cert-manager'],
  })
})

t.test('a difference kustomize could not compose back stops the generator', async (t) => {
  await t.rejects(
    generate(
      fakeHelm({
        secret: (objects) => {
          objects[0]!['automountServiceAccountToken'] = false
        },
      }),
    ),
    /ServiceAccount\/mcp-admission\/mcp-admission: certificates.source=cert-manager changes more/,
  )
  await t.rejects(
    generate(
      fakeHelm({
        policy: (objects) => {
          objects[0]!['metadata'].labels = { extra: 'label' }
        },
      }),
    ),
    /ServiceAccount\/mcp-admission\/mcp-admission: networkPolicy.enabled=true changes an object/,
  )
})
