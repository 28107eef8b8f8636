/**
 * mcp-admission beside the real ToolHive operator of one release (issues 15 and 25): the
 * release's CRDs and examples, the shipped webhooks and reconciler, the operator running as its
 * own service account, then
 *  - no false denial of an example the CRDs accept;
 *  - the invariants (docs/enforcement.md#proxy-deployments-field-by-field) on every proxy
 *    Deployment the operator writes, again after spec and override edits, a `kubectl scale` of a
 *    stdio proxy capped, a `kubectl rollout restart` passed through, and (from v0.46) the
 *    operator's auth server CA checksum kept and followed;
 *  - the safety net: a person's write that breaks the invariants is repaired;
 *  - a referenced MCPWebhookConfig bundle deleted with `kubectl delete -f` in file order where the
 *    operator's finalizer holds it, and refused where nothing does;
 *  - the reconciler stamping its conditions where no operator writes them;
 *  - `audit` finding exactly the objects planted broken, its OpenReports output applied;
 *  - and, counted at the API server while every workload is nudged into a reconcile: no resource
 *    written more often than in the same window without mcp-admission, no non-empty patch on an
 *    operator-written object (`mcp_admission_mutations_total`), no status write.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { ensureOperator } from '../toolhive/releases.ts'
import {
  describeTally,
  difference,
  increases,
  interceptedResources,
  scrapeWrites,
} from './api-writes.ts'
import type { WriteTally } from './api-writes.ts'
import { exerciseAuthServer } from './operator-authserver.ts'
import { auditBesideOperator } from './operator-audit.ts'
import { startEnvironment } from './environment.ts'
import type { ControlPlane, RunningAdmission } from './environment.ts'
import { mustKubectl } from './kubectl.ts'
import type { Kubectl } from './kubectl.ts'
import {
  CHECKSUM,
  GENERATION,
  GENERATION_ENV,
  GROUP,
  WORKLOADS,
  checkInvariants,
  controllerOwner,
  getObject,
  mcpServer,
  proxyDeployments,
  releaseAtLeast,
  webhookBundle,
} from './operator-objects.ts'
import { describeObject, exampleObjects, inBatches } from './operator.ts'
import type { ExampleObject } from './operator.ts'
import type { Any } from './operator.ts'
import { waitFor } from './processes.ts'

const FINALIZER = 'mcpwebhookconfig.toolhive.stacklok.dev/finalizer'
const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt'
const VOLUMES_HASH = 'toolhive.stacklok.io/podvolumes-hash'
/** The examples' namespaces, which the operator watches; `UNWATCHED` it does not. */
const WATCHED = ['default', 'production', 'redis', 'toolhive-system', 'bundles']
const UNWATCHED = 'no-operator'
/**
 * How often the operator reconciles a workload it cannot make ready: without pods a workload's
 * StatefulSet never is, and the operator requeues it 10 s after each reconcile (v0.63
 * `mcpserver_statefulset.go`), writing its status 5 times each time. A nudge starts that clock
 * again for every workload at once, so the windows below open and close, and nudge, half a period
 * off those ticks. Scraped at a multiple of the period, a tick lands a few hundred milliseconds
 * either side of the scrape, in one window and not the other, for every server together: a CI
 * run failed on 1274 → 1362 status writes, and in a rerun's API server audit log every server
 * that differed between the windows differed by exactly 5.
 */
