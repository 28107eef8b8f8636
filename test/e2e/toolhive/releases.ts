/**
 * The real ToolHive operator for the end-to-end suite: `thv-operator` built from the Go module
 * proxy at pinned releases, cached outside the repository keyed by release, Go version and (for a
 * release built with replacements) a short hash of its replace lines and stand-in sources, with
 * the release's own CRDs and examples read from the same module. Run directly
 * (`node test/e2e/toolhive/releases.ts`) to build ahead.
 *
 * `E2E_TOOLHIVE_RELEASES` (comma-separated, e.g. `v0.55.0,v0.63.0`) overrides OPERATOR_RELEASES
 * for a local run: test/e2e/run.ts and this file then build (or reuse) those releases ahead. The
 * suite files operator-v0.63.test.ts and operator-v0.33.test.ts each run beside their own release;
 * a one-line file calling `operatorSuite(t, 'vX.Y.Z')` runs it beside any other. A release that
 * needs a module the proxy refuses gets an entry in RELEASE_BUILDS first.
 *
 * The build goes through a small wrapper module that requires the release and carries the
 * release's own go.sum, so its dependencies are verified against the hashes upstream recorded.
 * The rest: the release module itself is not in its own go.sum, so Go checks it against the
 * checksum database (sum.golang.org, which Go reaches through the module proxy); a `replace` to
 * another served version brings that version's hashes from RELEASE_BUILDS (taken from
 * sum.golang.org when the entry was written) into the wrapper's go.sum, so Go verifies it without
 * the checksum database; a local stand-in is a directory of this repository, which Go does not
 * hash — the cache key covers its sources instead. `GOTOOLCHAIN=auto` fetches the Go version a
 * release asks for from the module proxy (v0.63.0 asks for Go 1.27). `ensureReleaseBuild` builds
 * any command against a release this way: the operator, and the upstream differential test's
 * checker (a main package of ours importing the release's packages).
 */

import { execFile as execFileCallback } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { cacheRoot, goVersion, isFile, run } from '../control-plane/binaries.ts'

const execFile = promisify(execFileCallback)
const MODULE = 'github.com/stacklok/toolhive'
const here = dirname(fileURLToPath(import.meta.url))

/**
 * The releases the suite runs beside: the newest the Go module proxy serves (v0.63.0 on
 * 2026-11-25, built with the replacements in RELEASE_BUILDS) and the oldest (v0.33.0), per
 * docs/e2e.md#beside-the-toolhive-operator. Both already write StdioReplicaCapped,
 * SessionStorageWarning, Valid and configHash themselves and hold referenced MCPWebhookConfigs with
 * a finalizer; no servable release predates that. The reconciler's other branch (stamping what no
 * operator writes) is proven in namespaces the operator does not watch. `E2E_TOOLHIVE_RELEASES`
 * overrides the list (see the file header).
 */
export const DEFAULT_OPERATOR_RELEASES: readonly string[] = ['v0.63.0', 'v0.33.0']
export const OPERATOR_RELEASES: readonly string[] = releasesFrom(
  process.env['E2E_TOOLHIVE_RELEASES'],
)

/** `E2E_TOOLHIVE_RELEASES` parsed (`v0.55.0, v0.63.0`), or the default list when unset or empty. */
export function releasesFrom(value: string | undefined): readonly string[] {
  const releases = (value ?? '')
    .split(',')
    .map((release) => release.trim())
    .filter((release) => release !== '')
  if (releases.length === 0) return DEFAULT_OPERATOR_RELEASES
  const invalid = releases.filter((release) => !/^v\d+\.\d+\.\d+$/.test(release))
  if (invalid.length > 0)
    throw new Error(
      `E2E_TOOLHIVE_RELEASES: ${invalid.join(', ')} is not a release tag (expected vX.Y.Z, comma-separated)`,
    )
  return releases
}

/** A module version the proxy refuses, replaced with the nearest version it serves. */
export interface VersionReplace {
  readonly module: string
  /** The version the release requires, which the proxy refuses. */
  readonly refused: string
  /** The version used instead, which the proxy serves. */
  readonly version: string
  /** go.sum hashes of `version` (its zip, its go.mod), from sum.golang.org. */
  readonly sum: string
  readonly goModSum: string
  readonly reason: string
}

/** A module the proxy serves at no version, replaced with a directory of this repository. */
export interface StandIn {
  readonly module: string
  /** The directory, relative to this file. */
  readonly dir: string
  readonly reason: string
}

export interface ReleaseBuild {
  readonly replaces: readonly VersionReplace[]
  readonly standIns: readonly StandIn[]
}

/**
 * How a release that does not build as published is built here: every `replace` line, with why.
 * A release not listed builds as published. The proxy answers 403 "This module version is not
 * available" for each refused version; `go mod download -json MODULE@VERSION` says whether a
 * version is served (`go list -m -versions MODULE` lists them where the proxy answers the list).
 */
