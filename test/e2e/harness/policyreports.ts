/**
 * The PolicyReport CRDs (PolicyReport and ClusterPolicyReport, wgpolicyk8s.io/v1alpha2) as Kyverno
 * ships them: `config/crds/policyreport` of the Go module github.com/kyverno/kyverno at a pinned
 * version, from the Go module proxy into Go's module cache (outside the repository; the module's
 * zip is about 11 MB, 77 MB unpacked), never a copy kept here. test/e2e/run.ts fetches them ahead
 * with the other tools; run directly (`node test/e2e/harness/policyreports.ts`) to fetch and print
 * their directory.
 */

import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { goModule } from './go-build.ts'

export const KYVERNO_VERSION = 'v1.19.1'
const MODULE = 'github.com/kyverno/kyverno'
const CRD_FILES = ['wgpolicyk8s.io_clusterpolicyreports.yaml', 'wgpolicyk8s.io_policyreports.yaml']

/** The module's PolicyReport CRD directory, downloaded once per version; for `env.installCrds(dir)`. */
export async function ensurePolicyReportCrds(
  log: (line: string) => void = () => undefined,
  version = KYVERNO_VERSION,
): Promise<string> {
  const dir = join((await goModule(MODULE, version)).dir, 'config', 'crds', 'policyreport')
  const found: string[] = await readdir(dir).catch(() => [])
  const missing = CRD_FILES.filter((name) => !found.includes(name))
  if (missing.length > 0)
    throw new Error(`${MODULE}@${version}: ${dir} has no ${missing.join(', ')}`)
  log(`e2e: PolicyReport CRDs (Kyverno ${version}) from ${dir}`)
  return dir
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.stdout.write(`${await ensurePolicyReportCrds()}\n`)
}
