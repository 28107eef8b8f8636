/**
 * The ToolHive object graph beside the real operator of one release (test/e2e/object-graph.test.ts):
 * reference warnings at the write, the delete guard at its default (Warn,Audit) and at Deny, and
 * that neither holds up what deletes objects in bulk: a namespace's deletion and `helm uninstall`.
 * One environment per release (the release's CRDs, mcp-admission as shipped, the operator as its
 * own service account, kube-controller-manager's namespace controller and garbage collector), then:
 *  - a namespace holding one object of each of the 14 kinds, every reference of the kind table in
 *    place, is written without a reference warning, and the operator's finalizers are on the
 *    targets the table says they protect (and on MCPGroups, whose finalizer protects nothing);
 *  - an MCPServer naming a missing MCPToolConfig: kubectl shows the warning; the operator reports
 *    it (Ready False, NotReady) and writes no Deployment until the config exists, then takes it
 *    (its hash, the RunConfig's tools filter) and writes the Deployment; deleting that config
 *    then is allowed with `deletion waits for MCPServer …`, and the operator's finalizer holds it
 *    until the server is gone;
 *  - an MCPToolConfig only an MCPRemoteProxy names (its finalizer counts only MCPServers) and an
 *    MCPGroup under a VirtualMCPServer (MCPGroup's finalizer holds nothing): at the default each
 *    delete goes through with a `Warning:` naming the referrer and is counted as unprotected, and
 *    the operator then reports the reference broken (`ToolConfigNotFound`, `GroupRefNotFound`); at
 *    Deny the same delete is refused naming the referrer;
 *  - `helm uninstall` of a chart whose objects name each other completes at the default and
 *    leaves nothing;
 *  - at Deny, a DeleteCollection of a referenced object refused as its DELETE is; a delete in a
 *    terminating namespace admitted (refused before it terminated); and the 14-kind namespace
 *    deleted completely, its deletes kept from the service by the webhook's matchCondition.
 * mcp-admission runs with no setting (every rule at its own default: the delete guard's is
 * Warn,Audit); the Deny half switches the webhooks to a second instance with
 * `--rule-actions delete-guard=Deny,Audit`.
 */

import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { TOOLHIVE_KIND_TABLE, entryOf } from '../../../src/policy/kinds.ts'
import type { ToolHiveKind } from '../../../src/policy/kinds.ts'
import { referencesAt, referencesIn } from '../../../src/policy/references.ts'
import { ensureOperator } from '../toolhive/releases.ts'
import { startEnvironment } from './environment.ts'
import type { Environment, RunningAdmission } from './environment.ts'
import { ensureHelm, helmFor } from './helm.ts'
import { mustKubectl } from './kubectl.ts'
import type { Kubectl } from './kubectl.ts'
import {
  list,
  mcpGroup,
  mcpToolConfig,
  objectGraph,
  remoteProxy,
  serverWithTools,
  virtualServer,
} from './object-graph.ts'
import { GROUP, getObject } from './operator-objects.ts'
import type { Any } from './operator.ts'
import { waitFor } from './processes.ts'

/** The Deny half's setting: the delete guard's default is Warn,Audit (src/policy/rules.ts). */
const DENY_ARGS: readonly string[] = ['--rule-actions', 'delete-guard=Deny,Audit']

/** The namespaces the operator watches: the tests', the 14-kind one deleted at the end, the chart's. */
const GRAPH = 'graph'
const DOOMED = 'graph-doomed'
const CHART_NS = 'graph-chart'
const WATCHED = [GRAPH, DOOMED, CHART_NS]

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
const CHART = join(REPO, 'test/e2e/fixtures/graph-chart')
const RELEASE = 'graph'

/** Each instance's count of deletes of referenced objects, by kind and protection. */
const GUARDED = 'mcp_admission_guarded_deletes_total'
/** The delete guard's webhook, as the API server names it in its metrics. */
const DELETES_WEBHOOK = 'deletes.mcp-admission.toolhive.stacklok.dev'
/** Every ToolHive kind's plural, for listing a namespace. */
const ALL_KINDS = TOOLHIVE_KIND_TABLE.map(({ plural }) => `${plural}.${GROUP}`).join(',')

