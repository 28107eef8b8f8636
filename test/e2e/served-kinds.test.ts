/**
 * Kinds and versions as the cluster serves them (issue 35), through the real API server:
 *  - the newest release's CRDs without MCPWebhookConfig (a partial install): the service is ready
 *    at once, the operator's proxy Deployments get their invariants, and installing the missing
 *    CRD later turns its validation on without a restart; removing it again keeps the service
 *    ready, says so once, and its metric reads 0;
 *  - an MCPWebhookConfig CRD that serves only v1beta1 (a release that moved the kind): ready, and
 *    an invalid config at v1beta1 is denied with the same messages as at v1alpha1;
 *  - a list the RBAC forbids: ready at once, degraded (its reads go live), cached once allowed.
 */

import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { parse, stringify } from 'yaml'
import { ensureOperator } from './toolhive/releases.ts'
import { mustKubectl, startEnvironment, waitFor } from './harness/environment.ts'
import type { Kubectl, RunningAdmission } from './harness/environment.ts'
import {
  checkInvariants,
  getObject,
  mcpServer,
  proxyDeployments,
} from './harness/operator-objects.ts'

const RELEASE = 'v0.63.0'
const FIXTURES = new URL('./fixtures/crds/', import.meta.url)
/**
 * What the newest release's CRDs admit and the webhook denies
 * (docs/enforcement.md#mcpwebhookconfig), at any version.
 */
const INVALID_SPEC = {
  validating: [{ name: 'a-b', url: 'http://a.example.com' }],
  mutating: [{ name: 'A_B', url: 'https://b.example.com' }],
}
const INVALID_MESSAGES = [
  'spec.validating[0].url: Invalid value: "http://a.example.com": must use https unless tlsConfig.insecureSkipVerify is true',
  'spec.mutating[0].name: Duplicate value: "A_B"',
]

const webhookConfig = (version: string, namespace: string, name: string, spec: unknown) => ({
  apiVersion: `toolhive.stacklok.dev/${version}`,
  kind: 'MCPWebhookConfig',
  metadata: { name, namespace },
  spec,
})

/** The service's log lines at warn, as written so far. */
async function warnings(admission: RunningAdmission): Promise<string[]> {
  const text = await readFile(admission.process.logFile, 'utf8')
  return text
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as { level?: string; msg?: string }]
      } catch {
        return []
      }
    })
    .filter((entry) => entry.level === 'warn')
    .map((entry) => String(entry.msg))
}

/** The invalid config is denied by the webhook with every one of its messages. */
async function deniedWithOurMessages(
  t: Test,
  kubectl: Kubectl,
  version: string,
  namespace: string,
): Promise<void> {
  const result = await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify(webhookConfig(version, namespace, 'bad', INVALID_SPEC)),
  )
  t.not(result.code, 0, `an invalid config at ${version} is refused`)
  for (const message of INVALID_MESSAGES)
    t.ok(result.stderr.includes(message), `kubectl shows: ${message}\n${result.stderr}`)
}

/** The proxy Deployment the operator writes for workload `name`, once it has. */
function operatorDeployment(kubectl: Kubectl, name: string, what: string) {
  return waitFor(
    `the operator to write the ${what} Deployment`,
    async () => (await proxyDeployments(kubectl)).find((d) => d['metadata'].name === name),
    { timeoutMs: 60_000 },
  )
}

/** Waits until the service's metric says MCPWebhookConfig is (1) or is no longer (0) served. */
async function webhookConfigServed(admission: RunningAdmission, value: 0 | 1): Promise<void> {
  await waitFor(
    `mcp_admission_kind_served{kind="MCPWebhookConfig",version="v1alpha1"} to read ${value}`,
    async () =>
      (await admission.metric('mcp_admission_kind_served', {
        kind: 'MCPWebhookConfig',
        version: 'v1alpha1',
      })) === value || undefined,
    { timeoutMs: 30_000 },
  )
}