const REQUEUE_MS = 10_000
/** Nudges of every workload per window, each followed by this long, ticks at 10 s and 20 s. */
const NUDGES = 3
const NUDGE_SPACING_MS = 2.5 * REQUEUE_MS
/**
 * Writes a resource may take above the baseline: a reconcile already queued when a window opens,
 * or one that ends just after it closes, lands in one window and not the other.
 *  - On what the webhook mutates (Deployments, ConfigMaps) that is 2, or 5 % of the baseline: a
 *    fight there is one write per reconcile of each object, well above it (the override
 *    re-application put back, two Deployments: 6 → 14).
 *  - On the rest of what the webhooks intercept (the ToolHive resources themselves), a
 *    Poisson-like 2 + 2√baseline.
 *  - What no webhook intercepts (workload status, StatefulSets, Events) no mutation can fight
 *    over; mcp-admission's own status writes are counted exactly by its metric instead. Those
 *    counts are the operator's own loops, which jump at window edges when a loop ticks in phase
 *    for every object (`REQUEUE_MS`); the windows avoid the 10 s loop's ticks, not every other
 *    loop's. There a fight's only trace is an amplified loop, so the bound is a quarter of the
 *    baseline above the Poisson slack: one extra tick per object at each edge of a 9-tick window.
 */
function writeSlack(intercepted: ReadonlySet<string>) {
  return (resource: string, baseline: number): number => {
    const poisson = 2 + Math.ceil(2 * Math.sqrt(baseline))
    if (SETTLED_RESOURCES.has(resource)) return Math.max(2, Math.ceil(baseline * 0.05))
    if (intercepted.has(resource)) return poisson
    return poisson + Math.ceil(baseline / 4)
  }
}
/** The resources the webhook mutates: settled means none of them is being written. */
const SETTLED_RESOURCES = new Set(['deployments.apps', 'deployments.apps/scale', 'configmaps'])
/**
 * mcp-admission's own objects, left out of the comparison: its reconciler renews its Lease every
 * few seconds while it runs, and the baseline runs without it.
 */
const OWN_RESOURCES = new Set(['leases.coordination.k8s.io'])
/**
 * Examples a release ships that its own operator and vmcp refuse, which the webhooks therefore
 * deny, by `kind namespace/name`, with the field of the expected violation. v0.33.0's interactive
 * deploy retries with `maxRetries`, a field ToolHive's WorkflowStepConfig never had: its
 * `retryCount` is 0, and upstream's ValidateCompositeToolConfig wants at least 1 for a retry.
 */
const INVALID_EXAMPLES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'v0.33.0': {
    'VirtualMCPCompositeToolDefinition default/interactive-deploy':
      'spec.steps[3].onError.retryCount',
  },
}

/** A resource nothing else writes: the known write that proves each window's count. */
const PROBE_RESOURCE = 'podtemplates'

export async function operatorSuite(root: Test, release: string): Promise<void> {
  // One subtest around it all: tap ends a file's root test once no subtest is pending, and the
  // settling and counting between the subtests below take minutes.
  await root.test(`beside the ToolHive operator ${release}`, (t) => besideOperator(t, release))
}

