/**
 * Micro-benchmark of the transport-free pipeline, per scenario, in one process with no network:
 * decode (JSON.parse) → envelope check → gather facts → clone → policy → diff → respond → encode
 * (JSON.stringify). Each phase is timed alone, with the building blocks the pipeline itself uses,
 * so the shares point at hot spots; `review` is the real `admission.review` call, and "other" is
 * what it spends beyond the phases timed alone (routing, promises, wrapping).
 *
 * Run as a forked child; it sends its results over IPC.
 */

import { decodeReview } from '../src/admission/decode.ts'
import { cloneJson } from '../src/admission/clone.ts'
import { diff } from '../src/admission/patch.ts'
import { gatherProxyDeploymentFacts } from '../src/admission/proxy-facts.ts'
import { allowed, patched } from '../src/admission/response.ts'
import type { AdmissionRequest } from '../src/admission/review.ts'
import { createAdmission } from '../src/admission/webhook.ts'
import { MemoryView } from '../src/cluster/memory-view.ts'
import { mutateRunConfigMap } from '../src/policy/content-checksum.ts'
import type { KubeObject } from '../src/policy/kube/object.ts'
import { mutateProxyDeployment } from '../src/policy/proxy-deployment.ts'
import { ratchet } from '../src/policy/ratchet.ts'
import { isRefused } from '../src/policy/result.ts'
import type { MutationResult } from '../src/policy/result.ts'
import { validateWebhookConfig } from '../src/policy/webhook-config.ts'
import { populationObjects } from './population.ts'
import { buildScenarios } from './scenarios.ts'
import type { Scenario } from './scenarios.ts'
import { withToken } from './token.ts'

export interface MicroPhase {
  readonly phase: string
  readonly nsPerOp: number
  /** Share of `total` (parse + review + encode). */
  readonly share: number
}

export interface MicroResult {
  readonly id: string
  readonly title: string
  readonly bytes: number
  readonly totalNs: number
  readonly phases: MicroPhase[]
}

/** Where results go, so the optimiser cannot drop the work. */
export let sink: unknown

/** Distinct inputs each phase cycles through (more than any content-keyed memo in src/ holds). */
const VARIANTS = 2048
/** The micro benchmark's reviews come from nobody in particular: no slow-API-server fallback. */
const OTHER_WRITER = { exactOperator: false }

/**
 * CPU nanoseconds of this thread per call of `fn(i)` (i = 0, 1, 2, …): the median of five rounds
 * of `ms / 5` milliseconds each, after a warm-up of as long again. Thread CPU time rather than
 * wall time, so another process taking the core (the machine is shared) does not count; the
 * median shrugs off the rest.
 */
async function time(fn: (i: number) => unknown, ms: number): Promise<number> {
  const cpuNs = (): number => {
    const { user, system } = process.threadCpuUsage()
    return (user + system) * 1000
  }
  let i = 0
  const round = async (budgetNs: number): Promise<number> => {
    let iterations = 0
    let batch = 8
    const started = cpuNs()
    let elapsed = 0
    while (elapsed < budgetNs) {
      for (let b = 0; b < batch; b++) {
        const value = fn(i++)
        sink = value instanceof Promise ? await value : value
      }
      iterations += batch
      batch = Math.min(batch * 2, 1024)
      elapsed = cpuNs() - started
    }
    return elapsed / iterations
  }
  await round(ms * 1e6)
  const rounds: number[] = []
  for (let r = 0; r < 5; r++) rounds.push(await round((ms * 1e6) / 5))
  return rounds.sort((a, b) => a - b)[2]!
}

function mutated(result: MutationResult): KubeObject {
  if (isRefused(result)) throw new Error('the policy refused a benchmark object')
  return result.object
}

type Phase = [string, (i: number) => unknown]

