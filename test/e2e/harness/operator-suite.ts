/**
 * mcp-admission beside the real ToolHive operator of one release (issue 15): the release's CRDs
 * and examples, the shipped webhooks and reconciler, then
 *  - no false denial of an example the CRDs accept;
 *  - the DESIGN §4.2 invariants on every proxy Deployment the operator writes, again after spec
 *    and override edits, and a `kubectl scale` of a stdio proxy capped;
 *  - no write by mcp-admission in steady state, and no object written more often than in the same
 *    window without mcp-admission (its webhooks removed and the service stopped);
 *  - a referenced MCPWebhookConfig bundle deleted with `kubectl delete -f` in file order where
 *    the operator's finalizer holds it, and refused where nothing does;
 *  - the reconciler stamping its conditions where no operator writes them (a namespace the
 *    operator does not watch).
 */

import type { Test } from 'tap'
import { effectiveContentChecksum } from '../../../src/policy/content-checksum.ts'
import { ensureOperator } from '../toolhive/releases.ts'
import {
  installIdentity,
  registerWebhooks,
  renderManifests,
  serviceAccountKubeconfig,
  startAdmission,
} from './admission.ts'
import { countWrites, writesBy, writesTo } from './churn.ts'
import { waitUntilWebhooksAreCalled } from './environment.ts'
import type { WatchedResource, WriteCounts } from './churn.ts'
import { startControlPlane } from './control-plane.ts'
import { kubectlFor, mustKubectl } from './kubectl.ts'
import type { Kubectl } from './kubectl.ts'
import {
  describeObject,
  exampleObjects,
  inBatches,
  installReleaseCrds,
  startOperator,
} from './operator.ts'
import type { Any } from './operator.ts'
import { waitFor } from './processes.ts'

const GROUP = 'toolhive.stacklok.dev'
const CHECKSUM = `${GROUP}/runconfig-checksum`
const GENERATION = `${GROUP}/mcpserver-generation`
const FINALIZER = 'mcpwebhookconfig.toolhive.stacklok.dev/finalizer'
const RECONCILER = 'mcp-admission-status'
const WORKLOADS: Record<string, { plural: string; container: string }> = {
  MCPServer: { plural: 'mcpservers', container: 'toolhive' },
  MCPRemoteProxy: { plural: 'mcpremoteproxies', container: 'toolhive' },
  VirtualMCPServer: { plural: 'virtualmcpservers', container: 'vmcp' },
}
/** The examples' namespaces, which the operator watches; `UNWATCHED` it does not. */
const WATCHED = ['default', 'production', 'redis', 'toolhive-system', 'bundles']
const UNWATCHED = 'no-operator'
const WINDOW_MS = Number(process.env['E2E_CHURN_WINDOW_MS'] ?? 60_000)

const WATCHED_RESOURCES: WatchedResource[] = [
  { kind: 'Deployment', path: '/apis/apps/v1/deployments' },
  { kind: 'ConfigMap', path: '/api/v1/configmaps' },
  { kind: 'MCPServer', path: `/apis/${GROUP}/v1beta1/mcpservers` },
  { kind: 'MCPRemoteProxy', path: `/apis/${GROUP}/v1beta1/mcpremoteproxies` },
  { kind: 'VirtualMCPServer', path: `/apis/${GROUP}/v1beta1/virtualmcpservers` },
  { kind: 'MCPWebhookConfig', path: `/apis/${GROUP}/v1alpha1/mcpwebhookconfigs` },
]

export async function operatorSuite(root: Test, release: string): Promise<void> {
  // One subtest around it all: tap ends a file's root test once no subtest is pending, and the
  // settling and counting between the subtests below take minutes.
  await root.test(`beside the ToolHive operator ${release}`, (t) => besideOperator(t, release))
}

