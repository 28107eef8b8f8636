/**
 * cert-manager's own CRDs, as a release ships them: the Go module proxy serves the root module of
 * github.com/cert-manager/cert-manager, whose `deploy/crds` holds them. `go mod download` keeps it
 * in Go's module cache, keyed by version, outside the repository (issue 19 asks for the release's
 * CRDs in place of hand-kept stand-ins).
 */

import { execFile as execFileCallback } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const execFile = promisify(execFileCallback)

export const CERT_MANAGER_VERSION = 'v1.21.2'

/** The directory of the release's CRD manifests (one YAML file per CRD, and a README). */
export async function certManagerCrdDir(version = CERT_MANAGER_VERSION): Promise<string> {
  const module = `github.com/cert-manager/cert-manager@${version}`
  const { stdout } = await execFile('go', ['mod', 'download', '-json', module], {
    // Outside any module, so no go.mod of ours is consulted or changed.
    cwd: tmpdir(),
    env: { ...process.env, GO111MODULE: 'on' },
    maxBuffer: 1 << 20,
  })
  const info = JSON.parse(stdout) as { Dir?: string; Error?: string }
  if (info.Dir === undefined)
    throw new Error(`go mod download ${module}: ${info.Error ?? 'no directory'}`)
  const dir = join(info.Dir, 'deploy', 'crds')
  const files = (await readdir(dir)).filter((name) => name.endsWith('.yaml'))
  if (!files.includes('cert-manager.io_certificates.yaml'))
    throw new Error(`${dir} has no cert-manager.io_certificates.yaml: ${files.join(', ')}`)
  return dir
}
