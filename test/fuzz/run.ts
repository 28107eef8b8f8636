/**
 * `npm run fuzz`: the properties of the bounded fuzz tests, run for FUZZ_SECONDS (default 60)
 * with a random seed (FUZZ_SEED to replay one). Prints the seed first, each failure with its
 * seed, path and counterexample, and last `fuzz: N inputs in S s, F failures (seed X)`. Exits 0
 * when there are no failures, 1 otherwise.
 */

import { randomInt } from 'node:crypto'
import { CRD_PROPERTIES } from './crd-properties.ts'
import { HTTP_PROPERTIES, closeFuzzApp, watchProcess } from './http-properties.ts'
import { POLICY_PROPERTIES } from './policy-properties.ts'
import { runProperty } from './property.ts'

const seconds = Number(process.env['FUZZ_SECONDS'] ?? '60')
if (!Number.isFinite(seconds) || seconds <= 0) {
  console.error(`FUZZ_SECONDS must be a positive number of seconds, not ${String(seconds)}`)
  process.exit(2)
}
const seedText = process.env['FUZZ_SEED']
const seed = seedText === undefined ? randomInt(0, 2 ** 31 - 1) : Number(seedText)
if (!Number.isSafeInteger(seed)) {
  console.error(`FUZZ_SEED must be an integer, not ${String(seedText)}`)
  process.exit(2)
}

const properties = [...HTTP_PROPERTIES, ...POLICY_PROPERTIES, ...CRD_PROPERTIES]
console.log(
  `fuzz: seed ${seed}, ${seconds} s, ${properties.length} properties (replay: FUZZ_SEED=${seed})`,
)

const watch = watchProcess()
const started = performance.now()
const deadline = started + seconds * 1000
let inputs = 0
let failures = 0
const failed = new Set<string>()

for (let round = 0; performance.now() < deadline; round++) {
  for (const [index, fuzz] of properties.entries()) {
    const remaining = deadline - performance.now()
    if (remaining <= 0) break
    // A failing property is reported once; the others keep running.
    if (failed.has(fuzz.name)) continue
    const runSeed = (seed + round * 1_000_003 + index * 7_919) % 2 ** 31
    const run = await runProperty(fuzz, {
      seed: runSeed,
      numRuns: fuzz.runs,
      timeLimitMs: remaining,
    })
    inputs += run.inputs
    if (run.failure !== undefined) {
      failures++
      failed.add(fuzz.name)
      console.log(`FAIL (fuzz seed ${seed}, round ${round}): ${run.failure}`)
    }
  }
}

watch.stop()
await closeFuzzApp()
for (const event of watch.events) {
  failures++
  console.log(`FAIL (fuzz seed ${seed}): ${event}`)
}
const elapsed = (performance.now() - started) / 1000
console.log(
  `fuzz: ${inputs} inputs in ${elapsed.toFixed(1)} s, ${failures} failures (seed ${seed})`,
)
process.exitCode = failures > 0 ? 1 : 0
