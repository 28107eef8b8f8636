/**
 * The Prometheus side of the monitoring tests, from the Go module proxy like every other tool of
 * the suite, never a copy kept here:
 *  - `promtool` (check rules, test rules) of the Prometheus release pinned below, and
 *    `promql-selectors` (test/e2e/prometheus), our few lines over the same release's PromQL parser
 *    that name the metrics an expression selects: both built by `go build` in the wrapper module
 *    and cached under ~/.cache/mcp-admission/prometheus (harness/go-build.ts);
 *  - the prometheus-operator CRDs (ServiceMonitor, PrometheusRule, …), the files of its root
 *    module's `example/prometheus-operator-crd`, as its releases ship them.
 * test/e2e/run.ts builds and fetches them ahead; run directly
 * (`node test/e2e/harness/prometheus.ts`) to do the same and print where they are.
 */

import { execFile } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureWrapperBuild, goModule } from './go-build.ts'

/**
 * Prometheus 3.16.0: its Go module is tagged v0.316.0 (v0.3xx.y is 3.xx.y). Its go.mod replaces
 * nothing, so the wrapper needs no replace lines of its own.
 */
export const PROMETHEUS_MODULE_VERSION = 'v0.316.0'
const PROMETHEUS_VERSION = '3.16.0'
const PROMETHEUS_MODULE = 'github.com/prometheus/prometheus'

/**
 * The newest release of prometheus-operator's root module (the one holding the CRD files) that
 * the Go module proxy serves: only its API module (pkg/apis/monitoring) is served at later
 * versions, and that holds Go types, not CRDs. ServiceMonitor and PrometheusRule are
 * monitoring.coreos.com/v1 and have not changed incompatibly since.
 */
export const PROMETHEUS_OPERATOR_VERSION = 'v0.85.0'
const OPERATOR_MODULE = 'github.com/prometheus-operator/prometheus-operator'
const OPERATOR_CRDS = [
  'monitoring.coreos.com_prometheusrules.yaml',
  'monitoring.coreos.com_servicemonitors.yaml',
]

const wrapperDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'prometheus')

export interface PrometheusTools {
  readonly promtool: string
  readonly promqlSelectors: string
}

/** promtool and promql-selectors, built once per release, Go version and wrapper source. */
export async function ensurePrometheusTools(
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<PrometheusTools> {
  const dir = await ensureWrapperBuild(
    {
      what: 'prometheus',
      title: 'promtool and promql-selectors',
      wrapperDir,
      module: PROMETHEUS_MODULE,
      version: PROMETHEUS_MODULE_VERSION,
      binaries: ['promtool', 'promql-selectors'],
      // No tidy: it would resolve every service-discovery plugin whatever the tags, and the
      // build (GOFLAGS=-mod=mod) records the go.sum entries of what it compiles.
      tidy: false,
      build: (out) => [
        '-trimpath',
        // Without the service-discovery plugins (AWS, Azure, GCE, …), which rule checks and tests
        // never use (Prometheus's own build tag).
        '-tags',
        'remove_all_sd',
        '-ldflags',
        `-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_VERSION}`,
        '-o',
        out,
        `${PROMETHEUS_MODULE}/cmd/promtool`,
        '.',
      ],
    },
    log,
  )
  return { promtool: join(dir, 'promtool'), promqlSelectors: join(dir, 'promql-selectors') }
}

/** The tools `test/e2e/run.ts` built (E2E_PROMETHEUS_TOOLS, their folder), or built now. */
export async function prometheusTools(): Promise<PrometheusTools> {
  const dir = process.env['E2E_PROMETHEUS_TOOLS']
  if (dir === undefined || dir === '') return ensurePrometheusTools()
  return { promtool: join(dir, 'promtool'), promqlSelectors: join(dir, 'promql-selectors') }
}

/** The prometheus-operator release's CRD directory, for `env.installCrds(dir)`. */
export async function prometheusOperatorCrdDir(
  log: (line: string) => void = () => undefined,
  version = PROMETHEUS_OPERATOR_VERSION,
): Promise<string> {
  const dir = join(
    (await goModule(OPERATOR_MODULE, version)).dir,
    'example/prometheus-operator-crd',
  )
  const found: string[] = await readdir(dir).catch(() => [])
  const missing = OPERATOR_CRDS.filter((name) => !found.includes(name))
  if (missing.length > 0)
    throw new Error(`${OPERATOR_MODULE}@${version}: ${dir} has no ${missing.join(', ')}`)
  log(`e2e: prometheus-operator CRDs ${version} from ${dir}`)
  return dir
}

export interface ToolResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs one of the tools; never throws on a non-zero exit (the tests assert on it). */
export function runTool(binary: string, args: readonly string[], stdin = ''): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      binary,
      [...args],
      { timeout: 120_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
        if (error && code === -1) reject(new Error(`${binary}: ${error.message}`))
        else resolve({ code, stdout, stderr })
      },
    )
    child.stdin?.end(stdin)
  })
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const tools = await ensurePrometheusTools()
  process.stdout.write(`${JSON.stringify({ ...tools, crds: await prometheusOperatorCrdDir() })}\n`)
}