async function besideOperator(t: Test, release: string): Promise<void> {
  const files = await ensureOperator(release)
  let accepted: ExampleObject[] = []
  // The release's CRDs, the shipped identity, webhooks and service, and the operator as its own
  // service account watching WATCHED.
  const env = await startEnvironment(t, {
    crds: [files.crds],
    beforeService: async ({ kubectl }) => {
      for (const namespace of [...WATCHED, UNWATCHED].filter((ns) => ns !== 'default'))
        await mustKubectl(kubectl, ['create', 'namespace', namespace])
      // What the release's CRDs accept, decided before any webhook is registered.
      const examples = (await exampleObjects(files.examples)).filter(
        ({ object }) => object['kind'] !== 'Namespace',
      )
      accepted = (
        await inBatches(examples, 8, async (example) => {
          const result = await kubectl(
            ['create', '--dry-run=server', '-o', 'name', '-f', '-'],
            JSON.stringify(example.object),
          )
          return result.code === 0 ? example : undefined
        })
      ).filter((example) => example !== undefined)
      t.comment(
        `${release}: ${accepted.length} of ${examples.length} example objects the CRDs accept`,
      )
    },
    operator: { files, watch: WATCHED },
  })
  const { plane, kubectl, admission } = env

  await t.test('no false denial of an example the CRDs accept', async (t) => {
    // Examples that share a name (several files define `fetch`) are applied in file order, one
    // after the other; different objects in parallel.
    const byObject = new Map<string, typeof accepted>()
    for (const example of accepted) {
      const key = describeObject(example.object)
      byObject.set(key, [...(byObject.get(key) ?? []), example])
    }
    const invalid = INVALID_EXAMPLES[release] ?? {}
    const unexpected = (
      await inBatches([...byObject.values()], 8, async (group) => {
        const failures: string[] = []
        for (const { file, object } of group) {
          const result = await kubectl(['apply', '-f', '-'], JSON.stringify(object))
          const field = invalid[describeObject(object)]
          if (field === undefined && result.code !== 0)
            failures.push(`${file}: ${describeObject(object)}: ${result.stderr}`)
          if (field !== undefined && (result.code === 0 || !result.stderr.includes(field)))
            failures.push(`${file}: ${describeObject(object)}: not denied at ${field}`)
        }
        return failures
      })
    ).flat()
    t.same(unexpected, [], 'every accepted example is admitted, but those the operator refuses')
  })

  await settle(plane)
  const proxies = await proxyDeployments(kubectl)
  t.comment(`${release}: ${proxies.length} proxy Deployments written by the operator`)

  await t.test('every proxy Deployment the operator wrote carries the invariants', async (t) => {
    t.ok(proxies.length > 0, 'the operator wrote proxy Deployments')
    for (const deployment of proxies) await checkInvariants(t, kubectl, deployment)
    // From v0.47 the operator stamps its own pod volumes hash on vMCP Deployments: present here,
    // so the write count below covers the key the webhook must leave alone.
    const vmcps = proxies.filter((d) => controllerOwner(d)?.['kind'] === 'VirtualMCPServer')
    if (releaseAtLeast(release, 'v0.47.0')) {
      t.ok(vmcps.length > 0, 'the examples include VirtualMCPServers')
      for (const d of vmcps)
        t.match(d['metadata'].annotations?.[VOLUMES_HASH], /^[0-9a-f]{64}$/, 'operator hash')
    }
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

  await t.test('kubectl rollout restart passes through', async (t) => {
    for (const deployment of pickOnePerKind(proxies)) {
      const { name, namespace } = deployment['metadata']
      const what = `${controllerOwner(deployment)?.['kind']} ${namespace}/${name}`
      const repairs = { resource: 'deployments', changed: 'true', writer: 'other' }
      const before = await admission.metric('mcp_admission_mutations_total', repairs)
      // What the restart stored, from the API server's answer to it: an operator older than
      // ToolHive #6344 compares pod-template annotations exactly and takes the key out again.
      const stored = JSON.parse(
        await mustKubectl(kubectl, [
          'rollout',
          'restart',
          `deployment/${name}`,
          '-n',
          namespace,
          '-o',
          'json',
        ]),
      ) as Any
      const after = await admission.metric('mcp_admission_mutations_total', repairs)
      t.equal(after, before, `${what}: the restart is admitted with an empty patch`)
      t.match(stored['spec'].template.metadata.annotations?.[RESTARTED_AT], /^\d{4}-/, what)
    }
  })

  if (releaseAtLeast(release, 'v0.46.0')) {
    await t.test("the auth server CA checksum stays the operator's, over an override", (t) =>
      exerciseAuthServer(t, kubectl, 'bundles'),
    )
  }

  await t.test('the safety net: a write that breaks the invariants is repaired', async (t) => {
    await createServer(kubectl, 'repaired', { transport: 'streamable-http', replicas: 1 })
    const written = await waitFor(
      'the operator to write the Deployment',
      async () => {
        const found = await getObject(kubectl, 'deployment', 'repaired', 'bundles')
        return found?.['spec'].template.metadata.annotations?.[CHECKSUM] ? found : undefined
      },
      { timeoutMs: 30_000 },
    )
    // What a person (or an old operator) might send: checksum dropped, generation stale, the env
    // entry a literal, the grace period gone.
    const broken = structuredClone(written)
    const template = broken['spec'].template
    template.metadata.annotations = {
      ...Object.fromEntries(
        Object.entries(template.metadata.annotations as Any).filter(([key]) => key !== CHECKSUM),
      ),
      [GENERATION]: '0',
    }
    delete template.spec.terminationGracePeriodSeconds
    const proxy = (template.spec.containers as Any[]).find((c) => c['name'] === 'toolhive')!
    proxy['env'] = [
      ...((proxy['env'] ?? []) as Any[]).filter((e) => e['name'] !== GENERATION_ENV),
      { name: GENERATION_ENV, value: '0' },
    ]
    const stored = JSON.parse(
      await mustKubectl(kubectl, ['replace', '-o', 'json', '-f', '-'], JSON.stringify(broken)),
    ) as Any
    await checkInvariants(t, kubectl, stored)
    t.ok(
      (await admission.metric('mcp_admission_mutations_total', {
        resource: 'deployments',
        changed: 'true',
        writer: 'other',
      })) > 0,
      "counted as a repair of someone else's write",
    )
  })

  await t.test('a referenced MCPWebhookConfig bundle deletes in file order', async (t) => {
    await mustKubectl(kubectl, ['apply', '-f', '-'], webhookBundle('bundles'))
    await waitFor(
      'the operator finalizer on the config',
      async () => {
        const config = await getObject(kubectl, 'mcpwebhookconfig', 'hooks', 'bundles')
        return config?.['metadata'].finalizers?.includes(FINALIZER) ? true : undefined
      },
      { timeoutMs: 30_000 },
    )
    const deleted = await kubectl(['delete', '-f', '-', '--wait=false'], webhookBundle('bundles'))
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
      await mustKubectl(kubectl, ['apply', '-f', '-'], webhookBundle(UNWATCHED))
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

  // Read only, and what it plants is where no operator reconciles: the windows below see nothing
  // of it.
  await auditBesideOperator(t, env, UNWATCHED)

  // Steady state, counted where writes happen: every workload nudged into a reconcile, with
  // mcp-admission, then the same objects without it.
  await settle(plane)
  const withAdmission = await nudgeWindow(t, plane, kubectl, 'with', admission)

  await mustKubectl(kubectl, [
    'delete',
    'mutatingwebhookconfiguration,validatingwebhookconfiguration',
    'mcp-admission',
  ])
  await admission.stop()
  await settle(plane)
  const baseline = await nudgeWindow(t, plane, kubectl, 'without')

  await t.test('no resource is written more often than without mcp-admission', async (t) => {
    const compared = new Map([...withAdmission].filter(([key]) => !OWN_RESOURCES.has(key)))
    const slack = writeSlack(interceptedResources(await env.manifests()))
    t.same(increases(compared, baseline, slack), [], 'per resource, with ≤ without')
  })
}

/**
 * Writes the API server serves in a window that opens with every ToolHive workload nudged (a
 * metadata-only change that makes the operator reconcile it) and one known write, which must be
 * counted: a counter that saw nothing proves nothing. With `admission` running, the window also
 * checks mcp-admission's own side of steady state.
 */
async function nudgeWindow(
  t: Test,
  plane: ControlPlane,
  kubectl: Kubectl,
  label: string,
  admission?: RunningAdmission,
): Promise<WriteTally> {
  const mutations = (labels: Record<string, string>) =>
    admission?.metric('mcp_admission_mutations_total', labels) ?? Promise.resolve(0)
  const fights = { changed: 'true', writer: 'operator' }
  const operatorReviews = { writer: 'operator' }
  const [fightsBefore, reviewsBefore, statusBefore] = await Promise.all([
    mutations(fights),
    mutations(operatorReviews),
    admission?.metric('mcp_admission_status_writes_total') ?? 0,
  ])
  const kinds = Object.values(WORKLOADS).map(({ plural }) => `${plural}.${GROUP}`)
  const nudgeAll = (value: string) =>
    mustKubectl(kubectl, [
      'annotate',
      kinds.join(','),
      '--all',
      '--all-namespaces',
      '--overwrite',
      `e2e.mcp-admission.dev/nudge=${value}`,
    ])
  // One nudge to set every workload's requeue clock, then the window opens between its ticks.
  await nudgeAll(`${label}-sync`)
  await sleep(REQUEUE_MS / 2)
  const before = await scrapeWrites(plane)
  const opened = Date.now()
  // A fight costs a write per reconcile, so it shows as NUDGES writes per object above the
  // baseline, beyond the slack even for a single object.
  for (let nudge = 0; nudge < NUDGES; nudge++) {
    await nudgeAll(`${label}-${nudge}`)
    if (nudge === 0) await writeProbe(kubectl, label)
    await sleep(NUDGE_SPACING_MS)
  }
  const writes = difference(await scrapeWrites(plane), before)
  t.equal(writes.get(PROBE_RESOURCE), 1, `the count sees the known write ${label} mcp-admission`)
  writes.delete(PROBE_RESOURCE)
  t.comment(
    `writes in the ${Math.round((Date.now() - opened) / 1000)} s ${label} mcp-admission: ${describeTally(writes)}`,
  )
  if (admission) {
    await t.test(
      'steady state: nothing the operator wrote is changed, no status write',
      async (t) => {
        const [fightsAfter, reviewsAfter, statusAfter] = await Promise.all([
          mutations(fights),
          mutations(operatorReviews),
          admission.metric('mcp_admission_status_writes_total'),
        ])
        // The label works: the operator's own writes (its creates, at least) were told apart.
        t.ok(reviewsAfter > 0, "writes by the operator's service account were reviewed")
        t.equal(fightsAfter - fightsBefore, 0, 'no non-empty patch on an operator write')
        t.equal(statusAfter - statusBefore, 0, 'no status write by the reconciler')
        t.comment(
          `operator writes reviewed in the window: ${reviewsAfter - reviewsBefore}; non-empty patches on operator writes since start: ${fightsAfter}`,
        )
      },
    )
  }
  return writes
}

/** One server-side apply of a PodTemplate no one else writes. */
async function writeProbe(kubectl: Kubectl, value: string): Promise<void> {
  const probe = {
    apiVersion: 'v1',
    kind: 'PodTemplate',
    metadata: { name: 'write-probe', namespace: 'default', labels: { window: value } },
    template: { spec: { containers: [{ name: 'probe', image: 'probe' }] } },
  }
  await mustKubectl(
    kubectl,
    ['apply', '--server-side', '--field-manager=e2e-probe', '-f', '-'],
    JSON.stringify(probe),
  )
}

/**
 * Waits until the API server serves no write to a resource the webhook mutates for 10 s (at most
 * 2 minutes). The operator's status loops never stop here (no pods run), so they are not waited for.
 */
async function settle(plane: ControlPlane): Promise<void> {
  const deadline = Date.now() + 120_000
  let last = await scrapeWrites(plane)
  while (Date.now() < deadline) {
    await sleep(10_000)
    const now = await scrapeWrites(plane)
    const written = [...difference(now, last).keys()].filter((key) => SETTLED_RESOURCES.has(key))
    if (written.length === 0) return
    last = now
  }
}

/** The operator's own service account, bound to cluster-admin, and a kubeconfig for it. */
/** The first proxy Deployment of each workload kind. */
function pickOnePerKind(proxies: readonly Any[]): Any[] {
  const byKind = new Map<string, Any>()
  for (const deployment of proxies) {
    const kind = String(controllerOwner(deployment)?.['kind'])
    if (!byKind.has(kind)) byKind.set(kind, deployment)
  }
  return [...byKind.values()]
}

async function createServer(kubectl: Kubectl, name: string, spec: Any): Promise<Any> {
  await mustKubectl(kubectl, ['apply', '-f', '-'], JSON.stringify(mcpServer(name, 'bundles', spec)))
  return (await getObject(kubectl, 'mcpserver', name, 'bundles'))!
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
