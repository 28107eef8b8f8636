/**
 * The two ways the e2e suite takes something from a Go module at a pinned version, shared by the
 * tools that need them (cert-manager, OpenReports, Prometheus): a module's files in Go's module
 * cache (CRDs as a release ships them, never a copy kept here), and commands built from a small
 * wrapper module of ours that requires the release, cached outside the repository like
 * kube-apiserver (control-plane/binaries.ts) and rebuilt only when the release, the Go version or
 * the wrapper's source changes.
 */

import { execFile as execFileCallback } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFile, mkdir, readFile, readdir, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { cacheRoot, goVersion, isFile, run } from '../control-plane/binaries.ts'

const execFile = promisify(execFileCallback)

/** `module@version` downloaded into Go's module cache (read-only): its directory and go.mod. */
export async function goModule(
  module: string,
  version: string,
): Promise<{ readonly dir: string; readonly goMod: string }> {
  const { stdout } = await execFile('go', ['mod', 'download', '-json', `${module}@${version}`], {
    // Outside any module or workspace, so no go.mod or go.work of ours is consulted or changed.
    cwd: tmpdir(),
    env: { ...process.env, GO111MODULE: 'on', GOFLAGS: '-mod=mod', GOWORK: 'off' },
    maxBuffer: 1 << 20,
    // On a failure Go still prints the JSON, its `Error` saying why (an unknown version, no proxy).
  }).catch((error: unknown) => ({ stdout: (error as { stdout?: string }).stdout ?? '' }))
  const info = JSON.parse(stdout || '{}') as { Dir?: string; GoMod?: string; Error?: string }
  if (info.Dir === undefined || info.GoMod === undefined)
    throw new Error(`go mod download ${module}@${version}: ${info.Error ?? 'no directory'}`)
  return { dir: info.Dir, goMod: info.GoMod }
}

export interface WrapperBuild {
  /** The cache folder (`~/.cache/mcp-admission/<what>`) and what the log calls the build. */
  readonly what: string
  readonly title: string
  /** The wrapper module's folder in the repository: its go.mod and .go files are copied. */
  readonly wrapperDir: string
  /** The release it requires, e.g. `github.com/prometheus/prometheus`. */
  readonly module: string
  readonly version: string
  /** The binaries `build` writes into the cache folder, by name. */
  readonly binaries: readonly string[]
  /** `go mod tidy` after the require (when the build needs go.sum entries for every tag). */
  readonly tidy: boolean
  /** The arguments of `go build` that write `binaries` into `out` (a folder ending in `/`). */
  readonly build: (out: string) => string[]
}

/**
 * The folder holding `binaries`, built once per release, Go version and wrapper source (a changed
 * wrapper must not reuse a stale build). A release whose go.mod replaces modules is refused: a
 * replace applies only in its own module, so requiring it would build something else.
 */
export async function ensureWrapperBuild(
  spec: WrapperBuild,
  log: (line: string) => void,
): Promise<string> {
  const go = await goVersion()
  const sources = (await readdir(spec.wrapperDir))
    .filter((name) => name === 'go.mod' || name.endsWith('.go'))
    .sort()
  const hash = createHash('sha256')
  for (const name of sources) hash.update(name).update(await readFile(join(spec.wrapperDir, name)))
  const root = cacheRoot(spec.what)
  const prefix = `${spec.version}-${go}-`
  const dir = join(root, `${prefix}${hash.digest('hex').slice(0, 12)}`)
  const present = await Promise.all(spec.binaries.map((name) => isFile(join(dir, name))))
  if (present.every(Boolean)) {
    log(`e2e: using cached ${spec.title} ${spec.version} from ${dir}`)
    return dir
  }
  log(`e2e: building ${spec.title} ${spec.version} with ${go} (a cold build takes minutes)…`)
  const started = Date.now()
  const { goMod } = await goModule(spec.module, spec.version)
  if (/^\s*replace\b/m.test(await readFile(goMod, 'utf8')))
    throw new Error(
      `${spec.module}@${spec.version} has replace directives: mirror them in the wrapper build`,
    )
  const work = join(dir, 'build')
  await rm(work, { recursive: true, force: true })
  await mkdir(work, { recursive: true })
  for (const name of sources) await copyFile(join(spec.wrapperDir, name), join(work, name))
  await run('go', ['mod', 'edit', `-require=${spec.module}@${spec.version}`], work, log)
  if (spec.tidy) await run('go', ['mod', 'tidy'], work, log)
  // Built into a scratch folder and moved in at the end: an interrupted build never leaves a
  // half-written binary that the next run would trust.
  const out = join(work, 'out')
  await mkdir(out, { recursive: true })
  await run('go', ['build', ...spec.build(`${out}/`)], work, log, {
    ...process.env,
    GOFLAGS: '-mod=mod',
    GOWORK: 'off',
  })
  for (const name of spec.binaries) await rename(join(out, name), join(dir, name))
  await rm(work, { recursive: true, force: true })
  // Builds of an earlier wrapper source for this release and Go are dead weight.
  for (const stale of await readdir(root)) {
    if (stale.startsWith(prefix) && join(root, stale) !== dir)
      await rm(join(root, stale), { recursive: true, force: true })
  }
  log(
    `e2e: built ${spec.title} ${spec.version} in ${Math.round((Date.now() - started) / 1000)} s (cached in ${dir})`,
  )
  return dir
}
