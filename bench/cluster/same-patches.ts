/**
 * Before anything is timed: the same AdmissionReviews, sent straight to mcp-admission and to the
 * Go peer, must get the same answer from both: allowed, the same warnings, and the same JSON
 * Patch (the same operations; their order is each library's and changes nothing, since no two
 * touch the same path). The reviews are the bench's own proxy Deployments and RunConfig
 * ConfigMaps, owned by stored servers, so both make their live reads. Any difference stops the
 * bench: its figures would compare different work.
 */

import { request } from 'node:https'
import { isDeepStrictEqual } from 'node:util'
import fastJsonPatch from 'fast-json-patch'
import type { Operation } from 'fast-json-patch'
import { runConfigJson, runConfigMap } from '../population.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import type { RunningAdmission } from '../../test/e2e/harness/environment.ts'
import type { Context } from './measure.ts'
import { isStdio, namespaceOf, serverName } from './population.ts'

interface Answer {
  readonly allowed: boolean
  readonly warnings: readonly string[]
  readonly patch: Operation[]
}

/** POSTs `review` to the service's /mutate and decodes its answer. */
function mutate(admission: RunningAdmission, review: unknown): Promise<Answer> {
  const body = JSON.stringify(review)
  return new Promise((resolve, reject) => {
    const url = new URL('/mutate', admission.admissionUrl)
    const sent = request(
      url,
      {
        method: 'POST',
        ca: admission.caPem,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.once('end', () => {
          try {
            const { response: answer } = JSON.parse(Buffer.concat(chunks).toString()) as {
              response: { allowed: boolean; warnings?: string[]; patch?: string }
            }
            resolve({
              allowed: answer.allowed,
              warnings: answer.warnings ?? [],
              patch: answer.patch
                ? (JSON.parse(Buffer.from(answer.patch, 'base64').toString()) as Operation[])
                : [],
            })
          } catch (error) {
            reject(new Error(`${url.href} answered HTTP ${response.statusCode}: ${String(error)}`))
          }
        })
      },
    )
    sent.once('error', reject)
    sent.end(body)
  })
}

/**
 * The answer with its patch in path order: each library orders its operations its own way, and
 * no two touch the same path. Compared with isDeepStrictEqual, whose objects' key order does not
 * count (Go's encoder sorts map keys, JavaScript keeps insertion order).
 */
const inPathOrder = (answer: Answer): Answer => ({
  ...answer,
  patch: answer.patch.toSorted((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0)),
})

function review(object: KubeObject, oldObject?: KubeObject): unknown {
  const metadata = object.metadata as { name: string; namespace: string }
  const isDeployment = object.kind === 'Deployment'
  const kind = isDeployment
    ? { group: 'apps', version: 'v1', kind: 'Deployment' }
    : { group: '', version: 'v1', kind: 'ConfigMap' }
  const resource = isDeployment
    ? { group: 'apps', version: 'v1', resource: 'deployments' }
    : { group: '', version: 'v1', resource: 'configmaps' }
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: crypto.randomUUID(),
      kind,
      resource,
      requestKind: kind,
      requestResource: resource,
      name: metadata.name,
      namespace: metadata.namespace,
      operation: oldObject ? 'UPDATE' : 'CREATE',
      userInfo: { username: 'bench' },
      object,
      ...(oldObject ? { oldObject } : {}),
      dryRun: false,
    },
  }
}

/** The scenarios, each a review; `mutated` applies mcp-admission's patch (for the idempotence one). */
function* scenarios(context: Context, ours: Answer[]): Generator<[string, unknown]> {
  const uidOf = (i: number) => context.uids.get(i) ?? ''
  const deployment = (i: number, revision = 0) =>
    JSON.parse(context.deployments.body(i, uidOf(i), revision)) as KubeObject
  const stdio = [...context.uids.keys()].find(isStdio) ?? 0
  const http = [...context.uids.keys()].find((i) => !isStdio(i)) ?? 1
  yield ['Deployment CREATE, stdio owner (cap)', review(deployment(stdio))]
  yield ['Deployment CREATE, streamable-http owner', review(deployment(http))]
  const stamped = fastJsonPatch.applyPatch(deployment(stdio), ours[0]!.patch, false, false)
    .newDocument as KubeObject & {
    spec: { template: { metadata: { annotations: Record<string, string> } } }
  }
  yield ['Deployment UPDATE of its own output (no patch)', review(stamped, stamped)]
  const higher = structuredClone(stamped)
  higher.spec.template.metadata.annotations['toolhive.stacklok.dev/mcpserver-generation'] = '99'
  yield ['Deployment UPDATE, stored generation higher', review(deployment(stdio, 1), higher)]
  const orphan = deployment(stdio)
  ;(orphan.metadata as { name: string }).name = 'mcp-missing'
  const reference = (orphan.metadata as { ownerReferences: { name: string }[] }).ownerReferences[0]!
  reference.name = 'mcp-missing'
  yield ['Deployment CREATE, owner missing', review(orphan)]
  // As the operator writes it: the population's ConfigMaps carry the checksum, as once admitted.
  const name = serverName(http)
  const configMap = runConfigMap(name, namespaceOf(http), runConfigJson(name, http, false))
  const annotations = (configMap.metadata as { annotations: Record<string, string> }).annotations
  const fresh = structuredClone(configMap)
  delete (fresh.metadata as { annotations?: unknown }).annotations
  yield ['RunConfig ConfigMap CREATE', review(fresh)]
  annotations['toolhive.stacklok.dev/content-checksum'] = 'stale'
  annotations['team'] = 'a'
  yield ['RunConfig ConfigMap UPDATE, stale checksum', review(configMap, fresh)]
  yield [
    'ConfigMap of another component (untouched)',
    review({ ...fresh, metadata: { name: 'other', namespace: namespaceOf(http) } }),
  ]
}

/** Sends every scenario to both; throws on the first difference. Returns the scenarios checked. */
export async function checkSamePatches(
  context: Context,
  services: readonly [RunningAdmission, RunningAdmission],
): Promise<string[]> {
  const [ours, peer] = services
  const answers: Answer[] = []
  const checked: string[] = []
  for (const [name, sent] of scenarios(context, answers)) {
    const [a, b] = await Promise.all([mutate(ours, sent), mutate(peer, sent)])
    answers.push(a)
    if (!a.allowed || !isDeepStrictEqual(inPathOrder(a), inPathOrder(b)))
      throw new Error(
        `${name}: mcp-admission and the Go peer answer differently\n  mcp-admission: ${JSON.stringify(inPathOrder(a))}\n  go-peer:       ${JSON.stringify(inPathOrder(b))}`,
      )
    checked.push(`${name}: ${a.patch.length} operations, ${a.warnings.length} warnings`)
  }
  return checked
}
