/**
 * One end-to-end environment per test file: control plane, CRD fixtures, the service's identity
 * and RBAC from `manifests/`, mcp-admission running as that service account, and the shipped
 * webhook configurations registered in front of it. Torn down when the test file ends.
 */

import { randomBytes } from 'node:crypto'
import type { Test } from 'tap'
import {
  installCrds,
  installIdentity,
  registerWebhooks,
  renderManifests,
  serviceAccountKubeconfig,
  startAdmission,
} from './admission.ts'
import type { RunningAdmission } from './admission.ts'
import { startControlPlane } from './control-plane.ts'
import type { ControlPlane } from './control-plane.ts'
import { kubectlFor, mustKubectl } from './kubectl.ts'
import type { Kubectl } from './kubectl.ts'
import { waitFor } from './processes.ts'

export interface Environment {
  readonly plane: ControlPlane
  readonly kubectl: Kubectl
  readonly admission: RunningAdmission
  /** The service account's kubeconfig mcp-admission runs with. */
  readonly serviceKubeconfig: string
  /** Creates a fresh namespace for one test. */
  namespace(prefix?: string): Promise<string>
}

export async function startEnvironment(t: Test): Promise<Environment> {
  const started = Date.now()
  const plane = await startControlPlane()
  const running: { admission?: RunningAdmission } = {}
  t.teardown(async () => {
    await running.admission?.stop()
    await plane.stop()
  })
  const kubectl = kubectlFor(plane.kubeconfig)
  const manifests = await renderManifests(kubectl)
  await installCrds(kubectl)
  await installIdentity(kubectl, manifests)
  const serviceKubeconfig = await serviceAccountKubeconfig(kubectl, plane)
  const admission = await startAdmission(plane, serviceKubeconfig)
  running.admission = admission
  await registerWebhooks(kubectl, manifests, admission)
  const namespace = async (prefix = 'e2e') => {
    const name = `${prefix}-${randomBytes(3).toString('hex')}`
    await mustKubectl(kubectl, ['create', 'namespace', name])
    return name
  }
  await waitUntilWebhooksAreCalled(kubectl, await namespace('probe'))
  t.comment(
    `e2e environment up in ${((Date.now() - started) / 1000).toFixed(1)} s (API server ${plane.server})`,
  )
  return { plane, kubectl, admission, serviceKubeconfig, namespace }
}

/** The API server picks up new webhook configurations asynchronously; wait until it calls ours. */
async function waitUntilWebhooksAreCalled(kubectl: Kubectl, namespace: string): Promise<void> {
  const probe = JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'webhook-probe-runconfig',
      namespace,
      labels: { 'toolhive.stacklok.io/component': 'run-config' },
    },
    data: { 'runconfig.json': '{}' },
  })
  await waitFor(
    'the API server to call the mutating webhook',
    async () => {
      const out = await mustKubectl(
        kubectl,
        ['create', '--dry-run=server', '-o', 'json', '-f', '-'],
        probe,
      )
      const annotations = (
        JSON.parse(out) as { metadata: { annotations?: Record<string, string> } }
      ).metadata.annotations
      return annotations?.['toolhive.stacklok.dev/content-checksum'] ? true : undefined
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  )
}
