/** The bounded run of fuzz properties in `npm test`: one tap test each, with the fixed seed. */

import t from 'tap'
import type { FuzzProperty } from './property.ts'
import { TEST_SEED, runProperty } from './property.ts'

/** One test per property; `held` names what every input must have given. */
export function testProperties(properties: readonly FuzzProperty[], held: string): void {
  for (const fuzz of properties) {
    t.test(fuzz.name, async (t) => {
      const started = performance.now()
      const run = await runProperty(fuzz, { seed: TEST_SEED, numRuns: fuzz.runs })
      t.comment(`${run.inputs} inputs in ${Math.round(performance.now() - started)} ms`)
      if (run.failure) t.fail(run.failure)
      else t.equal(run.inputs, fuzz.runs, held)
    })
  }
}