/** The test's own finalizer, which holds an object until the test removes it. */
const HOLD = 'e2e.mcp-admission.dev/hold'

/** The operator acts within seconds; these bound each wait for it. */
const OPERATOR_WAIT = { timeoutMs: 60_000, intervalMs: 500 }

export async function objectGraphSuite(root: Test, release: string): Promise<void> {
  await root.test(`the object graph beside the ToolHive operator ${release}`, (t) =>
    besideOperator(t, release),
  )
}

async function besideOperator(t: Test, release: string): Promise<void> {
  const files = await ensureOperator(release)
  const env = await startEnvironment(t, {
    crds: [files.crds],
    controllers: ['namespace-controller', 'garbage-collector-controller'],
    beforeService: async ({ kubectl }) => {
      for (const namespace of WATCHED)
        await mustKubectl(kubectl, ['create', 'namespace', namespace])
    },
    operator: { files, watch: WATCHED },
  })
  const { kubectl } = env
  const wait = { ...OPERATOR_WAIT, process: env.operator }

  // Written first, so the operator reconciles it while the tests below run.
  await t.test('every kind, every reference in place, is written without a warning', async (t) => {
    const graph = objectGraph(DOOMED)
    t.same(
      new Set(graph.map(({ kind }) => kind as string)),
      new Set(TOOLHIVE_KIND_TABLE.map(({ kind }) => kind)),
      'one object of each of the 14 kinds',
    )
    // In order, targets first: the reference warnings (workload rule) find every target.
    const created = await kubectl(['create', '-f', '-'], list(graph))
    t.equal(created.code, 0, 'created', { stderr: created.stderr })
    t.notMatch(created.stderr, /not found:|has spec\.|is also defined/, 'no warning')
    // What the API server stored (defaults added, nothing pruned): every reference path of the
    // table at v1beta1, each naming an object of the graph.
    const stored = (
      JSON.parse(await mustKubectl(kubectl, ['get', ALL_KINDS, '-n', DOOMED, '-o', 'json'])) as Any
    )['items'] as Any[]
    t.equal(stored.length, graph.length, 'all of it stored')
    const names = new Set(graph.map(({ kind, metadata }) => `${kind}/${metadata.name}`))
    for (const object of stored) {
      const entry = entryOf(object['kind'] as ToolHiveKind)
      const expected = referencesAt(entry, 'v1beta1').map(({ path }) => path)
      const found = referencesIn(object)
      t.same(
        [...new Set(found.map(({ reference }) => reference.path))].sort(),
        [...expected].sort(),
        `${entry.kind}: every reference of the table`,
      )
      for (const { path, kind, name } of found)
        t.ok(names.has(`${kind}/${name}`), `${entry.kind} ${path} names ${kind} ${name}`)
    }
    // The operator's finalizers, on each target the table says one protects, and MCPGroup's
    // (which holds nothing): what the namespace's deletion waits on.
    const finalizers = expectedFinalizers(graph)
    for (const [key, finalizer] of finalizers) {
      const [kind, name] = key.split('/') as [string, string]
      await waitFor(
        `the operator's ${finalizer} on ${kind} ${name}`,
        async () =>
          (await getObject(kubectl, kind, name, DOOMED))?.['metadata'].finalizers?.includes(
            finalizer,
          )
            ? true
            : undefined,
        wait,
      )
      t.pass(`${kind} ${name} carries ${finalizer}`)
    }
  })

  await t.test('an MCPServer naming a missing MCPToolConfig', async (t) => {
    const server = serverWithTools(GRAPH, 'needs-tools', 'late-tools')
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(server))
    t.equal(applied.code, 0, 'created', { stderr: applied.stderr })
    t.match(
      applied.stderr,
      'Warning: spec.toolConfigRef.name: MCPToolConfig "late-tools" not found: the operator reports NotReady\n',
      'kubectl shows the reference warning',
    )
    // What the operator does meanwhile: Ready False (no condition of its own), no Deployment.
    const failed = await waitForCondition(kubectl, 'mcpserver', 'needs-tools', 'Ready', wait)
    t.match(
      failed,
      { status: 'False', reason: 'NotReady', message: /late-tools not found/ },
      'the operator: Ready False, NotReady',
    )
    t.equal(
      await getObject(kubectl, 'deployment', 'needs-tools', GRAPH),
      undefined,
      'and no Deployment',
    )

    const config = await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify(mcpToolConfig(GRAPH, 'late-tools')),
    )
    t.equal(config.code, 0, 'the config created', { stderr: config.stderr })
    t.notMatch(config.stderr, 'Warning:', 'the config itself is written without a warning')
    // The operator takes the config: its hash in the server's status (MCPServer has no tool
    // config condition; without pods Ready keeps its last message), its filter in the RunConfig,
    // and the Deployment written.
    const hash = await waitFor(
      "the MCPToolConfig's hash",
      async () =>
        (await getObject(kubectl, 'mcptoolconfig', 'late-tools', GRAPH))?.['status']?.configHash as
          string | undefined,
      wait,
    )
    await waitFor(
      'the MCPServer to take the config',
      async () =>
        (await getObject(kubectl, 'mcpserver', 'needs-tools', GRAPH))?.['status']
          ?.toolConfigHash === hash
          ? true
          : undefined,
      wait,
    )
    const runConfig = await waitFor(
      'the RunConfig with the tools filter',
      async () => {
        const found = await getObject(kubectl, 'configmap', 'needs-tools-runconfig', GRAPH)
        const content = found?.['data']?.['runconfig.json'] as string | undefined
        const parsed = content ? (JSON.parse(content) as Any) : undefined
        return parsed?.['tools_filter'] ? parsed : undefined
      },
      wait,
    )
    t.same(runConfig['tools_filter'], ['fetch'], "the config's filter is in the RunConfig")
    const deployment = await waitFor(
      'the Deployment',
      () => getObject(kubectl, 'deployment', 'needs-tools', GRAPH),
      wait,
    )
    t.match(
      deployment['metadata'].ownerReferences,
      [{ kind: 'MCPServer', name: 'needs-tools' }],
      'the Deployment written',
    )
  })

  const guarded = (admission: RunningAdmission, kind: string, protection = 'unprotected') =>
    admission.metric(GUARDED, { kind, protection })

  await t.test('an MCPToolConfig an MCPServer names waits for it', async (t) => {
    // The finalizer counts MCPServers: the delete is allowed, said to wait, counted protected.
    const before = await guarded(env.admission, 'MCPToolConfig', 'protected')
    const deleted = await kubectl([
      'delete',
      'mcptoolconfig',
      'late-tools',
      '-n',
      GRAPH,
      '--wait=false',
    ])
    t.equal(deleted.code, 0, 'allowed', { stderr: deleted.stderr })
    t.match(deleted.stderr, 'Warning: deletion waits for MCPServer needs-tools', 'said to wait')
    t.equal(
      await guarded(env.admission, 'MCPToolConfig', 'protected'),
      before + 1,
      'counted as protected',
    )
    const held = await getObject(kubectl, 'mcptoolconfig', 'late-tools', GRAPH)
    t.ok(held?.['metadata'].deletionTimestamp, 'deleting')
    t.match(held?.['metadata'].finalizers, ['toolhive.stacklok.dev/toolconfig-finalizer'], 'held')
    await mustKubectl(kubectl, ['delete', 'mcpserver', 'needs-tools', '-n', GRAPH, '--wait=false'])
    await waitUntilGone(kubectl, 'mcptoolconfig', 'late-tools', GRAPH, wait)
  })

  await t.test('default: an MCPToolConfig only an MCPRemoteProxy names', async (t) => {
    await createPair(
      t,
      kubectl,
      mcpToolConfig(GRAPH, 'proxy-tools'),
      remoteProxy(GRAPH, 'p', 'proxy-tools'),
    )
    await waitForCondition(kubectl, 'mcpremoteproxy', 'p', 'ToolConfigValidated', wait, 'True')
    const message =
      'MCPToolConfig "proxy-tools" is still referenced by MCPRemoteProxy p; remove spec.toolConfigRef from it first'
    await deleteWithWarning(t, env, ['mcptoolconfig', 'proxy-tools'], message, () =>
      guarded(env.admission, 'MCPToolConfig'),
    )
    // What the operator alone does: the finalizer counts no proxy, so the config goes at once.
    await waitUntilGone(kubectl, 'mcptoolconfig', 'proxy-tools', GRAPH, wait)
    t.match(
      await waitForCondition(kubectl, 'mcpremoteproxy', 'p', 'ToolConfigValidated', wait, 'False'),
      { reason: 'ToolConfigNotFound' },
      'the operator reports the proxy ToolConfigNotFound',
    )
    // What the warning at the proxy's next write says: what the operator reported.
    await expectReferenceWarning(
      t,
      kubectl,
      'mcpremoteproxy/p',
      'spec.toolConfigRef.name: MCPToolConfig "proxy-tools" not found: the operator reports ToolConfigNotFound',
    )
  })

  await t.test('default: an MCPGroup a VirtualMCPServer names', async (t) => {
    await createPair(t, kubectl, mcpGroup(GRAPH, 'vgroup'), virtualServer(GRAPH, 'v', 'vgroup'))
    await waitForCondition(kubectl, 'virtualmcpserver', 'v', 'GroupRefValidated', wait, 'True')
    const message =
      'MCPGroup "vgroup" is still referenced by VirtualMCPServer v; remove spec.groupRef from it first'
    await deleteWithWarning(t, env, ['mcpgroup', 'vgroup'], message, () =>
      guarded(env.admission, 'MCPGroup'),
    )
    // MCPGroup's finalizer holds nothing: the group goes at once.
    await waitUntilGone(kubectl, 'mcpgroup', 'vgroup', GRAPH, wait)
    t.match(
      await waitForCondition(kubectl, 'virtualmcpserver', 'v', 'GroupRefValidated', wait, 'False'),
      { reason: 'GroupRefNotFound' },
      'the operator reports the VirtualMCPServer GroupRefNotFound',
    )
    await expectReferenceWarning(
      t,
      kubectl,
      'virtualmcpserver/v',
      'spec.groupRef.name: MCPGroup "vgroup" not found: the operator reports GroupRefNotFound',
    )
  })

  await t.test('default: helm uninstall of a chart whose objects name each other', async (t) => {
    const helm = await helmFor(
      process.env['E2E_HELM'] ||
        (await ensureHelm((line) => {
          t.comment(line)
        })),
      env.plane.kubeconfig,
    )
    t.teardown(() => helm.close())
    const installed = await helm(['install', RELEASE, CHART, '-n', CHART_NS])
    t.equal(installed.code, 0, 'helm install', { stderr: installed.stderr })
    // The chart's objects, by their fixed names.
    const name = (suffix: string) => `graph-${suffix}`
    await waitForCondition(
      kubectl,
      'virtualmcpserver',
      name('vmcp'),
      'GroupRefValidated',
      { ...wait, namespace: CHART_NS },
      'True',
    )
    await waitForCondition(
      kubectl,
      'virtualmcpserver',
      name('vmcp'),
      'CompositeToolRefsValidated',
      { ...wait, namespace: CHART_NS },
      'True',
    )
    for (const [kind, object] of [
      ['mcpgroup', 'group'],
      ['embeddingserver', 'embedding'],
    ] as const)
      await waitFor(
        `the operator's finalizer on ${kind} ${name(object)}`,
        async () =>
          (await getObject(kubectl, kind, name(object), CHART_NS))?.['metadata'].finalizers?.length
            ? true
            : undefined,
        wait,
      )

    const kinds = ['EmbeddingServer', 'MCPGroup', 'VirtualMCPCompositeToolDefinition']
    const before = await Promise.all(kinds.map((kind) => guarded(env.admission, kind)))
    const uninstalled = await helm([
      'uninstall',
      RELEASE,
      '-n',
      CHART_NS,
      '--wait',
      '--timeout=120s',
    ])
    t.equal(uninstalled.code, 0, `helm uninstall completes: ${uninstalled.stderr}`)
    const after = await Promise.all(kinds.map((kind) => guarded(env.admission, kind)))
    // Helm deletes kinds it does not know alphabetically, so each referenced object went before
    // its referrers: a warning naming them, and a count, for each.
    t.same(
      after.map((count, i) => count - before[i]!),
      [1, 1, 1],
      `counted once each: ${kinds.join(', ')}`,
    )
    // Helm logs each API warning through klog, quotes escaped.
    for (const [kind, object, referrers] of [
      ['EmbeddingServer', 'embedding', 'VirtualMCPServer graph-vmcp'],
      ['MCPGroup', 'group', 'MCPServer graph-fetch, VirtualMCPServer graph-vmcp'],
      ['VirtualMCPCompositeToolDefinition', 'composite', 'VirtualMCPServer graph-vmcp'],
    ] as const)
      t.match(
        uninstalled.stderr.replaceAll('\\"', '"'),
        `${kind} "${name(object)}" is still referenced by ${referrers}`,
        `helm shows the warning on ${kind}`,
      )
    t.same(await names(kubectl, [ALL_KINDS, '-n', CHART_NS]), [], 'no ToolHive object is left')
    const releases = await helm(['list', '--all', '-n', CHART_NS, '-q'])
    t.equal(releases.stdout.trim(), '', 'no release is left')
    // What the operator made for them follows through the garbage collector.
    await waitFor(
      'nothing the operator made for them to be left',
      async () => ((await ownedByToolHive(kubectl, CHART_NS)).length === 0 ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 500, process: env.controllerManager },
    ).catch(async (error: unknown) => {
      throw new Error(
        `${String(error)}\nleft: ${(await ownedByToolHive(kubectl, CHART_NS)).join(', ')}`,
      )
    })
  })

  // The Deny half: a second mcp-admission, the webhooks pointed at it.
  const deny = await env.startAdmission({ args: DENY_ARGS })
  await env.registerWebhooks(deny)
  await waitUntilDeletesReach(env, deny)

  await t.test('Deny: the MCPToolConfig delete is refused naming the proxy', async (t) => {
    await createPair(
      t,
      kubectl,
      mcpToolConfig(GRAPH, 'deny-tools'),
      remoteProxy(GRAPH, 'deny-proxy', 'deny-tools'),
    )
    const before = await guarded(deny, 'MCPToolConfig')
    const refused = await kubectl([
      'delete',
      'mcptoolconfig',
      'deny-tools',
      '-n',
      GRAPH,
      '--wait=false',
    ])
    t.not(refused.code, 0, 'refused')
    t.match(
      refused.stderr,
      'MCPToolConfig "deny-tools" is still referenced by MCPRemoteProxy deny-proxy; remove spec.toolConfigRef from it first',
      'naming the referrer',
    )
    t.equal(await guarded(deny, 'MCPToolConfig'), before + 1, 'counted as unprotected')
    t.ok(await getObject(kubectl, 'mcptoolconfig', 'deny-tools', GRAPH), 'still there')
  })

  await t.test('Deny: the MCPGroup delete is refused naming the VirtualMCPServer', async (t) => {
    await createPair(
      t,
      kubectl,
      mcpGroup(GRAPH, 'deny-group'),
      virtualServer(GRAPH, 'deny-v', 'deny-group'),
    )
    const before = await guarded(deny, 'MCPGroup')
    const refused = await kubectl(['delete', 'mcpgroup', 'deny-group', '-n', GRAPH, '--wait=false'])
    t.not(refused.code, 0, 'refused')
    t.match(
      refused.stderr,
      'MCPGroup "deny-group" is still referenced by VirtualMCPServer deny-v; remove spec.groupRef from it first',
      'naming the referrer',
    )
    t.equal(await guarded(deny, 'MCPGroup'), before + 1, 'counted as unprotected')
    t.ok(await getObject(kubectl, 'mcpgroup', 'deny-group', GRAPH), 'still there')
  })

  await t.test('Deny: a DeleteCollection is judged as each DELETE is', async (t) => {
    await createPair(
      t,
      kubectl,
      mcpToolConfig(GRAPH, 'swept-tools'),
      remoteProxy(GRAPH, 'swept-proxy', 'swept-tools'),
    )
    // What `DELETE …/mcptoolconfigs?fieldSelector=…` sends the webhook: one review per object,
    // with the object (oldObject) but no request name.
    const swept = await kubectl([
      'delete',
      '--raw',
      `/apis/${GROUP}/v1beta1/namespaces/${GRAPH}/mcptoolconfigs?fieldSelector=metadata.name%3Dswept-tools`,
    ])
    t.not(swept.code, 0, 'refused')
    t.match(swept.stderr, 'is still referenced by MCPRemoteProxy swept-proxy', 'naming it')
  })

  await t.test('Deny: a delete in a terminating namespace is admitted', async (t) => {
    // Both held by a finalizer of the test's own, so they outlive the namespace controller's
    // deletes (which never reach the service) and the namespace stays Terminating meanwhile.
    const namespace = await env.namespace('ending')
    const held = (object: Any): Any => ({
      ...object,
      metadata: { ...object['metadata'], finalizers: [HOLD] },
    })
    await createPair(
      t,
      kubectl,
      held(mcpToolConfig(namespace, 'held-tools')),
      held(remoteProxy(namespace, 'held-proxy', 'held-tools')),
    )
    const dryRun = ['delete', '--dry-run=server', 'mcptoolconfig', 'held-tools', '-n', namespace]
    const before = await kubectl(dryRun)
    t.not(before.code, 0, 'refused while the namespace is not terminating')
    t.match(before.stderr, 'is still referenced by MCPRemoteProxy held-proxy', 'naming it')

    await mustKubectl(kubectl, ['delete', 'namespace', namespace, '--wait=false'])
    // Until the service's namespace cache has seen the deletionTimestamp.
    const admitted = await waitFor(
      'the delete to be admitted in the terminating namespace',
      async () => {
        const result = await kubectl(dryRun)
        return result.code === 0 ? result : undefined
      },
      { timeoutMs: 30_000, intervalMs: 250, process: deny.process },
    )
    t.notMatch(admitted.stderr, 'still referenced', 'without a word of the referrer')
    t.ok(
      await getObject(kubectl, 'mcpremoteproxy', 'held-proxy', namespace),
      'which is still there',
    )
    const deleted = await kubectl([
      'delete',
      'mcptoolconfig',
      'held-tools',
      '-n',
      namespace,
      '--wait=false',
    ])
    t.equal(deleted.code, 0, `the delete itself: ${deleted.stderr}`)

    for (const [kind, name] of [
      ['mcptoolconfig', 'held-tools'],
      ['mcpremoteproxy', 'held-proxy'],
    ] as const)
      await mustKubectl(kubectl, [
        'patch',
        kind,
        name,
        '-n',
        namespace,
        '--type=merge',
        '-p',
        '{"metadata":{"finalizers":null}}',
      ])
    await waitFor(
      `namespace ${namespace} to be gone`,
      async () =>
        (await names(kubectl, ['namespace', namespace])).length === 0 ? true : undefined,
      { timeoutMs: 120_000, intervalMs: 500, process: env.controllerManager },
    )
  })

  await t.test('Deny: a namespace holding every kind is deleted completely', async (t) => {
    const before = await Promise.all([deny.metric(GUARDED), exclusions(env)])
    await mustKubectl(kubectl, ['delete', 'namespace', DOOMED, '--wait=false'])
    await waitFor(
      `namespace ${DOOMED} to be gone`,
      async () => ((await names(kubectl, ['namespace', DOOMED])).length === 0 ? true : undefined),
      { timeoutMs: 120_000, intervalMs: 500, process: env.controllerManager },
    ).catch(async (error: unknown) => {
      // What held it: the namespace's conditions and what is left in it.
      const left = await kubectl(['get', ALL_KINDS, '-n', DOOMED, '-o', 'name'])
      const status = await kubectl(['get', 'namespace', DOOMED, '-o', 'jsonpath={.status}'])
      throw new Error(`${String(error)}\nleft: ${left.stdout}\nstatus: ${status.stdout}`)
    })
    // Listing in a namespace that no longer exists reads storage directly.
    t.same(await names(kubectl, [ALL_KINDS, '-n', DOOMED]), [], 'nothing of it is left')
    const after = await Promise.all([deny.metric(GUARDED), exclusions(env)])
    t.equal(after[0], before[0], 'no delete of it reached the guard')
    t.ok(after[1] > before[1], "the webhook's matchCondition kept the controllers' deletes from it")
  })
}

