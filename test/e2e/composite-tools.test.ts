/**
 * VirtualMCPCompositeToolDefinition beside the real operator of the newest release
 * (docs/enforcement.md, "Composite tool definitions"): no upstream controller validates the kind,
 * so a broken workflow used to surface only as a vmcp pod failing to start. Here:
 *  - a definition stored invalid before mcp-admission was installed is marked
 *    `validationStatus: Invalid` by its reconciler, and the VirtualMCPServer naming it then reports
 *    upstream's condition for an invalid definition (CompositeToolRefsValidated False,
 *    CompositeToolRefInvalid) instead of starting a vmcp that cannot run;
 *  - a new invalid definition is denied, every violation at its field path;
 *  - upstream's three composite examples are admitted and never marked;
 *  - a label on the stored invalid definition is admitted (ratcheting) and costs no status write;
 *  - fixing the spec takes `Invalid` away again in one status write, counted at the API server,
 *    and the VirtualMCPServer proceeds to its Deployment;
 *  - `mcp-admission release-status`, run after the service is gone, removes what it wrote.
 */

import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import t from 'tap'
import { difference, scrapeWrites } from './harness/api-writes.ts'
import { startEnvironment } from './harness/environment.ts'
import { mustKubectl } from './harness/kubectl.ts'
import { list, mcpGroup, toolHive } from './harness/object-graph.ts'
import { getObject } from './harness/operator-objects.ts'
import { exampleObjects } from './harness/operator.ts'
import type { Any } from './harness/operator.ts'
import { waitFor } from './harness/processes.ts'
import { ensureOperator } from './toolhive/releases.ts'

const RELEASE = 'v0.63.0'
const NS = 'composites'
const KIND = 'VirtualMCPCompositeToolDefinition'
const STATUS_WRITES = 'virtualmcpcompositetooldefinitions.toolhive.stacklok.dev/status'
const VMCP_STATUS_WRITES = 'virtualmcpservers.toolhive.stacklok.dev/status'
const MAIN = join(import.meta.dirname, '../../dist/main.js')
/** The reconciler re-judges a change within seconds; the operator's watch follows ours. */
const WAIT = { timeoutMs: 60_000, intervalMs: 500 }

/** A workflow whose two steps wait for each other: the vmcp could never start it. */
const CYCLE = {
  name: 'fetch_cycle',
  description: 'Two fetches that wait for each other',
  steps: [
    { id: 'first', type: 'tool', tool: 'fetch', dependsOn: ['second'] },
    { id: 'second', type: 'tool', tool: 'fetch', dependsOn: ['first'] },
  ],
}
/** The same workflow with the first step waiting for nothing. */
const FIXED = {
  ...CYCLE,
  steps: [{ id: 'first', type: 'tool', tool: 'fetch' }, CYCLE.steps[1]],
}

const definition = (name: string, spec: Any) => toolHive(KIND, NS, name, spec)
const vmcpNaming = (name: string, composite: string) =>
  toolHive('VirtualMCPServer', NS, name, {
    groupRef: { name: 'group' },
    incomingAuth: { type: 'anonymous' },
    config: { compositeToolRefs: [{ name: composite }] },
  })

const files = await ensureOperator(RELEASE)
const env = await startEnvironment(t, {
  crds: [files.crds],
  // Stored before any of mcp-admission is in the cluster: nothing judged them at the write.
  beforeService: async ({ kubectl }) => {
    await mustKubectl(kubectl, ['create', 'namespace', NS])
    await mustKubectl(
      kubectl,
      ['create', '-f', '-'],
      list([
        mcpGroup(NS),
        definition('cycle', CYCLE),
        definition('cycle-kept', CYCLE),
        vmcpNaming('uses-cycle', 'cycle'),
      ]),
    )
  },
  operator: { files, watch: [NS] },
})
const { kubectl, plane, admission } = env
const wait = { ...WAIT, process: env.operator }

const ourStatusWrites = () => admission.metric('mcp_admission_status_writes_total', { kind: KIND })