async function besideOperator(t: Test, release: string): Promise<void> {
  const files = await ensureOperator(release)
  const plane = await startControlPlane()
  const stops: (() => Promise<unknown>)[] = [() => plane.stop()]
  t.teardown(async () => {
    for (const stop of stops.reverse()) await stop()
  })
  const kubectl = kubectlFor(plane.kubeconfig)
  await installReleaseCrds(kubectl, files.crds)
  await writeProbe(kubectl, 'created')
  for (const namespace of [...WATCHED, UNWATCHED].filter((ns) => ns !== 'default'))
    await mustKubectl(kubectl, ['create', 'namespace', namespace])

  // What the release's CRDs accept, decided before any webhook is registered.
  const examples = (await exampleObjects(files.examples)).filter(
    ({ object }) => object['kind'] !== 'Namespace',
  )
  const accepted = (
    await inBatches(examples, 8, async (example) => {
      const result = await kubectl(
        ['create', '--dry-run=server', '-o', 'name', '-f', '-'],
        JSON.stringify(example.object),
      )
      return result.code === 0 ? example : undefined
    })
  ).filter((example) => example !== undefined)
  t.comment(`${release}: ${accepted.length} of ${examples.length} example objects the CRDs accept`)

  const manifests = await renderManifests(kubectl)
  await installIdentity(kubectl, manifests)
  const admission = await startAdmission(plane, await serviceAccountKubeconfig(kubectl, plane))
  stops.push(() => admission.stop())
  await registerWebhooks(kubectl, manifests, admission)
  await waitUntilWebhooksAreCalled(kubectl, 'default')
  const operator = await startOperator(plane, files, WATCHED)
  stops.push(() => operator.stop())

  await t.test('no false denial of an example the CRDs accept', async (t) => {
    // Examples that share a name (several files define `fetch`) are applied in file order, one
    // after the other; different objects in parallel.
    const byObject = new Map<string, typeof accepted>()
    for (const example of accepted) {
      const key = describeObject(example.object)
      byObject.set(key, [...(byObject.get(key) ?? []), example])
    }
    const denied = (
      await inBatches([...byObject.values()], 8, async (group) => {
        const failures: string[] = []
        for (const { file, object } of group) {
          const result = await kubectl(['apply', '-f', '-'], JSON.stringify(object))
          if (result.code !== 0)
            failures.push(`${file}: ${describeObject(object)}: ${result.stderr}`)
        }
        return failures
      })
    ).flat()
    t.same(denied, [], 'every accepted example is admitted')
  })

  await settle(plane)
  const withAdmission = await measureWindow(t, plane, kubectl, 'with')
  const proxies = await proxyDeployments(kubectl)
  t.comment(`${release}: ${proxies.length} proxy Deployments written by the operator`)

  await t.test('steady state: mcp-admission writes nothing', async (t) => {
    t.equal(writesBy(withAdmission, RECONCILER), 0, `no status write by ${RECONCILER}`)
    t.comment(`writes in ${WINDOW_MS / 1000} s with mcp-admission: ${summarise(withAdmission)}`)
  })

  await t.test('every proxy Deployment the operator wrote carries the invariants', async (t) => {
    t.ok(proxies.length > 0, 'the operator wrote proxy Deployments')
    for (const deployment of proxies) await checkInvariants(t, kubectl, deployment)
  })

  await t.test('spec and override edits are followed', async (t) => {
    const server = await createServer(kubectl, 'edits', { transport: 'streamable-http' })
    await patchMerge(kubectl, 'mcpserver', 'edits', {
      spec: {
        args: ['--edited'],
        resourceOverrides: {
          proxyDeployment: {
            podTemplateMetadataOverrides: {
              annotations: { [CHECKSUM]: 'user-value', 'team.example.com/owner': 'edits' },
              labels: { 'team.example.com/tier': 'gold' },
            },
          },
        },
      },
    })
    const generation = Number(server['metadata'].generation) + 1
    const deployment = await waitFor(
      'the operator to write the edited Deployment',
      async () => {
        const found = await getObject(kubectl, 'deployment', 'edits', 'bundles')
        const annotations = found?.['spec'].template.metadata.annotations ?? {}
        return annotations[GENERATION] === String(generation) &&
          annotations['team.example.com/owner'] === 'edits'
          ? found
          : undefined
      },
      { timeoutMs: 30_000 },
    )
    await checkInvariants(t, kubectl, deployment)
    t.not(deployment['spec'].template.metadata.annotations[CHECKSUM], 'user-value')
  })

  await t.test('kubectl scale of a stdio proxy stays at one replica', async (t) => {
    await createServer(kubectl, 'stdio-scale', { transport: 'stdio' })
    await waitFor(
      'the stdio proxy Deployment',
      () => getObject(kubectl, 'deployment', 'stdio-scale', 'bundles'),
      { timeoutMs: 30_000 },
    )
    const result = await kubectl([
      'scale',
      'deployment/stdio-scale',
      '-n',
      'bundles',
      '--replicas=3',
    ])
    t.equal(result.code, 0, result.stderr)
    t.match(result.stderr, /stdio/, 'a warning says why')
    t.equal(
      (await getObject(kubectl, 'deployment', 'stdio-scale', 'bundles'))?.['spec'].replicas,
      1,
    )
  })

  await t.test('a referenced MCPWebhookConfig bundle deletes in file order', async (t) => {
    await mustKubectl(kubectl, ['apply', '-f', '-'], bundle('bundles'))
    await waitFor(
      'the operator finalizer on the config',
      async () => {
        const config = await getObject(kubectl, 'mcpwebhookconfig', 'hooks', 'bundles')
        return config?.['metadata'].finalizers?.includes(FINALIZER) ? true : undefined
      },
      { timeoutMs: 30_000 },
    )
    const deleted = await kubectl(['delete', '-f', '-', '--wait=false'], bundle('bundles'))
    t.equal(deleted.code, 0, `kubectl delete -f succeeds: ${deleted.stderr}`)
    t.match(deleted.stderr, 'deletion waits for MCPServer uses-hooks')
    await waitFor(
      'the bundle to be gone',
      async () =>
        (await getObject(kubectl, 'mcpwebhookconfig', 'hooks', 'bundles')) === undefined &&
        (await getObject(kubectl, 'mcpserver', 'uses-hooks', 'bundles')) === undefined
          ? true
          : undefined,
      { timeoutMs: 60_000 },
    )
  })

  await t.test(
    'where no finalizer protects a referenced config, its DELETE is refused',
    async (t) => {
      await mustKubectl(kubectl, ['apply', '-f', '-'], bundle(UNWATCHED))
      const denied = await kubectl(['delete', 'mcpwebhookconfig', 'hooks', '-n', UNWATCHED])
      t.not(denied.code, 0)
      t.match(denied.stderr, 'is still referenced by MCPServer uses-hooks')
    },
  )

  await t.test('where no operator writes them, the reconciler stamps its conditions', async (t) => {
    await mustKubectl(
      kubectl,
      ['apply', '-f', '-'],
      JSON.stringify(mcpServer('capped', UNWATCHED, { transport: 'stdio', replicas: 3 })),
    )
    const stamped = await waitFor(
      'StdioReplicaCapped on an MCPServer no operator watches',
      async () => {
        const server = await getObject(kubectl, 'mcpserver', 'capped', UNWATCHED)
        const conditions = (server?.['status']?.conditions ?? []) as Any[]
        return conditions.find((c) => c['type'] === 'StdioReplicaCapped') ? server : undefined
      },
      { timeoutMs: 30_000 },
    )
    t.notOk('observedGeneration' in (stamped['status'] ?? {}), 'no top-level observedGeneration')
  })

  // The baseline: the same cluster with mcp-admission gone.
  await mustKubectl(kubectl, [
    'delete',
    'mutatingwebhookconfiguration,validatingwebhookconfiguration',
    'mcp-admission',
  ])
  await admission.stop()
  await settle(plane)
  const baseline = await measureWindow(t, plane, kubectl, 'without')

  await t.test('no object is written more often than without mcp-admission', async (t) => {
    t.comment(`writes in ${WINDOW_MS / 1000} s without mcp-admission: ${summarise(baseline)}`)
    const increased: string[] = []
    for (const key of withAdmission.keys()) {
      const before = writesTo(baseline, key)
      const after = writesTo(withAdmission, key)
      if (after > before) increased.push(`${key}: ${before} → ${after}`)
    }
    t.same(increased, [], 'per object, writes with ≤ writes without')
  })
}

