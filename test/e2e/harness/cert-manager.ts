/**
 * Real cert-manager for the end-to-end suite. Its CRDs come as a release ships them: the Go module
 * proxy serves the root module of github.com/cert-manager/cert-manager, whose `deploy/crds` holds
 * them (issue 19 asks for the release's CRDs in place of hand-kept stand-ins). Its controllers
 * come from the same module: its command modules are not on the proxy, so a small wrapper command
 * (`test/e2e/cert-manager`) wires up the controllers from `pkg/controller` and cainjector, built
 * with the machine's Go and cached outside the repository like kube-apiserver.
 */

import { mkdir, readdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../helpers/ports.ts'
import type { ControlPlane } from './control-plane.ts'
import { ensureWrapperBuild, goModule } from './go-build.ts'
import { startProcess, waitFor } from './processes.ts'
import type { Managed } from './processes.ts'

export const CERT_MANAGER_VERSION = 'v1.21.2'
const MODULE = 'github.com/cert-manager/cert-manager'
const wrapperDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'cert-manager')
const BINARY = 'cert-manager-e2e'

/** The directory of the release's CRD manifests (one YAML file per CRD, and a README). */
export async function certManagerCrdDir(version = CERT_MANAGER_VERSION): Promise<string> {
  const dir = join((await goModule(MODULE, version)).dir, 'deploy', 'crds')
  const files = (await readdir(dir)).filter((name) => name.endsWith('.yaml'))
  if (!files.includes('cert-manager.io_certificates.yaml'))
    throw new Error(`${dir} has no cert-manager.io_certificates.yaml: ${files.join(', ')}`)
  return dir
}

/**
 * The wrapper command's binary, built once per cert-manager release, Go version and wrapper
 * source (harness/go-build.ts). Requiring the module is enough while its go.mod replaces nothing
 * (true of v1.21); the build refuses a release that does.
 */
export async function ensureCertManagerControllers(
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  version = CERT_MANAGER_VERSION,
): Promise<string> {
  const dir = await ensureWrapperBuild(
    {
      what: 'cert-manager',
      title: 'cert-manager controllers',
      wrapperDir,
      module: MODULE,
      version,
      binaries: [BINARY],
      tidy: true,
      build: (out) => [
        '-trimpath',
        '-ldflags',
        // The version cert-manager reports in its User-Agent and logs.
        `-s -w -X ${MODULE}/pkg/util.AppVersion=${version}`,
        '-o',
        `${out}${BINARY}`,
        '.',
      ],
    },
    log,
  )
  return join(dir, BINARY)
}

/** The binary `test/e2e/run.ts` built (E2E_CERT_MANAGER), or one built now. */
export async function certManagerBinary(): Promise<string> {
  const fromRunner = process.env['E2E_CERT_MANAGER']
  return fromRunner !== undefined && fromRunner !== '' ? fromRunner : ensureCertManagerControllers()
}

/**
 * Starts cert-manager's controllers and cainjector against `plane` as cluster admin (its chart
 * grants it broad cluster-wide rights) and waits until their caches have synced. cert-manager's
 * CRDs must be installed first.
 */
export async function startCertManager(
  plane: ControlPlane,
  binary: string,
  options: { readonly namespace?: string } = {},
): Promise<Managed> {
  const port = await freePort()
  const proc = startProcess(
    'cert-manager',
    binary,
    [
      `--kubeconfig=${plane.kubeconfig}`,
      `--ready-address=127.0.0.1:${port}`,
      ...(options.namespace === undefined ? [] : [`--namespace=${options.namespace}`]),
      '-v=2', // cert-manager's info level: each issuance step is in the log
    ],
    { logFile: join(plane.dir, 'cert-manager.log') },
  )
  await waitFor(
    'cert-manager /readyz',
    async () =>
      (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined,
    { timeoutMs: 60_000, process: proc, intervalMs: 250 },
  )
  return proc
}

/**
 * Writes `files` into `dir` the way the kubelet projects a Secret volume (its AtomicWriter): the
 * files go into a fresh timestamped directory, a `..data` symlink is swapped to it with one
 * rename, and each file is a symlink through `..data`, so a reader never sees half a new pair.
 */
export async function projectSecretVolume(
  dir: string,
  files: Readonly<Record<string, string | Buffer>>,
): Promise<void> {
  await mkdir(dir, { recursive: true })
  const previous = await readlink(join(dir, '..data')).catch(() => undefined)
  const stamp = new Date().toISOString().replace(/[-:]/g, '_').replace('T', '_').replace('Z', '')
  const payload = `..${stamp}.${process.hrtime.bigint() % 1_000_000n}`
  await mkdir(join(dir, payload))
  for (const [name, content] of Object.entries(files))
    await writeFile(join(dir, payload, name), content, { mode: 0o644 })
  await symlink(payload, join(dir, '..data_tmp'))
  await rename(join(dir, '..data_tmp'), join(dir, '..data'))
  for (const name of Object.keys(files)) {
    await symlink(join('..data', name), join(dir, name)).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    })
  }
  if (previous !== undefined && previous !== payload)
    await rm(join(dir, previous), { recursive: true, force: true })
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.stdout.write(`${await ensureCertManagerControllers()}\n`)
}
