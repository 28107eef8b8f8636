/**
 * A real `helm` for the chart tests, built from the Go module proxy with the machine's Go and
 * cached outside the repository like kube-apiserver (control-plane/binaries.ts). Run directly
 * (`node test/e2e/harness/helm.ts`) to build ahead.
 *
 * Helm 4's root module carries no `replace` directives, so `go install …/cmd/helm@version` works
 * as is, with GOBIN pointing into the cache; no wrapper module is needed.
 */

import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cacheRoot, goVersion, isFile, run } from '../control-plane/binaries.ts'

/** The Helm release the suite uses; `E2E_HELM_VERSION` overrides it (v4 only: see the module path). */
export const DEFAULT_HELM_VERSION = 'v4.3.1'

/** The path of a `helm` binary for `version`, built once per Helm and Go version. */
export async function ensureHelm(
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  version = process.env['E2E_HELM_VERSION'] ?? DEFAULT_HELM_VERSION,
): Promise<string> {
  const go = await goVersion()
  const dir = join(cacheRoot('helm'), `${version}-${go}`)
  const helm = join(dir, 'helm')
  if (await isFile(helm)) {
    log(`e2e: using cached helm ${version} from ${dir}`)
    return helm
  }
  log(`e2e: building helm ${version} with ${go}…`)
  const started = Date.now()
  // Install into a scratch GOBIN and move the binary in at the end: an interrupted build never
  // leaves a half-written `helm` that the next run would trust.
  const gobin = join(dir, 'gobin')
  await rm(gobin, { recursive: true, force: true })
  await mkdir(gobin, { recursive: true })
  await run(
    'go',
    [
      'install',
      '-trimpath',
      // Without the version ldflag `helm version` reports only "v4.3"; -s -w as Helm's Makefile.
      '-ldflags',
      `-s -w -X helm.sh/helm/v4/internal/version.version=${version}`,
      `helm.sh/helm/v4/cmd/helm@${version}`,
    ],
    dir,
    log,
    { ...process.env, GOBIN: gobin, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
  )
  await rename(join(gobin, 'helm'), helm)
  await rm(gobin, { recursive: true, force: true })
  log(
    `e2e: built helm ${version} in ${Math.round((Date.now() - started) / 1000)} s (cached in ${dir})`,
  )
  return helm
}

export interface HelmResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export type Helm = (args: readonly string[], stdin?: string) => Promise<HelmResult>

/**
 * A `helm` runner bound to `kubeconfig`, with its cache, configuration and data in a throwaway
 * directory so no user's repositories or plugins leak in. Like kubectlFor, it never throws on a
 * non-zero exit: the tests assert on it. `close()` removes the directory.
 */
export async function helmFor(
  binary: string,
  kubeconfig?: string,
): Promise<Helm & { close(): Promise<void> }> {
  const home = await mkdtemp(join(tmpdir(), 'mcp-admission-helm-'))
  const env = {
    ...process.env,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
    KUBECONFIG: kubeconfig ?? join(home, 'no-cluster.kubeconfig'),
  }
  const helm: Helm = (args, stdin) =>
    new Promise((resolve, reject) => {
      const child = execFile(
        binary,
        [...args],
        { env, timeout: 120_000, maxBuffer: 16 << 20 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
          if (error && code === -1) reject(new Error(`helm: ${error.message}`))
          else resolve({ code, stdout, stderr })
        },
      )
      // Most commands never read standard input, and helm may exit before it is written: the
      // pipe's EPIPE is no failure of ours (the exit code and stderr above say what happened).
      child.stdin?.on('error', () => undefined)
      child.stdin?.end(stdin ?? '')
    })
  return Object.assign(helm, { close: () => rm(home, { recursive: true, force: true }) })
}

/** Like `helm`, but fails with its stderr when the exit code is not 0. */
export async function mustHelm(helm: Helm, args: readonly string[]): Promise<string> {
  const result = await helm(args)
  if (result.code !== 0)
    throw new Error(`helm ${args.join(' ')} failed (${result.code}): ${result.stderr}`)
  return result.stdout
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.stdout.write(`${await ensureHelm()}\n`)
}
