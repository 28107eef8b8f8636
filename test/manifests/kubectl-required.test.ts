/**
 * manifests.test.ts skips without kubectl on a developer's machine, but must fail in CI, where a
 * skipped safety check would pass unseen. Runs it with a PATH that holds node and nothing else.
 */

import { spawnSync } from 'node:child_process'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const MANIFESTS_TEST = fileURLToPath(new URL('manifests.test.ts', import.meta.url))

/** Runs the manifests test with only `env` set (no inherited CI, TAP or PATH variables). */
function runWithoutKubectl(env: Record<string, string>) {
  const result = spawnSync(process.execPath, [MANIFESTS_TEST], {
    env: { HOME: process.env['HOME'] ?? '/tmp', PATH: dirname(process.execPath), ...env },
    encoding: 'utf8',
    timeout: 30_000,
  })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

t.test('without kubectl it fails when required by MCP_ADMISSION_E2E or CI', async (t) => {
  for (const env of [{ MCP_ADMISSION_E2E: 'required' }, { CI: 'true' }]) {
    const { status, output } = runWithoutKubectl(env)
    t.not(status, 0, `${JSON.stringify(env)}: exits non-zero`)
    t.match(output, /not ok .*kubectl is required/, `${JSON.stringify(env)}: says why`)
  }
})

t.test('without kubectl it skips on a developer machine', async (t) => {
  // An explicit MCP_ADMISSION_E2E other than `required` wins over CI, as for the e2e suite.
  for (const env of [{}, { CI: 'true', MCP_ADMISSION_E2E: 'skip' }]) {
    const { status, output } = runWithoutKubectl(env)
    t.equal(status, 0, `${JSON.stringify(env)}: exits 0`)
    t.match(output, /SKIPPED: kubectl is not installed/, `${JSON.stringify(env)}: says it skipped`)
  }
})
