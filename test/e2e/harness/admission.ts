/**
 * mcp-admission as it ships (`node dist/main.js serve`), pointed at the test control plane with
 * its own service account's token, and the shipped webhook configurations registered in front of
 * it — rewritten only in `clientConfig`, the way controller-runtime's envtest does.
 */

import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { createDevCertificates, writeDevCertificates } from '../../../src/http/dev-certs.ts'
import { withPodServiceAccount } from './chart-pod.ts'
import type { ControlPlane } from './control-plane.ts'
import { startServe } from '../../helpers/serve-process.ts'
import { mustKubectl } from './kubectl.ts'
import type { Kubectl } from './kubectl.ts'
import { managedServe, waitFor } from './processes.ts'
import type { Managed } from './processes.ts'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
export const MANIFESTS_DIR = join(REPO, 'manifests')
export const CRD_FIXTURES_DIR = join(REPO, 'test/e2e/fixtures/crds')
export const SERVICE_NAMESPACE = 'mcp-admission'
export const SERVICE_ACCOUNT = 'mcp-admission'

export type Manifest = {
  apiVersion: string
  kind: string
  metadata: { name: string }
  [key: string]: unknown
}

const WEBHOOK_KINDS = new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'])
/** What the suite installs from the base besides the webhooks: the service's identity and RBAC. */
const IDENTITY_KINDS = new Set([
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
])

/** The shipped manifests, rendered by kustomize as `kubectl apply -k` would. */
export async function renderManifests(kubectl: Kubectl): Promise<Manifest[]> {
  const text = await mustKubectl(kubectl, ['kustomize', MANIFESTS_DIR])
  return parseAllDocuments(text).map((document) => document.toJS() as Manifest)
}

/**
 * `manifests/base` with `components` (paths under manifests/) as a user's overlay would compose
 * them: components cannot be rendered alone, so through a throwaway overlay in `workDir`.
 */
export async function renderBaseWith(
  kubectl: Kubectl,
  workDir: string,
  components: readonly string[],
): Promise<string> {
  const overlay = await mkdtemp(join(workDir, 'overlay-'))
  await writeFile(
    join(overlay, 'kustomization.yaml'),
    JSON.stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      // kustomize takes no absolute roots; relative ones with the load restrictor off.
      resources: [relative(overlay, join(MANIFESTS_DIR, 'base'))],
      components: components.map((component) => relative(overlay, join(MANIFESTS_DIR, component))),
    }),
  )
  return mustKubectl(kubectl, ['kustomize', '--load-restrictor=LoadRestrictionsNone', overlay])
}

/** Installs the CRD fixtures and waits until the API server serves them. */
export async function installCrds(kubectl: Kubectl): Promise<void> {
  await mustKubectl(kubectl, ['apply', '--server-side', '-k', CRD_FIXTURES_DIR])
  await mustKubectl(kubectl, [
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    '-l',
    'app.kubernetes.io/part-of=mcp-admission-e2e',
  ])
}

/** Applies the service's namespace, service account and RBAC from the shipped base. */
export async function installIdentity(
  kubectl: Kubectl,
  manifests: readonly Manifest[],
): Promise<void> {
  const identity = manifests.filter((manifest) => IDENTITY_KINDS.has(manifest.kind))
  await mustKubectl(kubectl, ['apply', '--server-side', '-f', '-'], toList(identity))
}

/**
 * A kubeconfig that authenticates as a service account (mcp-admission's unless `account` names
 * another), so RBAC and the `userInfo` webhooks see are what production has.
 */
export async function serviceAccountKubeconfig(
  kubectl: Kubectl,
  plane: ControlPlane,
  account: { readonly namespace: string; readonly name: string } = {
    namespace: SERVICE_NAMESPACE,
    name: SERVICE_ACCOUNT,
  },
): Promise<string> {
  const token = await accountToken(kubectl, account)
  const file = join(plane.dir, `${account.namespace}.${account.name}.kubeconfig`)
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'e2e',
        cluster: {
          server: plane.server,
          'certificate-authority-data': Buffer.from(plane.pki.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: account.name, user: { token } }],
    contexts: [
      {
        name: 'e2e',
        context: { cluster: 'e2e', user: account.name, namespace: account.namespace },
      },
    ],
    'current-context': 'e2e',
  }
  await writeFile(file, JSON.stringify(config), { mode: 0o600 })
  return file
}