export const RELEASE_BUILDS: Readonly<Record<string, ReleaseBuild>> = {
  'v0.63.0': {
    replaces: [
      {
        module: 'github.com/getsentry/sentry-go/otel/otlp',
        refused: 'v0.50.0',
        version: 'v0.49.0',
        sum: 'h1:gZgeRBzBQ2utfwno7MqSGXXRLdxX+48pBjp1WDAcb00=',
        goModSum: 'h1:xq+r0C0F5T6JZwNOud7168JZLXXfPJ6jT0Y0vkrhAds=',
        reason: 'v0.49.0 is served (the Sentry OTel exporter; the operator never enables Sentry)',
      },
      {
        module: 'github.com/jwx-go/jwkfetch/v4',
        refused: 'v4.0.4',
        version: 'v4.0.3',
        sum: 'h1:cS3XKfduw8bZt38R2aVG7PZ24/MFu19FPvfr63kLkuk=',
        goModSum: 'h1:EM2zf7eOLMdU+18h1FHayvWbs0ZuzNPA0aeQ29NoYjI=',
        reason: 'v4.0.3, a patch older, is served (JWKS fetching for token validation)',
      },
      {
        module: 'golang.org/x/exp/jsonrpc2',
        refused: 'v0.0.0-20261014143641-f0251eb4aa3e',
        version: 'v0.0.0-20260709172345-9ea1abe57597',
        sum: 'h1:V+5CIAxiRMu5nXZ2eLlo3mQXPm4zrvbZI6ddjylxYLs=',
        goModSum: 'h1:it3Sp7J2OmdyHxl5q3GMU4d2QZsFQGglbij9kqQVVaI=',
        reason: 'the 2026-07-09 commit is served (MCP JSON-RPC messages in the proxies)',
      },
      {
        module: 'golang.org/x/exp/event',
        refused: 'v0.0.0-20261009195045-ca0d7ba23607',
        version: 'v0.0.0-20260611194520-c48552f49976',
        sum: 'h1:aMc3mP8qjwSEdljznT5CYeyvpoFP7e3VCNqZZwUf3F0=',
        goModSum: 'h1:cV3mj8TmLcC/Zki//yCMYw/nSC1BpHamZNkMSU7lgPw=',
        reason: 'the 2026-06-11 commit is served (x/exp/jsonrpc2 imports it)',
      },
    ],
    standIns: [
      {
        module: 'github.com/stacklok/toolhive-core/redisconn',
        dir: 'redisconn-standin',
        reason:
          'served at no version: a stand-in on go-redis; the operator links it, never opens Redis here',
      },
    ],
  },
}

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
  const built = await ensureReleaseBuild(release, OPERATOR_PROGRAM, log)
  return {
    release,
    operator: built.binary,
    crds: join(built.source, 'deploy/charts/operator-crds/files/crds'),
    examples: join(built.source, 'examples/operator'),
    buildSeconds: built.buildSeconds,
  }
}

/** A command built against a release through the wrapper module (its replacements, its go.sum). */
export interface ReleaseProgram {
  /** The cache folder, `~/.cache/mcp-admission/<what>`. */
  readonly what: string
  /** What the log calls it. */
  readonly title: string
  /** The wrapper module's path. */
  readonly wrapperModule: string
  /** The binary's file name. */
  readonly binary: string
  /** The package `go build` builds: one of the release's, or `.` for `sources`. */
  readonly target: string
  /**
   * A folder of this repository whose .go files (one main package importing the release's
   * packages) are copied into the wrapper module; their hash is part of the cache key, so a
   * changed program never reuses a stale build, and builds of earlier sources are removed.
   */
  readonly sources?: string
}

const OPERATOR_PROGRAM: ReleaseProgram = {
  what: 'toolhive-operator',
  title: 'thv-operator',
  wrapperModule: 'mcp-admission-e2e/thv-operator',
  binary: 'thv-operator',
  target: `${MODULE}/cmd/thv-operator`,
}

export interface ReleaseBinary {
  readonly binary: string
  /** The release's source in the module cache (read-only). */
  readonly source: string
  /** 0 when the binary was cached. */
  readonly buildSeconds: number
}

/**
 * `program` built against `release` once, cached in
 * `<what>/<release>-<go version>[-<hash of its replacements>][-<hash of its sources>]`.
 */
