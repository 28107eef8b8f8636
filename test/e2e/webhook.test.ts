/**
 * The shipped webhook registration, called by the real API server: RunConfig ConfigMaps are
 * stored with their checksum, server-side dry runs work, and objects outside the rules never
 * reach the webhook.
 */

import { readFile } from 'node:fs/promises'
import t from 'tap'
import { contentChecksum } from '../../src/policy/content-checksum.ts'
import { startEnvironment } from './harness/environment.ts'
import { mustKubectl } from './harness/kubectl.ts'

const CHECKSUM = 'toolhive.stacklok.dev/content-checksum'
const env = await startEnvironment(t)
const { kubectl, admission } = env

function runConfigMap(namespace: string, name: string, data: Record<string, string>) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace,
      labels: {
        'toolhive.stacklok.io/component': 'run-config',
        'toolhive.stacklok.io/mcp-server': name.replace(/-runconfig$/, ''),
        'toolhive.stacklok.io/managed-by': 'toolhive-operator',
      },
    },
    data,
  }
}

async function storedConfigMap(namespace: string, name: string) {
  const out = await mustKubectl(kubectl, ['get', 'configmap', name, '-n', namespace, '-o', 'json'])
  return JSON.parse(out) as {
    metadata: { annotations?: Record<string, string>; resourceVersion: string }
  }
}

t.test(
  // The checksum of docs/enforcement.md#the-runconfig-checksum.
  'a RunConfig ConfigMap created with kubectl is stored with its content checksum',
  async (t) => {
    const ns = await env.namespace()
    const object = runConfigMap(ns, 'demo-runconfig', {
      'runconfig.json': '{\n  "name": "demo"\n}',
    })
    await mustKubectl(kubectl, ['apply', '-f', '-'], JSON.stringify(object))
    const stored = await storedConfigMap(ns, 'demo-runconfig')
    const annotations = stored.metadata.annotations ?? {}
    // The checksum of its content, whatever else kubectl added to the annotations.
    t.equal(annotations[CHECKSUM], expectedChecksum(stored))
    t.match(annotations[CHECKSUM], /^[0-9a-f]{64}$/)

    // Changing the data changes the stamped checksum.
    const changed = runConfigMap(ns, 'demo-runconfig', {
      'runconfig.json': '{"name": "demo", "port": 8080}',
    })
    await mustKubectl(kubectl, ['apply', '-f', '-'], JSON.stringify(changed))
    const after = await storedConfigMap(ns, 'demo-runconfig')
    t.not(after.metadata.annotations?.[CHECKSUM], annotations[CHECKSUM])
    t.equal(after.metadata.annotations?.[CHECKSUM], expectedChecksum(after))
  },
)

// The test vector of docs/enforcement.md#the-runconfig-checksum.
t.test('the test vector holds through the API server', async (t) => {
  const ns = await env.namespace()
  const object = runConfigMap(ns, 'demo-runconfig', { 'runconfig.json': '{\n  "name": "demo"\n}' })
  // `kubectl create` adds no last-applied annotation, so the hashed input is exactly the vector.
  await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(object))
  const stored = await storedConfigMap(ns, 'demo-runconfig')
  t.equal(
    stored.metadata.annotations?.[CHECKSUM],
    '7220370996b543fcd3149832323a57477e6c9b8698fa3119831352da3487a989',
  )
})

t.test('kubectl apply --dry-run=server shows the mutation and stores nothing', async (t) => {
  const ns = await env.namespace()
  const object = runConfigMap(ns, 'dry-runconfig', { 'runconfig.json': '{}' })
  const out = await mustKubectl(
    kubectl,
    ['apply', '--dry-run=server', '-o', 'json', '-f', '-'],
    JSON.stringify(object),
  )
  const dry = JSON.parse(out) as { metadata: { annotations?: Record<string, string> } }
  t.match(dry.metadata.annotations?.[CHECKSUM], /^[0-9a-f]{64}$/)
  const get = await kubectl(['get', 'configmap', 'dry-runconfig', '-n', ns])
  t.not(get.code, 0, 'nothing was stored')
  t.match(get.stderr, /NotFound/)
})