/** `kind/name` → finalizer for each target the table protects, and each MCPGroup's. */
function expectedFinalizers(graph: readonly Any[]): Map<string, string> {
  const expected = new Map<string, string>()
  for (const object of graph)
    for (const { kind, name, reference } of referencesIn(object)) {
      if (reference.protectedBy) expected.set(`${kind}/${name}`, reference.protectedBy.finalizer)
      if (kind === 'MCPGroup')
        expected.set(`${kind}/${name}`, 'toolhive.stacklok.dev/mcpgroup-finalizer')
    }
  return expected
}

/** Creates a target, then its referrer (no warning: the target exists). */
async function createPair(t: Test, kubectl: Kubectl, target: Any, referrer: Any): Promise<void> {
  for (const object of [target, referrer]) {
    const created = await kubectl(['create', '-f', '-'], JSON.stringify(object))
    t.equal(created.code, 0, `${String(object['kind'])} created`, { stderr: created.stderr })
    t.notMatch(created.stderr, 'not found:', `${String(object['kind'])}: no warning`)
  }
}

/**
 * Deletes `kind name` in GRAPH with the guard warning: once a dry run shows the warning (the
 * cache the guard reads while it warns has the referrer), the delete itself goes through with it
 * and is counted once.
 */
async function deleteWithWarning(
  t: Test,
  env: Environment,
  [kind, name]: readonly [string, string],
  message: string,
  counted: () => Promise<number>,
): Promise<void> {
  const { kubectl } = env
  await waitFor(
    `the guard's warning on a dry run of deleting ${kind} ${name}`,
    async () => {
      const dry = await kubectl(['delete', '--dry-run=server', kind, name, '-n', GRAPH])
      return dry.code === 0 && dry.stderr.includes(message) ? true : undefined
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  )
  const before = await counted()
  const deleted = await kubectl(['delete', kind, name, '-n', GRAPH, '--wait=false'])
  t.equal(deleted.code, 0, `deleted: ${deleted.stderr}`)
  // Warn renders each violation as a denial lists it (`Forbidden: …`), one warning each.
  t.match(
    deleted.stderr,
    `Warning: Forbidden: ${message}`,
    'kubectl shows the warning naming the referrer',
  )
  t.equal(await counted(), before + 1, 'counted as an unprotected delete')
}

async function waitUntilGone(
  kubectl: Kubectl,
  kind: string,
  name: string,
  namespace: string,
  options: { timeoutMs: number; intervalMs: number },
): Promise<void> {
  await waitFor(
    `${kind} ${name} to be gone`,
    async () => ((await getObject(kubectl, kind, name, namespace)) ? undefined : true),
    options,
  )
}

/** What in `namespace` a ToolHive object owns (what the operator made for it). */
async function ownedByToolHive(kubectl: Kubectl, namespace: string): Promise<string[]> {
  const kinds =
    'deployments,statefulsets,services,configmaps,secrets,serviceaccounts,roles,rolebindings'
  const items = (
    JSON.parse(await mustKubectl(kubectl, ['get', kinds, '-n', namespace, '-o', 'json'])) as Any
  )['items'] as Any[]
  return items
    .filter((item) =>
      ((item['metadata'].ownerReferences ?? []) as Any[]).some((ref) =>
        String(ref['apiVersion']).startsWith(`${GROUP}/`),
      ),
    )
    .map((item) => `${String(item['kind'])}/${String(item['metadata'].name)}`)
}

/**
 * A metadata-only write of `object` in GRAPH and the reference warning it gets: what fits in a
 * warning's 120 characters, and the whole of it, with what the operator reports.
 */
async function expectReferenceWarning(
  t: Test,
  kubectl: Kubectl,
  object: string,
  warning: string,
): Promise<void> {
  const touched = await kubectl([
    'annotate',
    object,
    '-n',
    GRAPH,
    '--overwrite',
    'e2e.mcp-admission.dev/touched=1',
  ])
  t.equal(touched.code, 0, `${object} updated`, { stderr: touched.stderr })
  t.match(touched.stderr, `Warning: ${warning.slice(0, 119)}`, 'the warning names the target')
  t.match(touched.stderr, `Warning: ${warning}\n`, 'and what the operator reports, whole')
}

/** Waits until the operator writes condition `type` (with `status` when given) and returns it. */
async function waitForCondition(
  kubectl: Kubectl,
  kind: string,
  name: string,
  type: string,
  options: { timeoutMs: number; intervalMs: number; namespace?: string },
  status?: 'True' | 'False',
): Promise<Any> {
  return waitFor(
    `${kind} ${name}: ${type}${status ? `=${status}` : ''}`,
    async () => {
      const object = await getObject(kubectl, kind, name, options.namespace ?? GRAPH)
      const found = ((object?.['status']?.conditions ?? []) as Any[]).find(
        (c) => c['type'] === type,
      )
      return found && (status === undefined || found['status'] === status) ? found : undefined
    },
    options,
  )
}

/**
 * Waits until the API server sends the delete guard's webhook to `admission` (its own request
 * metric): `registerWebhooks` waits for the mutating configuration only.
 */
async function waitUntilDeletesReach(env: Environment, admission: RunningAdmission): Promise<void> {
  const calls = () =>
    admission.metric('controller_runtime_webhook_requests_total', { webhook: '/validate' })
  const before = await calls()
  const probe = JSON.stringify(mcpGroup(GRAPH, 'switch-probe'))
  await mustKubectl(env.kubectl, ['create', '-f', '-'], probe)
  await waitFor(
    'the API server to send deletes to the Deny instance',
    async () => {
      await env.kubectl(['delete', '--dry-run=server', 'mcpgroup', 'switch-probe', '-n', GRAPH])
      return (await calls()) > before ? true : undefined
    },
    { timeoutMs: 30_000, intervalMs: 250, process: admission.process },
  )
}

/** How many requests the API server kept from the delete guard's webhook by its matchCondition. */
async function exclusions(env: Environment): Promise<number> {
  const text = await mustKubectl(env.kubectl, ['get', '--raw', '/metrics'])
  let total = 0
  for (const line of text.split('\n'))
    if (
      line.startsWith('apiserver_admission_match_condition_exclusions_total{') &&
      line.includes(`name="${DELETES_WEBHOOK}"`)
    )
      total += Number(line.slice(line.lastIndexOf(' ') + 1))
  return total
}

/** The names `kubectl get -o name` lists (empty when none is found). */
async function names(kubectl: Kubectl, args: readonly string[]): Promise<string[]> {
  const out = await mustKubectl(kubectl, ['get', '--ignore-not-found', '-o', 'name', ...args])
  return out.split('\n').filter((line) => line !== '')
}
