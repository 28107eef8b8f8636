/**
 * Provides real `kube-apiserver` and `etcd` binaries for the end-to-end suite, and on request
 * `kube-controller-manager`, built from the Go module proxy with the machine's Go and cached
 * outside the repository, keyed by the Kubernetes and Go versions. Run directly
 * (`node test/e2e/control-plane/binaries.ts`) to build all three ahead.
 *
 * None can be `go install`ed at a version: both root modules carry `replace` directives. So a
 * small wrapper module (`wrapper/kube`, `wrapper/etcd`) requires them instead; for Kubernetes it
 * also replaces every staging module that the release's go.mod pins at `v0.0.0` with the matching
 * published `v0.Y.Z`, read from that go.mod rather than hard-coded.
 */

import { execFile as execFileCallback, spawn } from 'node:child_process'
import { copyFile, mkdir, readFile, rename, stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const execFile = promisify(execFileCallback)

/** The Kubernetes release the suite runs against; `E2E_KUBE_VERSION` overrides it. */
export const DEFAULT_KUBE_VERSION = 'v1.37.2'

const wrapperDir = join(dirname(fileURLToPath(import.meta.url)), 'wrapper')

export interface ControlPlaneBinaries {
  readonly kubeVersion: string
  readonly etcdVersion: string
  readonly goVersion: string
  readonly kubeApiserver: string
  readonly etcd: string
  /** Seconds spent building; 0 when the cache already held both. */
  readonly buildSeconds: number
}

/** Why the suite cannot run here, or undefined when Go is available. */
export async function goUnavailableReason(): Promise<string | undefined> {
  try {
    await goVersion()
    return undefined
  } catch (error) {
    return `no usable Go toolchain on PATH (${(error as Error).message.split('\n')[0] ?? ''})`
  }
}

/** The binaries for `kubeVersion`, built once per Kubernetes and Go version. */
export async function ensureBinaries(
  kubeVersion = process.env['E2E_KUBE_VERSION'] ?? DEFAULT_KUBE_VERSION,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<ControlPlaneBinaries> {
  const cache = await kubeCache(kubeVersion)
  const { go, dir } = cache
  const etcd = join(dir, 'etcd')
  const etcdVersion = etcdVersionOf(cache.goMod)
  const started = Date.now()
  const kubeApiserver = await ensureKubeCommand(cache, 'kube-apiserver', log)
  let built = kubeApiserver.built
  if (!(await isFile(etcd))) {
    log(`e2e: building etcd ${etcdVersion} with ${go}…`)
    const work = await prepareWrapper('etcd', dir)
    await run('go', ['mod', 'edit', `-require=go.etcd.io/etcd/server/v3@${etcdVersion}`], work, log)
    await run('go', ['mod', 'tidy'], work, log)
    await run(
      'go',
      ['build', '-trimpath', '-o', `${etcd}.tmp`, 'go.etcd.io/etcd/server/v3'],
      work,
      log,
    )
    await rename(`${etcd}.tmp`, etcd)
    built = true
  }
  const buildSeconds = built ? Math.round((Date.now() - started) / 1000) : 0
  log(
    built
      ? `e2e: built kube-apiserver ${kubeVersion} and etcd ${etcdVersion} in ${buildSeconds}s (cached in ${dir})`
      : `e2e: using cached kube-apiserver ${kubeVersion} and etcd ${etcdVersion} from ${dir}`,
  )
  return {
    kubeVersion,
    etcdVersion,
    goVersion: go,
    kubeApiserver: kubeApiserver.path,
    etcd,
    buildSeconds,
  }
}

export interface ControllerManagerBinary {
  readonly kubeVersion: string
  readonly goVersion: string
  readonly kubeControllerManager: string
  /** Seconds spent building; 0 when the cache already held it. */
  readonly buildSeconds: number
}

/**
 * `kube-controller-manager` of `kubeVersion`, cached beside kube-apiserver. Apart from
 * `ensureBinaries` so that only the runs that start it pay for its build on a cold cache (about
 * 4.3 minutes on 2 cores once kube-apiserver is built, whose packages it mostly shares).
 */
export async function ensureControllerManager(
  kubeVersion = process.env['E2E_KUBE_VERSION'] ?? DEFAULT_KUBE_VERSION,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<ControllerManagerBinary> {
  const cache = await kubeCache(kubeVersion)
  const started = Date.now()
  const { path, built } = await ensureKubeCommand(cache, 'kube-controller-manager', log)
  const buildSeconds = built ? Math.round((Date.now() - started) / 1000) : 0
  log(
    built
      ? `e2e: built kube-controller-manager ${kubeVersion} in ${buildSeconds}s (cached in ${cache.dir})`
      : `e2e: using cached kube-controller-manager ${kubeVersion} from ${cache.dir}`,
  )
  return { kubeVersion, goVersion: cache.go, kubeControllerManager: path, buildSeconds }
}

/** The cache directory of one Kubernetes and Go version, and that Kubernetes release's go.mod. */
interface KubeCache {
  readonly kubeVersion: string
  readonly go: string
  readonly dir: string
  readonly goMod: string
}

async function kubeCache(kubeVersion: string): Promise<KubeCache> {
  const go = await goVersion()
  const dir = join(cacheRoot('control-plane'), `kubernetes-${kubeVersion}-${go}`)
  const goMod = await downloadGoMod('k8s.io/kubernetes', kubeVersion, dir)
  return { kubeVersion, go, dir, goMod }
}

/** The kube wrapper modules this process has prepared, by cache directory: each is tidied once. */
const kubeWrappers = new Map<string, Promise<string>>()

/**
 * `k8s.io/kubernetes/cmd/<command>` in the cache, built through the kube wrapper when missing
 * (into a temporary name, renamed once complete, so a killed build leaves no binary behind).
 */
async function ensureKubeCommand(
  cache: KubeCache,
  command: 'kube-apiserver' | 'kube-controller-manager',
  log: (line: string) => void,
): Promise<{ path: string; built: boolean }> {
  const { kubeVersion, go, dir } = cache
  const path = join(dir, command)
  if (await isFile(path)) return { path, built: false }
  log(`e2e: building ${command} ${kubeVersion} with ${go} (a cold build takes minutes)…`)
  // Both commands build in the same work directory: prepare (copy, edit, tidy) it once, and not
  // twice at the same time when both are asked for together.
  const prepared = kubeWrappers.get(dir) ?? prepareKubeWrapper(cache, log)
  kubeWrappers.set(dir, prepared)
  const work = await prepared.catch((error: unknown) => {
    kubeWrappers.delete(dir)
    throw error
  })
  await run(
    'go',
    [
      'build',
      '-trimpath',
      '-ldflags',
      versionLdflags(kubeVersion),
      '-o',
      `${path}.tmp`,
      `k8s.io/kubernetes/cmd/${command}`,
    ],
    work,
    log,
  )
  await rename(`${path}.tmp`, path)
  return { path, built: true }
}

async function prepareKubeWrapper(cache: KubeCache, log: (line: string) => void): Promise<string> {
  const work = await prepareWrapper('kube', cache.dir)
  const replaces = stagingReplaces(cache.goMod, cache.kubeVersion)
  await run(
    'go',
    ['mod', 'edit', `-require=k8s.io/kubernetes@${cache.kubeVersion}`, ...replaces],
    work,
    log,
  )
  await run('go', ['mod', 'tidy'], work, log)
  return work
}

/** `replace` edits pointing each staging module pinned at v0.0.0 at the published v0.Y.Z. */
export function stagingReplaces(goMod: string, kubeVersion: string): string[] {
  const staging = `v0.${kubeVersion.replace(/^v1\./, '')}`
  const modules = new Set<string>()
  for (const match of goMod.matchAll(/^\s*(k8s\.io\/[\w.-]+)\s+v0\.0\.0\s*$/gm)) {
    if (match[1] !== undefined) modules.add(match[1])
  }
  if (modules.size === 0)
    throw new Error(`k8s.io/kubernetes ${kubeVersion}: no staging modules in its go.mod`)
  return [...modules].sort().map((module) => `-replace=${module}=${module}@${staging}`)
}

/** The etcd release Kubernetes itself pins (its go.mod requires etcd's server libraries). */
export function etcdVersionOf(goMod: string): string {
  const version = /^\s*go\.etcd\.io\/etcd\/server\/v3\s+(v3\.[\w.-]+)/m.exec(goMod)?.[1]
  if (version === undefined)
    throw new Error('k8s.io/kubernetes go.mod does not pin go.etcd.io/etcd/server/v3')
  return version
}

/** The ldflags the Kubernetes build sets, so `/version` reports the release. */
export function versionLdflags(kubeVersion: string): string {
  const [major = '1', minor = '0'] = kubeVersion.replace(/^v/, '').split('.')
  const values = {
    gitVersion: kubeVersion,
    gitMajor: major,
    gitMinor: minor,
    gitTreeState: 'clean',
    gitCommit: '0000000000000000000000000000000000000000',
    buildDate: '1970-01-01T00:00:00Z',
  }
  const flags = ['-s', '-w']
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    for (const [key, value] of Object.entries(values)) flags.push(`-X ${pkg}.${key}=${value}`)
  }
  return flags.join(' ')
}

/** Where builds of `what` are cached: outside the repository, kept across clones and runs. */
export function cacheRoot(what: string): string {
  const explicit = process.env['MCP_ADMISSION_E2E_CACHE']
  if (explicit !== undefined && explicit !== '') return join(explicit, what)
  const xdg = process.env['XDG_CACHE_HOME']
  return join(
    xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache'),
    'mcp-admission',
    what,
  )
}

/** The machine's Go version (`go1.26.8`). */
export async function goVersion(): Promise<string> {
  const { stdout } = await execFile('go', ['env', 'GOVERSION'])
  return stdout.trim()
}

async function downloadGoMod(module: string, version: string, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true })
  const { stdout } = await execFile('go', ['mod', 'download', '-json', `${module}@${version}`], {
    cwd: dir,
    env: { ...process.env, GOFLAGS: '-mod=mod', GO111MODULE: 'on' },
    maxBuffer: 1 << 20,
  })
  const info = JSON.parse(stdout) as { GoMod?: string; Error?: string }
  if (info.GoMod === undefined)
    throw new Error(`go mod download ${module}@${version}: ${info.Error ?? 'no go.mod'}`)
  return readFile(info.GoMod, 'utf8')
}