export async function ensureReleaseBuild(
  release: string,
  program: ReleaseProgram,
  log: (line: string) => void,
): Promise<ReleaseBinary> {
  const go = await goVersion()
  const build = RELEASE_BUILDS[release] ?? { replaces: [], standIns: [] }
  const keys = [await buildKey(build)]
  if (program.sources !== undefined) keys.push(await sourcesKey(program.sources))
  const root = cacheRoot(program.what)
  const prefix = `${release}-${go}`
  const dir = join(root, [prefix, ...keys.filter((key) => key !== '')].join('-'))
  const binary = join(dir, program.binary)
  await mkdir(dir, { recursive: true })
  const source = await downloadModule(release, dir)
  if (await isFile(binary)) {
    log(`e2e: using cached ${program.title} ${release} from ${dir}`)
    return { binary, source, buildSeconds: 0 }
  }
  const started = Date.now()
  log(`e2e: building ${program.title} ${release} (a cold build takes several minutes)…`)
  const work = join(dir, 'build')
  await mkdir(work, { recursive: true })
  const upstreamGo = /^go\s+(\S+)/m.exec(await readFile(join(source, 'go.mod'), 'utf8'))?.[1]
  await writeFile(
    join(work, 'go.mod'),
    wrapperGoMod(release, upstreamGo ?? '1.26', build, program.wrapperModule),
  )
  // A go.sum copied from the read-only module cache by an earlier build is read-only too.
  await rm(join(work, 'go.sum'), { force: true })
  await writeFile(join(work, 'go.sum'), await wrapperGoSum(join(source, 'go.sum'), build))
  if (program.sources !== undefined)
    for (const name of await goSources(program.sources))
      await copyFile(join(program.sources, name), join(work, name))
  await run(
    'go',
    ['build', '-trimpath', '-ldflags=-s -w', '-o', `${binary}.tmp`, program.target],
    work,
    log,
    { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'auto' },
  ).catch((error: unknown) => {
    throw new Error(
      `${(error as Error).message}; if the module proxy refused a module version above ("not available"), add a replace for ${release} to RELEASE_BUILDS in test/e2e/toolhive/releases.ts`,
    )
  })
  await rename(`${binary}.tmp`, binary)
  const buildSeconds = Math.round((Date.now() - started) / 1000)
  log(`e2e: built ${program.title} ${release} in ${buildSeconds} s (cached in ${dir})`)
  // Builds of a program's earlier sources are dead weight (the operator's folders differ only
  // by their replacements, which an older checkout may still use).
  if (program.sources !== undefined)
    for (const stale of await readdir(root))
      if (stale.startsWith(`${prefix}-`) && join(root, stale) !== dir)
        await rm(join(root, stale), { recursive: true, force: true })
  return { binary, source, buildSeconds }
}

/** The .go files of a program's folder, sorted. */
async function goSources(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.go')).sort()
}

/** A short hash of a program's .go files. */
async function sourcesKey(dir: string): Promise<string> {
  const hash = createHash('sha256')
  for (const name of await goSources(dir))
    hash.update(`\0${name}\0`).update(await readFile(join(dir, name)))
  return hash.digest('hex').slice(0, 12)
}

/**
 * The release's CRDs and examples only, from the module cache (downloaded once from the module
 * proxy), without building the operator: for tests that need the API server to serve the
 * release's CRDs but no operator running.
 */
export async function releaseSources(
  release: string,
): Promise<Pick<OperatorReleaseFiles, 'release' | 'crds' | 'examples'>> {
  const dir = cacheRoot('toolhive-operator')
  await mkdir(dir, { recursive: true })
  const source = await downloadModule(release, dir)
  return {
    release,
    crds: join(source, 'deploy/charts/operator-crds/files/crds'),
    examples: join(source, 'examples/operator'),
  }
}

/** The wrapper module: requires the release, with the release's replacements. */
export function wrapperGoMod(
  release: string,
  go: string,
  build: ReleaseBuild,
  module = 'mcp-admission-e2e/thv-operator',
): string {
  const lines = [`module ${module}`, '', `go ${go}`, '', `require ${MODULE} ${release}`]
  if (build.replaces.length > 0 || build.standIns.length > 0) lines.push('')
  for (const replace of build.replaces) {
    lines.push(`// ${replace.module} ${replace.refused} is refused by the proxy; ${replace.reason}`)
    lines.push(`replace ${replace.module} => ${replace.module} ${replace.version}`)
  }
  for (const standIn of build.standIns) {
    lines.push(`// ${standIn.module}: ${standIn.reason}`)
    lines.push(`replace ${standIn.module} => ${join(here, standIn.dir)}`)
  }
  return `${lines.join('\n')}\n`
}

/** The release's go.sum plus the recorded hashes of every replacement version. */
async function wrapperGoSum(releaseGoSum: string, build: ReleaseBuild): Promise<string> {
  let text = await readFile(releaseGoSum, 'utf8')
  if (!text.endsWith('\n')) text += '\n'
  for (const replace of build.replaces) {
    text += `${replace.module} ${replace.version} ${replace.sum}\n`
    text += `${replace.module} ${replace.version}/go.mod ${replace.goModSum}\n`
  }
  return text
}

/**
 * A short hash of the release's replacements and every stand-in's sources, so a binary built with
 * other replacements or an older stand-in is never reused; empty for a release built as published.
 */
export async function buildKey(build: ReleaseBuild): Promise<string> {
  if (build.replaces.length === 0 && build.standIns.length === 0) return ''
  // What reaches the wrapper's go.mod and go.sum, not the reasons.
  const hash = createHash('sha256').update(
    JSON.stringify([
      build.replaces.map(({ module, version, sum, goModSum }) => [module, version, sum, goModSum]),
      build.standIns.map(({ module, dir }) => [module, dir]),
    ]),
  )
  for (const standIn of build.standIns) {
    const root = join(here, standIn.dir)
    for (const file of (await readdir(root, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name))
      .sort()) {
      hash.update(`\0${file.slice(root.length)}\0`).update(await readFile(file))
    }
  }
  return hash.digest('hex').slice(0, 12)
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