await t.test('a definition stored invalid is marked Invalid by the reconciler', async (t) => {
  const marked = await waitFor(
    'validationStatus Invalid on the stored definition',
    async () => {
      const found = await getObject(kubectl, KIND, 'cycle', NS)
      return found?.['status']?.validationStatus === 'Invalid' ? found : undefined
    },
    wait,
  )
  const errors = (marked['status'].validationErrors ?? []) as string[]
  t.match(errors.join('\n'), /spec\.steps\[0\]\.dependsOn: .*first -> second -> first/)
  t.notOk('observedGeneration' in marked['status'], 'no top-level observedGeneration')
  // kubectl leaves managedFields out unless asked.
  const withFields = JSON.parse(
    await mustKubectl(kubectl, [
      'get',
      KIND,
      'cycle',
      '-n',
      NS,
      '-o',
      'json',
      '--show-managed-fields',
    ]),
  ) as Any
  const managers = ((withFields['metadata'].managedFields ?? []) as Any[])
    .filter((entry) => entry['subresource'] === 'status')
    .map((entry) => entry['manager'])
  t.same(managers, ['mcp-admission-status'], 'the status is ours alone')
})

await t.test('the VirtualMCPServer naming it reports the invalid definition', async (t) => {
  const condition = await waitFor(
    'CompositeToolRefsValidated False on the VirtualMCPServer',
    async () => {
      const vmcp = await getObject(kubectl, 'virtualmcpserver', 'uses-cycle', NS)
      const found = conditionOf(vmcp, 'CompositeToolRefsValidated')
      return found?.['status'] === 'False' ? found : undefined
    },
    wait,
  )
  t.equal(condition['reason'], 'CompositeToolRefInvalid')
  t.match(condition['message'], 'Referenced VirtualMCPCompositeToolDefinition cycle is invalid')
  t.match(condition['message'], 'spec.steps[0].dependsOn')
  t.equal(
    await getObject(kubectl, 'deployment', 'uses-cycle', NS),
    undefined,
    'no vmcp Deployment for a workflow that cannot run',
  )
})

await t.test('a new invalid definition is denied at its field paths', async (t) => {
  const broken = definition('broken', {
    name: 'broken',
    description: 'Every kind of mistake at once',
    steps: [
      { id: 'a', type: 'tool' },
      { id: 'a', type: 'tool', tool: 'fetch', dependsOn: ['missing'] },
    ],
  })
  const result = await kubectl(['create', '-f', '-'], JSON.stringify(broken))
  t.not(result.code, 0, 'refused')
  t.match(result.stderr, 'The VirtualMCPCompositeToolDefinition "broken" is invalid')
  t.match(result.stderr, 'spec.steps[0].tool: Required value')
  t.match(result.stderr, 'spec.steps[1].id: Duplicate value: "a"')
  t.match(result.stderr, 'spec.steps[1].dependsOn[0]')
  t.equal(await getObject(kubectl, KIND, 'broken', NS), undefined, 'nothing stored')
})

await t.test("upstream's composite examples are admitted and never marked", async (t) => {
  const examples = (await exampleObjects(files.examples))
    .map(({ object }) => object)
    .filter((object) => object['kind'] === KIND)
  t.equal(examples.length, 3, 'the release ships three composite examples')
  for (const example of examples) {
    const object = { ...example, metadata: { ...example['metadata'], namespace: NS } }
    // Two of them carry fields their CRD does not have (`failureMode`, `onError.maxRetries`):
    // kubectl's strict field validation refuses those before any webhook, and without it the API
    // server prunes them, which is what is stored and judged.
    const result = await kubectl(['create', '--validate=false', '-f', '-'], JSON.stringify(object))
    t.equal(result.code, 0, `${example['metadata'].name}: ${result.stderr}`)
    t.notMatch(result.stderr, /Warning/, `${example['metadata'].name}: no warning`)
  }
  // Longer than the reconciler takes to mark one (the first test): none is.
  await sleep(5_000)
  for (const example of examples) {
    const stored = await getObject(kubectl, KIND, example['metadata'].name, NS)
    t.equal(stored?.['status']?.validationStatus, undefined, example['metadata'].name)
  }
})

