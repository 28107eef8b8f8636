/**
 * A real kube-controller-manager against the test control plane, with only the controllers a file
 * asks for: without it a deleted namespace stays Terminating for ever (no namespace controller)
 * and nothing is garbage-collected. Only controllers that need nothing beyond a kubeconfig are
 * offered; the others want keys, CIDRs or nodes this plane does not have.
 */

import { writeFile } from 'node:fs/promises'
import https from 'node:https'
import { join } from 'node:path'
import { freePort } from '../../helpers/ports.ts'
import { ensureControllerManager } from '../control-plane/binaries.ts'
import { kubeconfigYaml } from './control-plane.ts'
import type { ControlPlane } from './control-plane.ts'
import { startProcess, waitFor } from './processes.ts'
import type { Managed } from './processes.ts'

/** Controllers the harness can run, as kube-controller-manager v1.37 names them (`--help`). */
export type ControllerName = 'namespace-controller' | 'garbage-collector-controller'

/**
 * Starts kube-controller-manager with `controllers` and waits until its /healthz answers 200. The
 * binary is the one the e2e runner built ahead (`E2E_KUBE_CONTROLLER_MANAGER`), or built (or taken
 * from the cache) here when a file runs without the runner.
 */
export async function startControllerManager(
  plane: ControlPlane,
  controllers: readonly ControllerName[],
): Promise<Managed> {
  if (controllers.length === 0) throw new Error('kube-controller-manager: no controllers asked for')
  const binary =
    process.env['E2E_KUBE_CONTROLLER_MANAGER'] ??
    (await ensureControllerManager()).kubeControllerManager
  const port = await freePort()
  const { pki } = plane
  const kubeconfig = join(plane.dir, 'kube-controller-manager.kubeconfig')
  await writeFile(
    kubeconfig,
    kubeconfigYaml(
      plane.server,
      pki,
      'system:kube-controller-manager',
      pki.controllerManagerCertPem,
      pki.controllerManagerKeyPem,
    ),
    { mode: 0o600 },
  )
  const manager = startProcess(
    'kube-controller-manager',
    binary,
    [
      // One identity for every controller rather than a service account each, which would need
      // the token controller and its signing key: `system:kube-controller-manager`, the user a
      // cluster's kube-controller-manager is without service-account credentials (pki.ts), so a
      // webhook's matchConditions see the user they name.
      `--kubeconfig=${kubeconfig}`,
      '--use-service-account-credentials=false',
      `--controllers=${controllers.join(',')}`,
      // One instance per plane: nothing to elect, and no Lease for a test to trip over.
      '--leader-elect=false',
      // Serving only for /healthz, on loopback with the API server's certificate (issued for
      // 127.0.0.1), so the wait below verifies TLS. With no authentication or authorization
      // kubeconfig every other path is forbidden.
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--tls-cert-file=${plane.pki.servingCertFile}`,
      `--tls-private-key-file=${plane.pki.servingKeyFile}`,
      '--profiling=false',
      '--v=1',
    ],
    { logFile: join(plane.dir, 'kube-controller-manager.log') },
  )
  try {
    await waitFor('kube-controller-manager /healthz', () => healthz(port, plane.pki.caPem), {
      timeoutMs: 60_000,
      process: manager,
      intervalMs: 250,
    })
  } catch (error) {
    await manager.stop()
    throw error
  }
  return manager
}

function healthz(port: number, ca: string): Promise<true | undefined> {
  return new Promise((resolve, reject) => {
    const request = https.get(`https://127.0.0.1:${port}/healthz`, { ca, timeout: 2_000 }, (r) => {
      r.resume()
      r.once('end', () => {
        resolve(r.statusCode === 200 ? true : undefined)
      })
    })
    request.once('timeout', () => request.destroy(new Error('timeout')))
    request.once('error', reject)
  })
}