/**
 * Counts writes for the window, with one known write in it (a probe ConfigMap applied by field
 * manager `e2e-probe`), which must be seen and attributed: a counter that saw nothing proves nothing.
 */
async function measureWindow(
  t: Test,
  plane: Parameters<typeof countWrites>[0],
  kubectl: Kubectl,
  label: string,
): Promise<WriteCounts> {
  const counting = countWrites(plane, WATCHED_RESOURCES, WINDOW_MS)
  await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, WINDOW_MS / 4)))
  await writeProbe(kubectl, label)
  const counts = await counting
  t.same(
    Object.fromEntries(counts.get('ConfigMap default/churn-probe') ?? []),
    { 'e2e-probe': 1 },
    `the counter sees the known write in the window ${label} mcp-admission`,
  )
  return counts
}

async function writeProbe(kubectl: Kubectl, value: string): Promise<void> {
  const probe = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'churn-probe', namespace: 'default' },
    data: { window: value },
  }
  await mustKubectl(
    kubectl,
    ['apply', '--server-side', '--field-manager=e2e-probe', '-f', '-'],
    JSON.stringify(probe),
  )
}

/** Waits until no watched object has been written for 10 s (at most 2 minutes). */
async function settle(plane: Parameters<typeof countWrites>[0]): Promise<void> {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    const counts = await countWrites(plane, WATCHED_RESOURCES, 10_000)
    if (counts.size === 0) return
  }
}

/** Every Deployment whose controller owner is a ToolHive workload. */
async function proxyDeployments(kubectl: Kubectl): Promise<Any[]> {
  const list = JSON.parse(
    await mustKubectl(kubectl, ['get', 'deployments', '-A', '-o', 'json']),
  ) as Any
  return (list['items'] as Any[]).filter((deployment) =>
    ((deployment['metadata'].ownerReferences ?? []) as Any[]).some(
      (ref) =>
        ref['controller'] === true &&
        String(ref['apiVersion']).startsWith(`${GROUP}/`) &&
        ref['kind'] in WORKLOADS,
    ),
  )
}

