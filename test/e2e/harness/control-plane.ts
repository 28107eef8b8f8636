/**
 * A real etcd and kube-apiserver on loopback for one test file: throwaway certificates, RBAC
 * authorisation, free ports, a kubeconfig for the tests and `kubectl`, and teardown of it all.
 * The API server can be stopped and started again on the same port and etcd, to test recovery.
 */

import https from 'node:https'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../helpers/ports.ts'
import { createControlPlanePki } from './pki.ts'
import type { ControlPlanePki } from './pki.ts'
import { startProcess, waitFor } from './processes.ts'
import type { Managed } from './processes.ts'

export interface ControlPlane {
  readonly dir: string
  readonly server: string
  /** Admin kubeconfig (system:masters), for the tests and kubectl. */
  readonly kubeconfig: string
  readonly pki: ControlPlanePki
  stopApiServer(): Promise<void>
  startApiServer(): Promise<void>
  stop(): Promise<void>
}

/** Binaries from the environment the e2e runner sets (see test/e2e/run.ts). */
export function binariesFromEnv(): { kubeApiserver: string; etcd: string } {
  const kubeApiserver = process.env['E2E_KUBE_APISERVER']
  const etcd = process.env['E2E_ETCD']
  if (!kubeApiserver || !etcd) {
    throw new Error(
      'E2E_KUBE_APISERVER and E2E_ETCD are unset: run the suite with `node test/e2e/run.ts`',
    )
  }
  return { kubeApiserver, etcd }
}

export interface ControlPlaneOptions {
  /** Writes what extra API server flags need into the plane's directory and returns the flags. */
  readonly apiServerArgs?: (dir: string) => Promise<string[]>
  /** The binaries to run; those the e2e runner names in the environment by default. */
  readonly binaries?: { readonly kubeApiserver: string; readonly etcd: string }
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const binaries = options.binaries ?? binariesFromEnv()
  const dir = await mkdtemp(join(tmpdir(), 'mcp-admission-e2e-'))
  const processes: Managed[] = []
  const stopAll = async () => {
    for (const proc of processes.reverse()) await proc.stop()
    await rm(dir, { recursive: true, force: true })
  }
  try {
    const pki = await createControlPlanePki(dir)
    const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()]
    const etcd = startProcess(
      'etcd',
      binaries.etcd,
      [
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      { logFile: join(dir, 'etcd.log') },
    )
    processes.push(etcd)

    const server = `https://127.0.0.1:${apiPort}`
    const apiArgs = [
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      // No controllers run here; the kubernetes Service endpoints need no reconciling (as envtest).
      '--endpoint-reconciler-type=none',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${pki.servingCertFile}`,
      `--tls-private-key-file=${pki.servingKeyFile}`,
      `--client-ca-file=${pki.caFile}`,
      '--authorization-mode=RBAC',
      `--service-account-issuer=https://kubernetes.default.svc`,
      `--service-account-key-file=${pki.serviceAccountPublicKeyFile}`,
      `--service-account-signing-key-file=${pki.serviceAccountKeyFile}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      `--cert-dir=${join(dir, 'apiserver-certs')}`,
      '--enable-priority-and-fairness=false',
      '--profiling=false',
      '--v=1',
      ...(options.apiServerArgs ? await options.apiServerArgs(dir) : []),
    ]
    const kubeconfig = join(dir, 'kubeconfig')
    await writeFile(
      kubeconfig,
      kubeconfigYaml(server, pki, 'e2e-admin', pki.adminCertPem, pki.adminKeyPem),
      { mode: 0o600 },
    )

    let apiServer: Managed | undefined
    const startApiServer = async () => {
      apiServer = startProcess('kube-apiserver', binaries.kubeApiserver, apiArgs, {
        logFile: join(dir, 'kube-apiserver.log'),
      })
      processes.push(apiServer)
      await waitFor('kube-apiserver /readyz', () => readyz(server, pki), {
        timeoutMs: 90_000,
        process: apiServer,
        intervalMs: 250,
      })
    }
    await startApiServer()
    return {
      dir,
      server,
      kubeconfig,
      pki,
      stopApiServer: async () => {
        await apiServer?.stop()
      },
      startApiServer,
      stop: stopAll,
    }
  } catch (error) {
    await stopAll()
    throw error
  }
}

async function readyz(server: string, pki: ControlPlanePki): Promise<true | undefined> {
  return new Promise((resolve, reject) => {
    const request = https.get(
      `${server}/readyz`,
      { ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem, timeout: 2_000 },
      (response) => {
        response.resume()
        response.once('end', () => {
          resolve(response.statusCode === 200 ? true : undefined)
        })
      },
    )
    request.once('timeout', () => request.destroy(new Error('timeout')))
    request.once('error', reject)
  })
}

/** A kubeconfig for the plane that authenticates with a client certificate of its CA. */
export function kubeconfigYaml(
  server: string,
  pki: ControlPlanePki,
  user: string,
  certPem: string,
  keyPem: string,
): string {
  const b64 = (pem: string) => Buffer.from(pem).toString('base64')
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'e2e', cluster: { server, 'certificate-authority-data': b64(pki.caPem) } }],
    users: [
      {
        name: user,
        user: { 'client-certificate-data': b64(certPem), 'client-key-data': b64(keyPem) },
      },
    ],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user } }],
    'current-context': 'e2e',
  })
}
