/**
 * The OpenReports CRDs (Report and ClusterReport, openreports.io/v1alpha1) as their project ships
 * them: the files of the Go module github.com/openreports/reports-api at a pinned version, from
 * the Go module proxy into Go's module cache (outside the repository), never a copy kept here.
 * test/e2e/run.ts fetches them ahead with the other tools; run directly
 * (`node test/e2e/harness/openreports.ts`) to fetch and print their directory.
 */

import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { goModule } from './go-build.ts'

export const OPENREPORTS_VERSION = 'v0.2.1'
const MODULE = 'github.com/openreports/reports-api'
const CRD_FILES = ['openreports.io_clusterreports.yaml', 'openreports.io_reports.yaml']

/**
 * The module's CRD directory (`config/crd`, one file per CRD), downloaded once per version; for
 * `env.installCrds(dir)`.
 */
export async function ensureOpenReportsCrds(
  log: (line: string) => void = () => undefined,
  version = OPENREPORTS_VERSION,
): Promise<string> {
  const module = `${MODULE}@${version}`
  const dir = join((await goModule(MODULE, version)).dir, 'config', 'crd')
  const found: string[] = await readdir(dir).catch(() => [])
  const missing = CRD_FILES.filter((name) => !found.includes(name))
  if (missing.length > 0) throw new Error(`${module}: ${dir} has no ${missing.join(', ')}`)
  log(`e2e: OpenReports CRDs ${version} from ${dir}`)
  return dir
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.stdout.write(`${await ensureOpenReportsCrds()}\n`)
}
