/**
 * `node bench/api-server-review.ts [--cpu-prof]`: CPU per proxy Deployment review as the API
 * server sends it, in one process with no network: an UPDATE of scenario 1's Deployment carrying
 * `metadata.managedFields` (a trie of every field, as a manager's Update records it) and the whole
 * old object, parsed and reviewed against a 1,000-server view. Prints the review's size and the
 * microseconds of CPU per review (JSON.parse + admission.review) in five rounds; with Node's
 * `--cpu-prof`, the profile says where they go. Compare two commits by running it on each.
 */

import { createAdmission } from '../src/admission/webhook.ts'
import { MemoryView } from '../src/cluster/memory-view.ts'
import { populationObjects } from './population.ts'
import { SCENARIO_1_BYTES, deploymentReview } from './scenarios.ts'

const REVIEWS_PER_ROUND = 4_000
const ROUNDS = 5

/** A managedFields trie of `value`: `f:<key>` per field, `k:` per list item, as fieldsV1 has it. */
function fieldsTrie(value: unknown): unknown {
  if (Array.isArray(value))
    return Object.fromEntries(
      value.map((item, i) => [
        `k:{"name":"item-${i}"}`,
        { '.': {}, ...(fieldsTrie(item) as object) },
      ]),
    )
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [`f:${key}`, fieldsTrie(item)]),
    )
  return {}
}

const body = deploymentReview(SCENARIO_1_BYTES) as {
  request: { operation: string; object: Record<string, any>; oldObject?: unknown }
}
const { object } = body.request
object['metadata'].managedFields = [
  {
    manager: 'toolhive-operator',
    operation: 'Update',
    apiVersion: 'apps/v1',
    time: '2026-11-25T10:00:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: fieldsTrie({ metadata: { labels: object['metadata'].labels }, spec: object['spec'] }),
  },
]
body.request.operation = 'UPDATE'
body.request.oldObject = structuredClone(object)
const text = JSON.stringify(body)
const managedBytes = JSON.stringify(object['metadata'].managedFields).length
console.log(`review: ${text.length} bytes, of which managedFields ${managedBytes} per object`)

const admission = createAdmission({ view: new MemoryView([...populationObjects(1_000)]) })
const checked = await admission.review(JSON.parse(text), 'mutate')
if (!checked.ok || !checked.review.response.allowed) throw new Error('the review is not admitted')

for (let round = 0; round < ROUNDS; round++) {
  const started = process.cpuUsage()
  for (let i = 0; i < REVIEWS_PER_ROUND; i++) await admission.review(JSON.parse(text), 'mutate')
  const used = process.cpuUsage(started)
  const perReview = (used.user + used.system) / REVIEWS_PER_ROUND
  console.log(`round ${round + 1}: ${perReview.toFixed(1)} µs CPU per review`)
}