/** The phases of one scenario beyond parse, envelope and encode, over the parsed variants. */
async function policyPhases(
  scenario: Scenario,
  requests: readonly AdmissionRequest[],
  view: MemoryView,
): Promise<Phase[]> {
  const objects = requests.map((r) => r.object as KubeObject)
  const at = <T>(list: readonly T[], i: number): T => list[i % list.length]!
  // Admission copies the whole object and diffs the whole result (src/admission/mutating.ts).
  const copy = (i: number) => cloneJson(at(objects, i))
  if (scenario.id === 's1' || scenario.id === 's2') {
    const facts = await gatherProxyDeploymentFacts(requests[0]!, view, OTHER_WRITER)
    const results = objects.map((_, i) => mutated(mutateProxyDeployment(copy(i), facts)))
    const patches = objects.map((o, i) => diff(o, results[i]!))
    return [
      ['gather', (i) => gatherProxyDeploymentFacts(at(requests, i), view, OTHER_WRITER)],
      ['copy (cloneJson)', copy],
      ['policy (incl. copy)', (i) => mutateProxyDeployment(copy(i), facts)],
      ['diff', (i) => diff(at(objects, i), at(results, i))],
      ['respond', (i) => patched(at(requests, i).uid, at(patches, i))],
    ]
  }
  if (scenario.id === 's4') {
    const results = objects.map((_, i) => mutated(mutateRunConfigMap(copy(i))))
    const patches = objects.map((o, i) => diff(o, results[i]!))
    return [
      ['copy (cloneJson)', copy],
      ['policy (incl. copy)', (i) => mutateRunConfigMap(copy(i))],
      ['diff', (i) => diff(at(objects, i), at(results, i))],
      ['respond', (i) => patched(at(requests, i).uid, at(patches, i))],
    ]
  }
  const input = (i: number) => ({
    operation: at(requests, i).operation,
    object: at(objects, i),
    oldObject: undefined,
  })
  return [
    [
      'policy',
      (i) => {
        const given = input(i)
        return ratchet(given, (object) => validateWebhookConfig({ ...given, object }))
      },
    ],
    ['respond', (i) => allowed(at(requests, i).uid)],
  ]
}

/** Times every scenario; `ms` is the CPU time spent measuring each phase. */
export async function runMicro(servers: number, ms: number): Promise<MicroResult[]> {
  const view = new MemoryView(populationObjects(servers))
  const admission = createAdmission({ view })
  const scenarios = await buildScenarios()
  const results: MicroResult[] = []
  for (const scenario of scenarios) {
    const { webhook } = scenario
    const bodies = Array.from({ length: VARIANTS }, (_, i) =>
      withToken(scenario.bodies[i % scenario.bodies.length]!, i),
    )
    const parsed: unknown[] = bodies.map((body) => JSON.parse(body))
    const requests = parsed.map((body) => {
      const decoded = decodeReview(body)
      if (!decoded.ok) throw new Error(decoded.message)
      return decoded.review.request
    })
    const answers: unknown[] = []
    for (const body of parsed) {
      const outcome = await admission.review(body, webhook)
      if (!outcome.ok) throw new Error(outcome.message)
      const problem = scenario.check(outcome.review)
      if (problem !== undefined) throw new Error(`${scenario.id}: ${problem}`)
      answers.push(outcome.review)
    }
    const at = <T>(list: readonly T[], i: number): T => list[i % list.length]!
    globalThis.gc?.()

    const total = await time(async (i) => {
      const answer = await admission.review(JSON.parse(at(bodies, i)), webhook)
      return answer.ok ? JSON.stringify(answer.review) : answer.message
    }, ms)
    const timed: [string, number][] = [
      ['parse (JSON.parse)', await time((i) => JSON.parse(at(bodies, i)), ms)],
      [
        'review (admission.review)',
        await time((i) => admission.review(at(parsed, i), webhook), ms),
      ],
      ['  envelope (ajv)', await time((i) => decodeReview(at(parsed, i)), ms)],
    ]
    let accounted = timed[2]![1]
    for (const [name, fn] of await policyPhases(scenario, requests, view)) {
      const ns = await time(fn, ms)
      timed.push([`  ${name}`, ns])
      if (!name.startsWith('  ') && !name.startsWith('copy')) accounted += ns
    }
    timed.push(['  other (routing, promises)', Math.max(0, timed[1]![1] - accounted)])
    timed.push(['encode (JSON.stringify)', await time((i) => JSON.stringify(at(answers, i)), ms)])
    results.push({
      id: scenario.id,
      title: scenario.title,
      bytes: bodies[0]!.length,
      totalNs: total,
      phases: timed.map(([phase, ns]) => ({ phase, nsPerOp: ns, share: ns / total })),
    })
  }
  return results
}

if (process.send !== undefined) {
  const [servers, ms] = process.argv.slice(2).map(Number)
  process.on('disconnect', () => process.exit(0))
  setTimeout(() => process.exit(0), 10 * 60_000).unref()
  const results = await runMicro(servers ?? 10_000, ms ?? 300)
  process.send(results, () => process.exit(0))
}
