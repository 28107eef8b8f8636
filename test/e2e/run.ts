/**
 * Runs the end-to-end suite against a real kube-apiserver and etcd: builds (or reuses) the
 * binaries, builds mcp-admission as it ships, then runs every `test/e2e/**\/*.test.ts` one file
 * at a time (each starts its own control plane). `node test/e2e/run.ts FILE…` runs only those.
 *
 * MCP_ADMISSION_E2E=required (CI) makes the suite mandatory; `skip` skips it; by default it runs
 * when Go is available and says why when it skips.
 */

import { spawn } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { delimiter, dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  ensureBinaries,
  ensureControllerManager,
  goUnavailableReason,
} from './control-plane/binaries.ts'
import { ensureCertManagerControllers } from './harness/cert-manager.ts'
import { ensureHelm } from './harness/helm.ts'
import { ensureOpenReportsCrds } from './harness/openreports.ts'
import { ensurePolicyReportCrds } from './harness/policyreports.ts'
import { ensurePrometheusTools, prometheusOperatorCrdDir } from './harness/prometheus.ts'
import { ensureUpstreamParity } from './harness/upstream-parity.ts'
import { ensureYamlParity } from './harness/yaml-parity.ts'
import { ensureImage } from './image/build.ts'
import { OPERATOR_RELEASES, ensureOperator } from './toolhive/releases.ts'

const repo = fileURLToPath(new URL('../../', import.meta.url))
const mode = process.env['MCP_ADMISSION_E2E'] ?? 'auto'

function log(line: string): void {
  process.stderr.write(`${line}\n`)
}

async function main(): Promise<number> {
  if (mode === 'skip') {
    log('e2e: SKIPPED (MCP_ADMISSION_E2E=skip)')
    return 0
  }
  const unavailable = await goUnavailableReason()
  if (unavailable !== undefined) {
    if (mode === 'required') {
      log(`e2e: FAILED: the suite is required but cannot run: ${unavailable}`)
      return 1
    }
    log(`e2e: SKIPPED the end-to-end suite: ${unavailable}. Install Go 1.25+ to run it.`)
    return 0
  }
  // The container image from the Dockerfile (buildah; test/e2e/image/), which the chart-pod and
  // image tests run and read. Built beside the Go builds below: it waits mostly on Debian's and
  // the npm registry's packages while they use the CPU.
  const imageBuild = ensureImage(log).then(
    (image) => ({ image }),
    (error: unknown) => ({ error }),
  )
  const binaries = await ensureBinaries()
  log(
    `e2e: Kubernetes ${binaries.kubeVersion}, etcd ${binaries.etcdVersion}, built with ${binaries.goVersion}; build took ${binaries.buildSeconds} s`,
  )
  // `node test/e2e/run.ts FILE…` runs only those files.
  const chosen = process.argv.slice(2)
  // kube-controller-manager, for the files that ask for controllers: built ahead for the whole
  // suite, so its build counts against no test's timeout. A run of chosen files leaves it to the
  // harness, which builds it only if one of them asks, so the others do not wait for it.
  const controllerManager =
    chosen.length === 0 ? await ensureControllerManager(binaries.kubeVersion, log) : undefined

  // The real ToolHive operator of each tested release, built (or reused) before any test starts.
  for (const release of OPERATOR_RELEASES) await ensureOperator(release, log)
  // A real helm for the chart test, and cert-manager's own controllers and cainjector
  // (test/e2e/cert-manager) for the cert-manager test, built (or reused) the same way.
  const helm = await ensureHelm(log)
  const certManager = await ensureCertManagerControllers(log)
  // The OpenReports CRDs from their Go module, downloaded once here rather than inside a test.
  await ensureOpenReportsCrds(log)
  // Kyverno's PolicyReport CRDs from its Go module, likewise (`audit -o policyreport`).
  await ensurePolicyReportCrds(log)
  // promtool and our PromQL selector lister, and the prometheus-operator CRDs, for the monitoring
  // tests (harness/prometheus.ts).
  const prometheus = await ensurePrometheusTools(log)
  await prometheusOperatorCrdDir(log)
  // kubectl's manifest reading (test/e2e/yaml-parity), for the YAML differential test.
  const yamlParity = await ensureYamlParity(log)
  // ToolHive's own composite-tool, URL and template checks at the newest release, for the
  // differential test of their ports (test/e2e/upstream-parity).
  const upstreamParity = await ensureUpstreamParity(log)
  // A Dockerfile that does not build fails the suite here, before any test.
  const built = await imageBuild
  if ('error' in built) {
    log(`e2e: FAILED: the image does not build: ${String(built.error)}`)
    return 1
  }
  const { image } = built
  log(`e2e: image ${image.id.slice(0, 12)} (${image.bases} bases) in ${image.seconds} s`)

  // The suite runs mcp-admission as it ships: dist/, built from the current sources.
  const tsc = join(repo, 'node_modules/typescript/bin/tsc')
  if ((await run(process.execPath, [tsc, '-p', 'tsconfig.build.json'])) !== 0) return 1

  const files =
    chosen.length > 0
      ? chosen
      : (await testFiles(join(repo, 'test/e2e'))).map((file) => relative(repo, file))
  const started = Date.now()
  const tap = join(repo, 'node_modules/.bin/tap')
  const code = await run(
    tap,
    ['--jobs=1', '--timeout=900', '--disable-coverage', '--exclude=node_modules/**', ...files],
    {
      E2E_KUBE_APISERVER: binaries.kubeApiserver,
      E2E_ETCD: binaries.etcd,
      E2E_KUBE_VERSION: binaries.kubeVersion,
      ...(controllerManager
        ? { E2E_KUBE_CONTROLLER_MANAGER: controllerManager.kubeControllerManager }
        : {}),
      E2E_HELM: helm,
      E2E_CERT_MANAGER: certManager,
      E2E_YAML_PARITY: yamlParity,
      E2E_UPSTREAM_PARITY: `${upstreamParity.release}=${upstreamParity.binary}`,
      E2E_IMAGE: image.id,
      E2E_PROMETHEUS_TOOLS: dirname(prometheus.promtool),
    },
  )
  log(
    `e2e: ${files.length} files against Kubernetes ${binaries.kubeVersion} in ${((Date.now() - started) / 1000).toFixed(0)} s: ${code === 0 ? 'passed' : 'FAILED'}`,
  )
  return code
}

async function testFiles(dir: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) found.push(...(await testFiles(path)))
    else if (entry.name.endsWith('.test.ts')) found.push(path)
  }
  return found.sort()
}

function run(
  command: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<number> {
  // tap starts test processes with the `node` on PATH: make it this one (Node 24), also when
  // the runner was started directly rather than through npm.
  const path = `${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}`
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: repo,
      stdio: 'inherit',
      env: { ...process.env, PATH: path, ...env },
    })
    child.once('error', (error) => {
      log(`e2e: cannot run ${command}: ${error.message}`)
      resolve(1)
    })
    child.once('exit', (code, signal) => {
      resolve(code ?? (signal ? 1 : 0))
    })
  })
}

process.exitCode = await main()
