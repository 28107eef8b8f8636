/**
 * The OpenReports CRDs (Report and ClusterReport, openreports.io/v1alpha1) as their project ships
 * them: the files of the Go module github.com/openreports/reports-api at a pinned version, from
 * the Go module proxy into Go's module cache (outside the repository), never a copy kept here.
 * test/e2e/run.ts fetches them ahead with the other tools; run directly
 * (`node test/e2e/harness/openreports.ts`) to fetch and print their directory.
 */

import { execFile as execFileCallback } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const execFile = promisify(execFileCallback)

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
  const { stdout } = await execFile('go', ['mod', 'download', '-json', module], {
    // Outside any module or workspace, so no go.mod or go.work of ours is consulted or changed.
    cwd: tmpdir(),
    env: { ...process.env, GO111MODULE: 'on', GOFLAGS: '-mod=mod', GOWORK: 'off' },
    maxBuffer: 1 << 20,
    // On a failure Go still prints the JSON, its `Error` saying why (an unknown version, no proxy).
  }).catch((error: unknown) => ({ stdout: (error as { stdout?: string }).stdout ?? '' }))
  const info = JSON.parse(stdout || '{}') as { Dir?: string; Error?: string }
  if (info.Dir === undefined)
    throw new Error(`go mod download ${module}: ${info.Error ?? 'no directory'}`)
  const dir = join(info.Dir, 'config', 'crd')
  const found: string[] = await readdir(dir).catch(() => [])
  const missing = CRD_FILES.filter((name) => !found.includes(name))
  if (missing.length > 0) throw new Error(`${module}: ${dir} has no ${missing.join(', ')}`)
  log(`e2e: OpenReports CRDs ${version} from ${dir}`)
  return dir
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.stdout.write(`${await ensureOpenReportsCrds()}\n`)
}
