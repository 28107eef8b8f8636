/**
 * The real ToolHive operator for the end-to-end suite: `thv-operator` built from the Go module
 * proxy at pinned releases, cached outside the repository keyed by release and Go version, with
 * the release's own CRDs and examples read from the same module. Run directly
 * (`node test/e2e/toolhive/releases.ts`) to build ahead.
 *
 * The build goes through a small wrapper module that requires the release and carries the
 * release's own go.sum, so every dependency is verified against the hashes upstream recorded
 * (the checksum database is not reachable from every machine); `GOTOOLCHAIN=auto` fetches the Go
 * version a release asks for from the module proxy.
 */

import { execFile as execFileCallback } from 'node:child_process'
import { copyFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { cacheRoot, goVersion, isFile, run } from '../control-plane/binaries.ts'

const execFile = promisify(execFileCallback)
const MODULE = 'github.com/stacklok/toolhive'

/**
 * The releases the suite runs beside. v0.47.0 is the newest whose dependencies the module proxy
 * serves in full: from v0.48.0 on, releases require module versions the proxy refuses ("This
 * module version is not available": ngrok/v2 v2.2.0, x/exp/event, and from v0.55 toolhive-core/
 * redisconn, jwx-go/jwkfetch, sentry-go/otel/otlp), so they cannot be built here. v0.33.0 is the
 * oldest release the proxy serves. Both already write StdioReplicaCapped, SessionStorageWarning,
 * Valid and configHash themselves and hold referenced MCPWebhookConfigs with a finalizer; no
 * servable release predates that. The reconciler's other branch (stamping what no operator
 * writes) is proven in namespaces the operator does not watch.
 */
export const OPERATOR_RELEASES = ['v0.47.0', 'v0.33.0'] as const
export type OperatorRelease = (typeof OPERATOR_RELEASES)[number]

export interface OperatorReleaseFiles {
  readonly release: string
  readonly operator: string
  /** The release's CRDs (`deploy/charts/operator-crds/files/crds`). */
  readonly crds: string
  /** The release's operator examples (`examples/operator`). */
  readonly examples: string
  readonly buildSeconds: number
}

/** The operator binary, CRDs and examples of `release`, building the binary once. */
export async function ensureOperator(
  release: string,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<OperatorReleaseFiles> {
  const go = await goVersion()
  const dir = join(cacheRoot('toolhive-operator'), `${release}-${go}`)
  const operator = join(dir, 'thv-operator')
  await mkdir(dir, { recursive: true })
  const source = await downloadModule(release, dir)
  const started = Date.now()
  let buildSeconds = 0
  if (!(await isFile(operator))) {
    log(`e2e: building thv-operator ${release} (a cold build takes several minutes)…`)
    const work = join(dir, 'build')
    await mkdir(work, { recursive: true })
    const upstreamGo = /^go\s+(\S+)/m.exec(await readFile(join(source, 'go.mod'), 'utf8'))?.[1]
    await writeFile(
      join(work, 'go.mod'),
      `module mcp-admission-e2e/thv-operator\n\ngo ${upstreamGo ?? '1.26'}\n\nrequire ${MODULE} ${release}\n`,
    )
    await copyFile(join(source, 'go.sum'), join(work, 'go.sum'))
    await run(
      'go',
      [
        'build',
        '-trimpath',
        '-ldflags=-s -w',
        '-o',
        `${operator}.tmp`,
        `${MODULE}/cmd/thv-operator`,
      ],
      work,
      log,
      { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'auto' },
    )
    await rename(`${operator}.tmp`, operator)
    buildSeconds = Math.round((Date.now() - started) / 1000)
    log(`e2e: built thv-operator ${release} in ${buildSeconds} s (cached in ${dir})`)
  } else {
    log(`e2e: using cached thv-operator ${release} from ${dir}`)
  }
  return {
    release,
    operator,
    crds: join(source, 'deploy/charts/operator-crds/files/crds'),
    examples: join(source, 'examples/operator'),
    buildSeconds,
  }
}

/** The release's source in the module cache (read-only, outside the repository). */
async function downloadModule(release: string, cwd: string): Promise<string> {
  const { stdout } = await execFile('go', ['mod', 'download', '-json', `${MODULE}@${release}`], {
    cwd,
    env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'auto' },
    maxBuffer: 1 << 20,
  }).catch((error: unknown) => ({ stdout: (error as { stdout?: string }).stdout ?? '' }))
  const info = JSON.parse(stdout || '{}') as { Dir?: string; Error?: string }
  // A release that needs a newer Go still downloads; `Error` then only says so.
  if (info.Dir === undefined || !(await isFile(join(info.Dir, 'go.mod'))))
    throw new Error(`go mod download ${MODULE}@${release}: ${info.Error ?? 'no source'}`)
  return info.Dir
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  for (const release of OPERATOR_RELEASES) {
    process.stdout.write(`${JSON.stringify(await ensureOperator(release), null, 2)}\n`)
  }
}