t.test(`${RELEASE} CRDs without MCPWebhookConfig, beside the operator`, async (t) => {
  const files = await ensureOperator(RELEASE)
  const partial = t.testdir()
  const names = (await readdir(files.crds)).filter((name) => name.endsWith('.yaml'))
  const webhookConfigCrd = names.find((name) => name.includes('mcpwebhookconfigs'))
  t.ok(webhookConfigCrd, 'the release has an MCPWebhookConfig CRD')
  for (const name of names)
    if (name !== webhookConfigCrd) await copyFile(join(files.crds, name), join(partial, name))

  const namespace = 'partial'
  const env = await startEnvironment(t, {
    crds: [partial],
    // Started below, to time its start.
    service: false,
    beforeService: async ({ kubectl }) => {
      await mustKubectl(kubectl, ['create', 'namespace', namespace])
    },
    operator: { files, watch: [namespace] },
  })
  const { kubectl } = env
  const started = Date.now()
  const admission = await env.startAdmission()
  const readySeconds = (Date.now() - started) / 1000
  t.comment(`ready ${readySeconds.toFixed(1)} s after start, with MCPWebhookConfig not served`)
  t.ok(readySeconds < 15, 'ready within 15 s')
  await env.registerWebhooks(admission)
  t.same(
    (await warnings(admission)).filter((line) => line.startsWith('MCPWebhookConfig')),
    [
      'MCPWebhookConfig is not served by the cluster: not listed or watched; no webhookConfigRef warnings, and no Valid condition is stamped',
    ],
    'one warn line says what is off and why',
  )
  t.equal(await admission.metric('mcp_admission_kind_served', { kind: 'MCPWebhookConfig' }), 0)
  t.equal(
    await admission.metric('mcp_admission_kind_served', { kind: 'MCPServer', version: 'v1beta1' }),
    1,
  )

  // The operator's MCPRemoteProxy controller runs without the MCPWebhookConfig CRD; its MCPServer
  // controller (v0.63.0) watches MCPWebhookConfig and so waits for that CRD (and the operator
  // exits if it does not come within controller-runtime's cache sync timeout, 2 minutes): the
  // MCPServer is written now and reconciled once the CRD is installed below.
  await t.test('the operator reconciles; its proxy Deployments carry the invariants', async (t) => {
    await mustKubectl(
      kubectl,
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'toolhive.stacklok.dev/v1beta1',
        kind: 'MCPRemoteProxy',
        metadata: { name: 'remote', namespace },
        spec: { remoteUrl: 'https://remote.example.com/mcp', transport: 'streamable-http' },
      }),
    )
    await mustKubectl(
      kubectl,
      ['apply', '-f', '-'],
      JSON.stringify(mcpServer('fetch', namespace, { transport: 'streamable-http' })),
    )
    const deployment = await operatorDeployment(kubectl, 'remote', 'MCPRemoteProxy')
    await checkInvariants(t, kubectl, deployment)
  })

  await t.test('its CRD installed later: MCPWebhookConfig validated, no restart', async (t) => {
    const only = join(t.testdir(), webhookConfigCrd!)
    await copyFile(join(files.crds, webhookConfigCrd!), only)
    await env.installCrds(join(only, '..'))
    await deniedWithOurMessages(t, kubectl, 'v1alpha1', namespace)
    await webhookConfigServed(admission, 1)
    t.match(
      (await warnings(admission)).filter((line) => line.startsWith('MCPWebhookConfig')),
      [/not served/, /^MCPWebhookConfig is served at toolhive.stacklok.dev\/v1alpha1/],
    )
    t.equal(admission.process.child.exitCode, null, 'the same process')
    // And the operator's MCPServer controller, unblocked, writes the server's Deployment.
    const deployment = await operatorDeployment(kubectl, 'fetch', 'MCPServer')
    await checkInvariants(t, kubectl, deployment)
  })

  await t.test('the CRD removed while running: still ready, one warn line, metric 0', async (t) => {
    const before = (await warnings(admission)).length
    await mustKubectl(kubectl, ['delete', 'crd', 'mcpwebhookconfigs.toolhive.stacklok.dev'])
    await webhookConfigServed(admission, 0)
    t.equal((await admission.probe('/readyz')).status, 200, 'still ready')
    const added = (await warnings(admission)).slice(before)
    t.same(
      added.filter((line) => line.startsWith('MCPWebhookConfig')),
      [
        'MCPWebhookConfig is not served by the cluster (was toolhive.stacklok.dev/v1alpha1): not listed or watched; no webhookConfigRef warnings, and no Valid condition is stamped',
      ],
      'one warn line',
    )
    // And the proxy invariants go on: an edit of the server is stamped with its new generation.
    await mustKubectl(kubectl, [
      'patch',
      'mcpserver',
      'fetch',
      '-n',
      namespace,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { args: ['--edited'] } }),
    ])
    const generation = String(
      (await getObject(kubectl, 'mcpserver', 'fetch', namespace))?.['metadata'].generation,
    )
    const deployment = await waitFor(
      'the operator to write the edited Deployment',
      async () =>
        (await proxyDeployments(kubectl)).find(
          (d) =>
            d['metadata'].name === 'fetch' &&
            d['spec'].template.metadata.annotations?.[
              'toolhive.stacklok.dev/mcpserver-generation'
            ] === generation,
        ),
      { timeoutMs: 90_000 },
    )
    await checkInvariants(t, kubectl, deployment)
  })
})

