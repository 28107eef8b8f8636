/**
 * Properties of proxy Deployment admission over generated Deployments and owners, through the
 * whole pipeline (decode → gather → policy → diff): convergence, no patch for what already holds,
 * overrides never beat the managed keys, and labels, other env entries and replicas untouched.
 */

import fc from 'fast-check'
import t from 'tap'
import { cloneJson } from '../../src/admission/clone.ts'
import { applyPatch } from '../helpers/apply-patch.ts'
import { createAdmission } from '../../src/admission/webhook.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import { GENERATION_ENV, generationEnvEntry } from '../../src/policy/generation-env.ts'
import { jsonEqual } from '../../src/policy/kube/object.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { mutateProxyDeployment } from '../../src/policy/proxy-deployment.ts'
import { isRefused } from '../../src/policy/result.ts'
import { patchOf, review } from '../helpers/objects.ts'
import { proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

const SEED = 20261122
const RUNS = 150

/** Keys drawn from a small pool, so collisions with the managed keys and labels happen often. */
const annotationKey = fc.constantFrom(
  ANNOTATIONS.runConfigChecksum,
  ANNOTATIONS.mcpServerGeneration,
  'kubectl.kubernetes.io/restartedAt',
  'vault.hashicorp.com/agent-inject',
  'example.com/a',
  '__proto__',
)
const labelKey = fc.constantFrom('app', 'toolhive-name', 'team', 'tier', '__proto__')
const stringMap = (keys: fc.Arbitrary<string>) =>
  fc.dictionary(keys, fc.string({ maxLength: 8 }), { maxKeys: 4 })
const envEntry = fc.oneof(
  fc.record({
    name: fc.constantFrom('A', 'B', GENERATION_ENV),
    value: fc.string({ maxLength: 4 }),
  }),
  fc.constant(generationEnvEntry()),
  fc.constant({ name: GENERATION_ENV, valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }),
)

const scenario = fc.record({
  transport: fc.constantFrom(undefined, 'stdio', 'sse', 'streamable-http'),
  generation: fc.integer({ min: 1, max: 50 }),
  overrideAnnotations: stringMap(annotationKey),
  overrideLabels: stringMap(labelKey),
  podAnnotations: fc.option(stringMap(annotationKey), { nil: undefined }),
  env: fc.option(fc.array(envEntry, { maxLength: 4 }), { nil: undefined }),
  replicas: fc.integer({ min: 0, max: 5 }),
  content: fc.string({ maxLength: 20 }),
})

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never

function build(s: Scenario) {
  const owner = workload('MCPServer', 'demo', {
    generation: s.generation,
    spec: {
      ...(s.transport === undefined ? {} : { transport: s.transport }),
      resourceOverrides: {
        proxyDeployment: {
          podTemplateMetadataOverrides: {
            annotations: s.overrideAnnotations,
            labels: s.overrideLabels,
          },
        },
      },
    },
  })
  const map = runConfigFor('MCPServer', 'demo', s.content)
  // Through JSON, as from the wire: generated values may share object references.
  const deployment = JSON.parse(
    JSON.stringify(
      proxyDeployment('MCPServer', 'demo', {
        replicas: s.replicas,
        ...(s.podAnnotations ? { podAnnotations: s.podAnnotations } : {}),
        ...(s.env ? { env: s.env } : {}),
      }),
    ),
  ) as KubeObject
  return {
    owner,
    map,
    deployment,
    admission: createAdmission({ view: new MemoryView([owner, map]) }),
  }
}

async function admit(
  admission: ReturnType<typeof createAdmission>,
  object: KubeObject,
): Promise<KubeObject> {
  const outcome = await admission.review(review(object), 'mutate')
  if (!outcome.ok || !outcome.review.response.allowed) throw new Error('not allowed')
  return applyPatch(object, patchOf(outcome.review.response))
}

const podTemplate = (object: KubeObject): any => (object.spec as any).template
const nonGenerationEnv = (object: KubeObject) =>
  ((podTemplate(object).spec.containers[0].env ?? []) as { name: string }[]).filter(
    (e) => e.name !== GENERATION_ENV,
  )

t.test('the patch gives exactly what the rule makes of a full copy', async (t) => {
  // Admission copies the object, runs the rule and diffs: the patch must carry every write.
  await fc.assert(
    fc.asyncProperty(scenario, async (s) => {
      const { admission, deployment, owner, map } = build(s)
      const admitted = await admit(admission, deployment)
      const facts = { owner, runConfigMap: map, stored: undefined }
      const full = mutateProxyDeployment(cloneJson(deployment), facts)
      return !isRefused(full) && jsonEqual(admitted, full.object)
    }),
    { seed: SEED, numRuns: RUNS },
  )
  t.pass()
})

t.test('admitting the output again yields no patch', async (t) => {
  await fc.assert(
    fc.asyncProperty(scenario, async (s) => {
      const { admission, deployment } = build(s)
      const admitted = await admit(admission, deployment)
      const again = await admission.review(review(admitted), 'mutate')
      return again.ok && patchOf(again.review.response).length === 0
    }),
    { seed: SEED, numRuns: RUNS },
  )
  t.pass()
})

t.test('no override can remove or change the checksum or the generation', async (t) => {
  await fc.assert(
    fc.asyncProperty(scenario, async (s) => {
      const { admission, deployment, map } = build(s)
      const annotations = podTemplate(await admit(admission, deployment)).metadata.annotations
      return (
        annotations[ANNOTATIONS.runConfigChecksum] === effectiveContentChecksum(map) &&
        annotations[ANNOTATIONS.mcpServerGeneration] === String(s.generation)
      )
    }),
    { seed: SEED, numRuns: RUNS },
  )
  t.pass()
})

t.test(
  'Deployment labels, other env entries and replicas (but for the cap) are never touched',
  async (t) => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const { admission, deployment } = build(s)
        const admitted = await admit(admission, deployment)
        const stdio = s.transport === undefined || s.transport === 'stdio'
        const replicas = stdio && s.replicas > 1 ? 1 : s.replicas
        const env = podTemplate(admitted).spec.containers[0].env as unknown[]
        return (
          JSON.stringify(admitted.metadata?.labels) ===
            JSON.stringify(deployment.metadata?.labels) &&
          JSON.stringify(nonGenerationEnv(admitted)) ===
            JSON.stringify(nonGenerationEnv(deployment)) &&
          env.filter((e) => jsonEqual(e, generationEnvEntry())).length === 1 &&
          (admitted.spec as any).replicas === replicas
        )
      }),
      { seed: SEED, numRuns: RUNS },
    )
    t.pass()
  },
)

t.test(
  'an object that already satisfies the invariants yields no patch, on CREATE and UPDATE',
  async (t) => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const { admission, deployment } = build(s)
        const settled = await admit(admission, deployment)
        const update = await admission.review(review(settled, { operation: 'UPDATE' }), 'mutate')
        return update.ok && update.review.response.patchType === undefined
      }),
      { seed: SEED, numRuns: RUNS },
    )
    t.pass()
  },
)
