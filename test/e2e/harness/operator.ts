/**
 * The real ToolHive operator beside the test control plane: the release's CRDs, the release's
 * examples, and `thv-operator` run out of cluster with the environment its Helm chart sets
 * (deploy/charts/operator/templates/deployment.yaml), minus leader election and metrics.
 */

import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { freePort } from '../../helpers/ports.ts'
import type { OperatorReleaseFiles } from '../toolhive/releases.ts'
import type { ControlPlane } from './control-plane.ts'
import { mustKubectl } from './kubectl.ts'
import type { Kubectl } from './kubectl.ts'
import { startProcess, waitFor } from './processes.ts'
import type { Managed } from './processes.ts'

export type Any = Record<string, any>

/** Installs the release's CRDs and waits until every one is served. */
export async function installReleaseCrds(kubectl: Kubectl, crdsDir: string): Promise<void> {
  await mustKubectl(kubectl, ['apply', '--server-side', '-f', crdsDir])
  await mustKubectl(kubectl, [
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    '-f',
    crdsDir,
  ])
}

/**
 * Starts the operator, watching `namespaces` only (the chart's namespace scope), as the admin or,
 * with `kubeconfig`, as the identity it holds (the operator's own service account, as in a pod).
 */
export async function startOperator(
  plane: ControlPlane,
  files: OperatorReleaseFiles,
  namespaces: readonly string[],
  options: { readonly kubeconfig?: string } = {},
): Promise<Managed> {
  const probePort = await freePort()
  const operator = startProcess(
    'thv-operator',
    files.operator,
    ['--metrics-bind-address=0', `--health-probe-bind-address=127.0.0.1:${probePort}`],
    {
      logFile: join(plane.dir, `thv-operator-${files.release}.log`),
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '',
        KUBECONFIG: options.kubeconfig ?? plane.kubeconfig,
        POD_NAMESPACE: 'toolhive-system',
        WATCH_NAMESPACE: namespaces.join(','),
        UNSTRUCTURED_LOGS: 'false',
        TOOLHIVE_USE_CONFIGMAP: 'true',
        ENABLE_EXPERIMENTAL_FEATURES: 'false',
        // Off, as the chart requires for a namespace-scoped install (later charts default it on).
        TOOLHIVE_ENABLE_STORAGE_VERSION_MIGRATOR: 'false',
        TOOLHIVE_RUNNER_IMAGE: 'ghcr.io/stacklok/toolhive/proxyrunner:e2e',
        VMCP_IMAGE: 'ghcr.io/stacklok/toolhive/vmcp:e2e',
        TOOLHIVE_PROXY_HOST: '0.0.0.0',
        TOOLHIVE_REGISTRY_API_IMAGE: 'ghcr.io/stacklok/thv-registry-api:e2e',
        // No update check or telemetry, and any stray HTTP call goes nowhere: loopback only.
        TOOLHIVE_SKIP_UPDATE_CHECK: 'true',
        HTTPS_PROXY: 'http://127.0.0.1:9',
        HTTP_PROXY: 'http://127.0.0.1:9',
        NO_PROXY: '127.0.0.1,localhost',
      },
    },
  )
  await waitFor(
    `thv-operator ${files.release} /readyz`,
    async () => {
      const response = await fetch(`http://127.0.0.1:${probePort}/readyz`)
      return response.status === 200 ? true : undefined
    },
    { timeoutMs: 60_000, process: operator, intervalMs: 250 },
  )
  return operator
}

export interface ExampleObject {
  readonly file: string
  readonly object: Any
}

/** Every object of the release's operator examples, in file order (sorted paths). */
export async function exampleObjects(examplesDir: string): Promise<ExampleObject[]> {
  const files = (await readdir(examplesDir, { recursive: true }))
    .filter((file) => /\.ya?ml$/i.test(file))
    .sort()
  const objects: ExampleObject[] = []
  for (const file of files) {
    const text = await readFile(join(examplesDir, file), 'utf8')
    for (const document of parseAllDocuments(text)) {
      const object = document.toJS() as Any | null
      if (object && typeof object === 'object' && typeof object['kind'] === 'string')
        objects.push({ file, object })
    }
  }
  return objects
}

/** `kind namespace/name` of an object, for messages and maps. */
export function describeObject(object: Any, defaultNamespace = 'default'): string {
  const metadata = (object['metadata'] ?? {}) as Any
  return `${String(object['kind'])} ${String(metadata['namespace'] ?? defaultNamespace)}/${String(metadata['name'])}`
}

/** Runs `work` over `items`, at most `limit` at a time. */
export async function inBatches<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++
        results[index] = await work(items[index]!)
      }
    }),
  )
  return results
}