/**
 * A pod's service-account volume (`token`, `ca.crt`) in a host directory: the service started with
 * it reads the cluster the way it does in a pod (in-cluster config), not through a kubeconfig.
 */
export interface PodServiceAccount {
  readonly serviceAccountDir: string
}

/** A bound token of `account`, valid for two hours (longer than any run). */
async function accountToken(
  kubectl: Kubectl,
  account: { readonly namespace: string; readonly name: string },
): Promise<string> {
  const args = ['create', 'token', account.name, '-n', account.namespace, '--duration=2h']
  return (await mustKubectl(kubectl, args)).trim()
}

/** The files the kubelet projects for `account` (mcp-admission's unless named), in `dir`. */
export async function podServiceAccount(
  kubectl: Kubectl,
  plane: ControlPlane,
  dir: string,
  account: { readonly namespace: string; readonly name: string } = {
    namespace: SERVICE_NAMESPACE,
    name: SERVICE_ACCOUNT,
  },
): Promise<PodServiceAccount> {
  const token = await accountToken(kubectl, account)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'token'), token, { mode: 0o600 })
  await writeFile(join(dir, 'ca.crt'), plane.pki.caPem)
  return { serviceAccountDir: dir }
}

export interface RunningAdmission {
  readonly process: Managed
  readonly admissionUrl: string
  readonly probeUrl: string
  readonly caPem: string
  readonly certDir: string
  /** Scrapes /metrics and returns the value of one series (0 when absent). */
  metric(name: string, labels?: Readonly<Record<string, string>>): Promise<number>
  /** GET on the probe port. */
  probe(path: string): Promise<{ status: number; body: string }>
  stop(): Promise<void>
}

/**
 * Starts `node dist/main.js serve` against the cluster and waits for it to be ready. `credentials`
 * is a kubeconfig file, or a pod's service account (in-cluster config, as the chart runs it).
 */
export async function startAdmission(
  plane: ControlPlane,
  credentials: string | PodServiceAccount,
  extraArgs: readonly string[] = [],
  options: {
    readonly waitUntilReady?: boolean
    readonly port?: number
    /**
     * Serve the pair already in this directory (tls.crt, tls.key, and ca.crt for caPem), e.g. one
     * issued for the Service's DNS name, instead of fresh certificates for 127.0.0.1.
     */
    readonly certDir?: string
  } = {},
): Promise<RunningAdmission> {
  // Each instance has its own certificates and log: several may run against one control plane.
  const instance = await mkdtemp(join(plane.dir, 'mcp-admission-'))
  let certDir = options.certDir
  let caPem: string
  if (certDir === undefined) {
    certDir = join(instance, 'certs')
    await mkdir(certDir, { recursive: true })
    const certificates = await createDevCertificates({ hosts: ['127.0.0.1'], validDays: 2 })
    await writeDevCertificates(certDir, certificates)
    caPem = certificates.ca
  } else {
    caPem = await readFile(join(certDir, 'ca.crt'), 'utf8')
  }
  const logFile = join(instance, 'mcp-admission.log')
  const service = await startServe({
    main: join(REPO, 'dist/main.js'),
    ...(options.port === undefined ? {} : { port: options.port }),
    logLevel: 'debug',
    args: [
      ...(typeof credentials === 'string' ? [`--kubeconfig=${credentials}`] : []),
      `--cert-dir=${certDir}`,
      '--shutdown-delay=0s',
      ...extraArgs,
    ],
    cwd: REPO,
    logFile,
    ...(typeof credentials === 'string'
      ? {}
      : {
          wrap: (argv: readonly string[]) =>
            withPodServiceAccount(
              credentials.serviceAccountDir,
              plane.server,
              join(instance, 'pod'),
              argv,
            ),
        }),
    // 503: listening, not yet ready (a test that watches it become ready).
    readyStatuses: options.waitUntilReady === false ? [200, 503] : [200],
  })
  const proc = managedServe('mcp-admission', service, logFile)
  const probeUrl = `http://127.0.0.1:${service.probePort}`
  const probe = async (path: string) => {
    const response = await fetch(`${probeUrl}${path}`)
    return { status: response.status, body: await response.text() }
  }
  return {
    process: proc,
    admissionUrl: service.url,
    probeUrl,
    caPem,
    certDir,
    probe,
    async metric(name, labels = {}) {
      const text = (await probe('/metrics')).body
      return sumSeries(text, name, labels)
    },
    stop: () => proc.stop(),
  }
}

