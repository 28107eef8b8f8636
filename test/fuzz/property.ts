/** The shape every fuzz property shares, so the bounded tests and `npm run fuzz` run the same ones. */

import fc from 'fast-check'

export interface FuzzProperty {
  readonly name: string
  /** Inputs per run in `npm test` (fixed seed); `npm run fuzz` runs as many as time allows. */
  readonly runs: number
  /** A fresh property (sync or async). */
  readonly property: () => fc.IRawProperty<any>
}

/** Fixed seed of the bounded runs in `npm test`, so a failure there reproduces exactly. */
export const TEST_SEED = 20261123

export interface PropertyRun {
  /** Inputs tried (shrinking not counted). */
  readonly inputs: number
  /** The failure report (seed, path, counterexample, error), when the property failed. */
  readonly failure?: string
}

/** Runs one property with a seed; a failure comes back as a bounded, printable report. */
export async function runProperty(
  fuzz: FuzzProperty,
  options: { seed: number; numRuns: number; timeLimitMs?: number },
): Promise<PropertyRun> {
  const details = await fc.check(fuzz.property(), {
    seed: options.seed,
    numRuns: options.numRuns,
    ...(options.timeLimitMs === undefined
      ? {}
      : { plugins: [fc.interruptAfterTimeLimit(options.timeLimitMs)] }),
  })
  if (!details.failed) return { inputs: details.numRuns }
  const counterexample = bounded(fc.stringify(details.counterexample), 4000)
  const error = bounded(describeError(details.errorInstance), 4000)
  return {
    inputs: details.numRuns,
    failure:
      `${fuzz.name}: failed after ${details.numRuns} inputs (seed ${details.seed}, ` +
      `path "${String(details.counterexamplePath)}", ${details.numShrinks} shrinks)\n` +
      `  counterexample: ${counterexample}\n  error: ${error}`,
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`
  return String(error)
}

function bounded(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text
}
