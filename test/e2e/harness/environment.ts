/**
 * One end-to-end environment per test file: control plane, CRD fixtures, the service's identity
 * and RBAC from `manifests/`, mcp-admission running as that service account, and the shipped
 * webhook configurations registered in front of it. Torn down when the test file ends.
 */

import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createDevCa } from '../../../src/http/dev-certs.ts'
import { clientCertificate } from './pki.ts'
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
import { freePort } from '../../helpers/ports.ts'
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

export interface EnvironmentOptions {
  /**
   * Make the API server present a client certificate to the webhook (through its admission
   * configuration) and start mcp-admission with `--client-ca`, as a hardened install would.
   */
  readonly apiServerClientCertificate?: boolean
}

export async function startEnvironment(
  t: Pick<Test, 'teardown' | 'comment'>,
  options: EnvironmentOptions = {},
): Promise<Environment> {
  const started = Date.now()
  const clientAuth = options.apiServerClientCertificate ? await webhookClientAuth() : undefined
  const plane = await startControlPlane(
    clientAuth ? { apiServerArgs: clientAuth.apiServerArgs } : {},
  )
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
  const admission = clientAuth
    ? await startAdmission(
        plane,
        serviceKubeconfig,
        [`--client-ca=${await clientAuth.writeCa(plane.dir)}`],
        { port: clientAuth.port },
      )
    : await startAdmission(plane, serviceKubeconfig)
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
export async function waitUntilWebhooksAreCalled(
  kubectl: Kubectl,
  namespace: string,
): Promise<void> {
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

/**
 * A client CA and certificate for the API server's webhook client, its kubeconfig (one user named
 * after the webhook's host:port, the way the API server looks credentials up) and admission
 * configuration, and the port the webhook must then listen on.
 */
async function webhookClientAuth() {
  const port = await freePort()
  const ca = await createDevCa(2)
  const client = await clientCertificate(ca, 'CN=kube-apiserver-webhook-client')
  const b64 = (text: string) => Buffer.from(text).toString('base64')
  return {
    port,
    apiServerArgs: async (dir: string): Promise<string[]> => {
      const kubeconfig = join(dir, 'webhook-client.kubeconfig')
      await writeFile(
        kubeconfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          users: [
            {
              name: `127.0.0.1:${port}`,
              user: {
                'client-certificate-data': b64(client.cert),
                'client-key-data': b64(client.key),
              },
            },
          ],
        }),
      )
      const webhookConfiguration = {
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'WebhookAdmissionConfiguration',
        kubeConfigFile: kubeconfig,
      }
      const admissionConfiguration = join(dir, 'admission-configuration.json')
      await writeFile(
        admissionConfiguration,
        JSON.stringify({
          apiVersion: 'apiserver.config.k8s.io/v1',
          kind: 'AdmissionConfiguration',
          plugins: ['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook'].map((name) => ({
            name,
            configuration: webhookConfiguration,
          })),
        }),
      )
      return [`--admission-control-config-file=${admissionConfiguration}`]
    },
    writeCa: async (dir: string): Promise<string> => {
      const file = join(dir, 'webhook-client-ca.crt')
      await writeFile(file, ca.cert.toString('pem'))
      return file
    },
  }
}