t.test('objects outside the rules are untouched and never reach the webhook', async (t) => {
  const ns = await env.namespace()
  const before = await admission.metric('controller_runtime_webhook_requests_total')
  const plain = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'plain', namespace: ns },
    data: { a: 'b' },
  }
  await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(plain))
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'unrelated', namespace: ns, labels: { app: 'unrelated' } },
    spec: {
      selector: { matchLabels: { app: 'unrelated' } },
      template: {
        metadata: { labels: { app: 'unrelated' } },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      },
    },
  }
  await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(deployment))
  const stored = await storedConfigMap(ns, 'plain')
  t.equal(
    stored.metadata.annotations?.[CHECKSUM],
    undefined,
    'no checksum on a ConfigMap that is not a RunConfig',
  )
  const after = await admission.metric('controller_runtime_webhook_requests_total')
  t.equal(after, before, 'the webhook received no request for them')

  // A RunConfig ConfigMap does reach it (the counter can move).
  await mustKubectl(
    kubectl,
    ['create', '-f', '-'],
    JSON.stringify(runConfigMap(ns, 'x-runconfig', { k: 'v' })),
  )
  t.equal(
    (await admission.metric('controller_runtime_webhook_requests_total', { webhook: '/mutate' })) >
      0,
    true,
  )
  t.ok((await admission.metric('controller_runtime_webhook_requests_total')) > after)
})

function expectedChecksum(stored: unknown): string {
  const result = contentChecksum(stored as Parameters<typeof contentChecksum>[0])
  if (!('checksum' in result)) throw new Error('stored ConfigMap has invalid maps')
  return result.checksum
}

t.test('no object body, secret reference or key material reaches the log', async (t) => {
  const ns = await env.namespace()
  const marker = `marker-${Date.now().toString(36)}`
  await mustKubectl(
    kubectl,
    ['create', '-f', '-'],
    JSON.stringify(
      runConfigMap(ns, 'logged-runconfig', { 'runconfig.json': `{"token":"${marker}-data"}` }),
    ),
  )
  await mustKubectl(
    kubectl,
    ['create', '-f', '-'],
    JSON.stringify({
      apiVersion: 'toolhive.stacklok.dev/v1alpha1',
      kind: 'MCPWebhookConfig',
      metadata: { name: 'logged', namespace: ns },
      spec: {
        validating: [
          {
            name: 'v',
            url: 'https://v.example.com',
            hmacSecretRef: { name: `${marker}-hmac`, key: `${marker}-key` },
            tlsConfig: { caSecretRef: { name: `${marker}-ca`, key: 'ca.crt' } },
          },
        ],
      },
    }),
  )
  // A password in a webhook URL: the config is denied (no user-info allowed), and the denial's
  // reason, logged at info level, must not carry it.
  const denied = await kubectl(
    ['create', '-f', '-'],
    JSON.stringify({
      apiVersion: 'toolhive.stacklok.dev/v1alpha1',
      kind: 'MCPWebhookConfig',
      metadata: { name: 'with-password', namespace: ns },
      spec: { validating: [{ name: 'v', url: `https://admin:${marker}-pw@v.example.com/hook` }] },
    }),
  )
  t.not(denied.code, 0, 'a URL with user-info is denied')
  t.match(denied.stderr, /REDACTED@v\.example\.com/, 'and shown redacted')
  t.notOk(denied.stderr.includes(marker), 'the password is not echoed to the user either')
  // The log is written at debug level here, stricter than the info level the requirement names.
  const log = await readFile(admission.process.logFile, 'utf8')
  t.ok(log.includes('"uid"'), 'reviews are logged (the scan reads a real log)')
  t.notOk(log.includes(marker), 'no ConfigMap data, secret reference name or key, or URL password')
  t.notOk(/PRIVATE KEY|BEGIN CERTIFICATE/.test(log), 'no key or certificate material')
  t.notOk(log.includes('"runconfig.json"'), 'no ConfigMap body')
})