t.test('an MCPWebhookConfig CRD that serves only v1beta1', async (t) => {
  // The test fixtures, with MCPWebhookConfig moved from v1alpha1 to v1beta1.
  const dir = t.testdir()
  for (const name of await readdir(FIXTURES)) {
    if (!name.endsWith('.yaml') || name === 'kustomization.yaml') continue
    const crd = parse(await readFile(new URL(name, FIXTURES), 'utf8')) as {
      spec: {
        names: { kind: string }
        versions: { name: string; served: boolean; storage: boolean }[]
      }
    }
    if (crd.spec.names.kind === 'MCPWebhookConfig') {
      const [only] = crd.spec.versions
      crd.spec.versions = [{ ...only!, name: 'v1beta1', served: true, storage: true }]
    }
    await writeFile(join(dir, name), stringify(crd))
  }
  const env = await startEnvironment(t, { crds: [dir] })
  const { kubectl, admission } = env
  t.equal((await admission.probe('/readyz')).status, 200, 'ready')
  t.equal(
    await admission.metric('mcp_admission_kind_served', {
      kind: 'MCPWebhookConfig',
      version: 'v1beta1',
    }),
    1,
    'read at v1beta1',
  )
  const namespace = await env.namespace()
  await deniedWithOurMessages(t, kubectl, 'v1beta1', namespace)
  const valid = await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify(
      webhookConfig('v1beta1', namespace, 'good', {
        validating: [{ name: 'policy', url: 'https://policy.example.com' }],
      }),
    ),
  )
  t.equal(valid.code, 0, `a valid config at v1beta1 is admitted\n${valid.stderr}`)
  t.equal(
    (await kubectl(['get', 'mcpwebhookconfigs.v1alpha1.toolhive.stacklok.dev', '-n', namespace]))
      .code,
    1,
    'v1alpha1 is not served at all',
  )
})

t.test('a list the RBAC forbids: ready, degraded, and cached again once allowed', async (t) => {
  const env = await startEnvironment(t, { service: false })
  const { kubectl } = env
  // The shipped ClusterRole with MCPServer (a kind readiness waits for) down to `get`: it may not be listed or watched.
  const role = JSON.parse(
    await mustKubectl(kubectl, ['get', 'clusterrole', 'mcp-admission', '-o', 'json']),
  ) as {
    metadata: { resourceVersion?: string }
    rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[]
  }
  // Replaced whatever its version by then.
  delete role.metadata.resourceVersion
  const shipped = structuredClone(role)
  const read = role.rules.find((rule) => rule.resources.includes('mcpservers'))!
  read.resources = read.resources.filter((resource) => resource !== 'mcpservers')
  role.rules.push({
    apiGroups: ['toolhive.stacklok.dev'],
    resources: ['mcpservers'],
    verbs: ['get'],
  })
  await mustKubectl(kubectl, ['replace', '-f', '-'], JSON.stringify(role))

  const started = Date.now()
  const admission = await env.startAdmission()
  t.comment(`ready ${((Date.now() - started) / 1000).toFixed(1)} s after start, list refused`)
  t.equal(await admission.metric('mcp_admission_cluster_view_degraded', { kind: 'MCPServer' }), 1)
  t.equal(await admission.metric('mcp_admission_cluster_view_synced'), 0, 'not every kind cached')
  t.match(
    (await warnings(admission)).filter((line) => line.startsWith('serving without')),
    [/^serving without a cache of MCPServer: the list is refused: .*forbidden/],
  )

  // RBAC fixed: the list succeeds at its next retry (at most 10 s apart) and the cache is used.
  await mustKubectl(kubectl, ['replace', '-f', '-'], JSON.stringify(shipped))
  await waitFor(
    'MCPServer to be cached',
    async () =>
      (await admission.metric('mcp_admission_cluster_view_degraded', {
        kind: 'MCPServer',
      })) === 0 || undefined,
    { timeoutMs: 30_000 },
  )
  t.equal(await admission.metric('mcp_admission_cluster_view_synced'), 1)
})