/** Registers the shipped webhook configurations, pointed at `admission` on loopback. */
export async function registerWebhooks(
  kubectl: Kubectl,
  manifests: readonly Manifest[],
  admission: RunningAdmission,
): Promise<void> {
  const caBundle = Buffer.from(admission.caPem).toString('base64')
  const webhooks = manifests
    .filter((manifest) => WEBHOOK_KINDS.has(manifest.kind))
    .map((manifest) => {
      const copy = structuredClone(manifest)
      for (const webhook of copy['webhooks'] as {
        clientConfig: { service?: { path?: string } }
      }[]) {
        const path = webhook.clientConfig.service?.path ?? '/'
        webhook.clientConfig = {
          url: `${admission.admissionUrl}${path}`,
          caBundle,
        } as typeof webhook.clientConfig
      }
      return copy
    })
  if (webhooks.length === 0) throw new Error('manifests/ renders no webhook configurations')
  await mustKubectl(kubectl, ['apply', '--server-side', '-f', '-'], toList(webhooks))
}

/** Sums the samples of `name` whose labels include `labels`, from Prometheus text. */
export function sumSeries(
  text: string,
  name: string,
  labels: Readonly<Record<string, string>>,
): number {
  let total = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line)
    if (!match || match[1] !== name) continue
    const present = match[2] ?? ''
    if (Object.entries(labels).every(([key, value]) => present.includes(`${key}="${value}"`)))
      total += Number(match[3])
  }
  return total
}

function toList(items: readonly unknown[]): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items })
}

/**
 * Writes `object` with the shipped validating webhooks out of the way, as a cluster would have
 * stored it before mcp-admission was installed, then puts them back and waits until they answer
 * again (an empty MCPWebhookConfig is denied once more).
 */
export async function storeWithoutValidation(
  kubectl: Kubectl,
  object: {
    readonly apiVersion: string
    readonly kind: string
    readonly metadata: { readonly namespace: string; readonly name: string }
    readonly spec?: unknown
  },
): Promise<void> {
  const saved = JSON.parse(
    await mustKubectl(kubectl, [
      'get',
      'validatingwebhookconfiguration',
      'mcp-admission',
      '-o',
      'json',
    ]),
  ) as Manifest
  await mustKubectl(kubectl, ['delete', 'validatingwebhookconfiguration', 'mcp-admission'])
  // The API server drops the webhook asynchronously: retry until the write goes through.
  await waitFor(
    'the write without validation',
    async () =>
      (await kubectl(['apply', '-f', '-'], JSON.stringify(object))).code === 0 ? true : undefined,
    {
      timeoutMs: 10_000,
    },
  )
  const { name, labels } = saved.metadata as { name: string; labels?: unknown }
  await mustKubectl(
    kubectl,
    ['create', '-f', '-'],
    JSON.stringify({ ...saved, metadata: { name, labels } }),
  )
  const probe = {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'validation-probe', namespace: object.metadata.namespace },
    spec: {},
  }
  await waitFor(
    'the validating webhook to answer again',
    async () =>
      (await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(probe))).code !== 0
        ? true
        : undefined,
    {
      timeoutMs: 10_000,
    },
  )
}