await t.test(
  'a label on the stored invalid definition is admitted, with no status write',
  async (t) => {
    const before = await ourStatusWrites()
    const labelled = await kubectl(['label', KIND, 'cycle', '-n', NS, 'team=tools'])
    t.equal(labelled.code, 0, labelled.stderr)
    // The spec is unchanged, so the violations stay and so does Invalid: nothing to write.
    await sleep(5_000)
    t.equal(await ourStatusWrites(), before, 'no status write for a metadata change')
  },
)

await t.test('fixing the spec removes Invalid in one write and the vMCP proceeds', async (t) => {
  const writesBefore = await ourStatusWrites()
  // A baseline of the operator's own status writes on the vMCP, over a window as long as the next.
  const quiet = await scrapeWrites(plane)
  await sleep(15_000)
  const vmcpIdle = difference(await scrapeWrites(plane), quiet).get(VMCP_STATUS_WRITES) ?? 0

  const before = await scrapeWrites(plane)
  await mustKubectl(kubectl, ['apply', '-f', '-'], JSON.stringify(definition('cycle', FIXED)))
  await waitFor(
    'Invalid removed from the fixed definition',
    async () => {
      const found = await getObject(kubectl, KIND, 'cycle', NS)
      return found && found['status']?.validationStatus === undefined ? found : undefined
    },
    { ...WAIT, process: admission.process },
  )
  await waitFor(
    'CompositeToolRefsValidated True on the VirtualMCPServer',
    async () => {
      const vmcp = await getObject(kubectl, 'virtualmcpserver', 'uses-cycle', NS)
      return conditionOf(vmcp, 'CompositeToolRefsValidated')?.['status'] === 'True'
        ? true
        : undefined
    },
    wait,
  )
  await waitFor(
    'the vmcp Deployment',
    () => getObject(kubectl, 'deployment', 'uses-cycle', NS),
    wait,
  )
  await sleep(15_000)
  const writes = difference(await scrapeWrites(plane), before)
  t.equal(writes.get(STATUS_WRITES), 1, 'one status write at the API server: Invalid removed')
  t.equal((await ourStatusWrites()) - writesBefore, 1, 'and one counted by the service')
  t.comment(
    `vMCP status writes at the API server: ${writes.get(VMCP_STATUS_WRITES) ?? 0} after the fix (until the Deployment and 15 s after), ${vmcpIdle} in 15 s idle before it`,
  )
})

await t.test(
  'release-status removes what the reconciler wrote, once the service is gone',
  async (t) => {
    await waitFor(
      'Invalid on the second stored definition',
      async () => {
        const found = await getObject(kubectl, KIND, 'cycle-kept', NS)
        return found?.['status']?.validationStatus === 'Invalid' ? true : undefined
      },
      wait,
    )
    await mustKubectl(kubectl, [
      'delete',
      'mutatingwebhookconfiguration,validatingwebhookconfiguration',
      'mcp-admission',
    ])
    await admission.stop()
    const run = await releaseStatus(plane.kubeconfig)
    t.match(run.stdout, `${NS}/cycle-kept`)
    const stored = await getObject(kubectl, KIND, 'cycle-kept', NS)
    t.equal(stored?.['status']?.validationStatus, undefined, 'validationStatus removed')
    t.equal(stored?.['status']?.validationErrors, undefined, 'validationErrors removed')
    const again = await releaseStatus(plane.kubeconfig)
    t.notMatch(again.stdout, `${NS}/cycle-kept`, 'a second run has nothing left to remove')
  },
)

function conditionOf(object: Any | undefined, type: string): Any | undefined {
  const conditions = (object?.['status']?.conditions ?? []) as Any[]
  return conditions.find((condition) => condition['type'] === type)
}

async function releaseStatus(kubeconfig: string): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(
    process.execPath,
    [MAIN, 'release-status', '--kubeconfig', kubeconfig],
    { timeout: 60_000 },
  )
}