/** DESIGN §4.2 on one Deployment, against its owner and RunConfig ConfigMap as they are now. */
async function checkInvariants(t: Test, kubectl: Kubectl, deployment: Any): Promise<void> {
  const { name, namespace } = deployment['metadata']
  const owner = (deployment['metadata'].ownerReferences as Any[]).find((ref) => ref['controller'])!
  const kind = String(owner['kind'])
  const what = `${kind} ${namespace}/${name}`
  const template = deployment['spec'].template
  const annotations = template.metadata.annotations ?? {}
  const configMapName =
    kind === 'VirtualMCPServer' ? `${owner['name']}-vmcp-config` : `${owner['name']}-runconfig`
  const configMap = await getObject(kubectl, 'configmap', configMapName, namespace)
  if (configMap)
    t.equal(annotations[CHECKSUM], effectiveContentChecksum(configMap), `${what}: checksum`)
  else t.comment(`${what}: no RunConfig ConfigMap ${configMapName} (yet)`)
  t.equal(template.spec.terminationGracePeriodSeconds, 30, `${what}: grace period`)
  if (kind !== 'MCPServer') return
  const server = await getObject(kubectl, 'mcpserver', String(owner['name']), namespace)
  t.equal(annotations[GENERATION], String(server?.['metadata'].generation), `${what}: generation`)
  const container = (template.spec.containers as Any[]).find((c) => c['name'] === 'toolhive')
  const env = ((container?.['env'] ?? []) as Any[]).filter(
    (e) => e['name'] === 'THV_MCPSERVER_GENERATION',
  )
  t.same(
    env,
    [
      {
        name: 'THV_MCPSERVER_GENERATION',
        valueFrom: {
          fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${GENERATION}']` },
        },
      },
    ],
    `${what}: downward-API env entry`,
  )
  const transport = server?.['spec'].transport ?? 'stdio'
  if (transport === 'stdio') t.ok(deployment['spec'].replicas <= 1, `${what}: stdio at one replica`)
}

function mcpServer(name: string, namespace: string, spec: Any): Any {
  return {
    apiVersion: `${GROUP}/v1beta1`,
    kind: 'MCPServer',
    metadata: { name, namespace },
    spec: { image: 'ghcr.io/example/mcp:1.0', ...spec },
  }
}

async function createServer(kubectl: Kubectl, name: string, spec: Any): Promise<Any> {
  await mustKubectl(kubectl, ['apply', '-f', '-'], JSON.stringify(mcpServer(name, 'bundles', spec)))
  return (await getObject(kubectl, 'mcpserver', name, 'bundles'))!
}

/** A config and a server that references it, in file order: config first. */
function bundle(namespace: string): string {
  const config = {
    apiVersion: `${GROUP}/v1alpha1`,
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace },
    spec: { validating: [{ name: 'policy', url: 'https://policy.example.com/check' }] },
  }
  const server = mcpServer('uses-hooks', namespace, {
    transport: 'streamable-http',
    webhookConfigRef: { name: 'hooks' },
  })
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [config, server] })
}

async function patchMerge(kubectl: Kubectl, kind: string, name: string, patch: Any): Promise<void> {
  await mustKubectl(kubectl, [
    'patch',
    kind,
    name,
    '-n',
    'bundles',
    '--type=merge',
    '-p',
    JSON.stringify(patch),
  ])
}

async function getObject(
  kubectl: Kubectl,
  kind: string,
  name: string,
  namespace: string,
): Promise<Any | undefined> {
  const result = await kubectl([
    'get',
    kind,
    name,
    '-n',
    namespace,
    '-o',
    'json',
    '--ignore-not-found',
  ])
  return result.code === 0 && result.stdout.trim() !== ''
    ? (JSON.parse(result.stdout) as Any)
    : undefined
}

function summarise(counts: WriteCounts): string {
  const byManager = new Map<string, number>()
  for (const managers of counts.values())
    for (const [manager, n] of managers) byManager.set(manager, (byManager.get(manager) ?? 0) + n)
  const total = [...byManager.values()].reduce((a, b) => a + b, 0)
  const busiest = [...counts.keys()]
    .sort((a, b) => writesTo(counts, b) - writesTo(counts, a))
    .slice(0, 5)
    .map((key) => `${key} ${JSON.stringify(Object.fromEntries(counts.get(key) ?? []))}`)
  const managers = [...byManager].map(([m, n]) => `${m}: ${n}`).join(', ') || 'none'
  return `${total} on ${counts.size} objects (${managers}); busiest: ${busiest.join('; ') || 'none'}`
}