async function prepareWrapper(name: 'kube' | 'etcd', cacheDir: string): Promise<string> {
  const work = join(cacheDir, `build-${name}`)
  await mkdir(work, { recursive: true })
  await copyFile(join(wrapperDir, name, 'go.mod'), join(work, 'go.mod'))
  return work
}

export async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile()
  } catch {
    return false
  }
}

/** Runs a build step with its output streamed, a heartbeat while it is quiet, failing with the command line. */
export function run(
  command: string,
  args: string[],
  cwd: string,
  log: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  log(`e2e: $ ${command} ${args.map((arg) => (arg.includes(' ') ? `'${arg}'` : arg)).join(' ')}`)
  const started = Date.now()
  // `go build` prints nothing while it compiles; say that it is still going.
  const heartbeat = setInterval(() => {
    log(
      `e2e: … ${command} ${args[0] ?? ''} still running (${Math.round((Date.now() - started) / 1000)} s)`,
    )
  }, 30_000)
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] })
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      if (code === 0) resolve()
      else
        reject(
          new Error(`${command} ${args[0] ?? ''} failed (${signal ?? `exit ${code}`}) in ${cwd}`),
        )
    })
  }).finally(() => {
    clearInterval(heartbeat)
  })
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const binaries = await ensureBinaries()
  const controllerManager = await ensureControllerManager(binaries.kubeVersion)
  process.stdout.write(`${JSON.stringify({ ...binaries, controllerManager }, null, 2)}\n`)
}
