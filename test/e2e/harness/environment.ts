/**
 * The end-to-end environment, built in one place from options, the way controller-runtime's
 * envtest.Environment is: one type, options, start and stop. In this order, each step as asked:
 *  1. a control plane on loopback (etcd, kube-apiserver), with a service network standing in for
 *     kube-proxy in front of Service-referenced webhooks, a client certificate it presents to
 *     webhooks, and an audit log; kube-controller-manager with the controllers asked for;
 *  2. CRDs: the test fixtures and/or the directories of a release's CRDs;
 *  3. the service's identity and RBAC from `manifests/`;
 *  4. `beforeService`, for what a file must decide with nothing of mcp-admission in the cluster;
 *  5. mcp-admission as it ships (`node dist/main.js serve`), as its service account: through a
 *     kubeconfig, or reading the cluster as a pod does (in-cluster config);
 *  6. the shipped webhook configurations in front of it, once the API server calls them;
 *  7. the real ToolHive operator of a release, as its own service account.
 * `stop()` (registered as a tap teardown by `startEnvironment`) ends all of it, last started first.
 *
 * e2e files and `bench/cluster` reach the environment through this module only; control-plane.ts,
 * controller-manager.ts, admission.ts, operator.ts, service-network.ts and audit-log.ts are its
 * pieces. Tools a file tests with (kubectl, helm, cert-manager, the chart pod, proxies) keep their
 * own modules.
 */

import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Test } from 'tap'
import { createDevCa } from '../../../src/http/dev-certs.ts'
import { freePort } from '../../helpers/ports.ts'
import type { OperatorReleaseFiles } from '../toolhive/releases.ts'
import {
  installCrds,
  installIdentity,
  podServiceAccount,
  registerWebhooks,
  renderManifests,
  serviceAccountKubeconfig,
  startAdmission,
} from './admission.ts'
import type { Manifest, PodServiceAccount, RunningAdmission } from './admission.ts'
import { auditLog } from './audit-log.ts'
import type { AuditEvent, AuditLog } from './audit-log.ts'
import { startControlPlane } from './control-plane.ts'
import { startControllerManager } from './controller-manager.ts'
import type { ControllerName } from './controller-manager.ts'
import type { ControlPlane } from './control-plane.ts'
import { kubectlFor, mustKubectl } from './kubectl.ts'
import type { Kubectl } from './kubectl.ts'
import { installReleaseCrds, startOperator } from './operator.ts'
import { clientCertificate } from './pki.ts'
import { startProcess, waitFor } from './processes.ts'
import type { Managed } from './processes.ts'
import { startServiceNetwork } from './service-network.ts'
import type { ServiceNetwork } from './service-network.ts'

// The pieces a file needs beside the environment, from here rather than from the modules that
// build it.
export {
  MANIFESTS_DIR,
  SERVICE_ACCOUNT,
  SERVICE_NAMESPACE,
  renderBaseWith,
  storeWithoutValidation,
  sumSeries,
} from './admission.ts'
export type { Manifest, PodServiceAccount, RunningAdmission } from './admission.ts'
export type { ControlPlane } from './control-plane.ts'
export type { ControllerName } from './controller-manager.ts'
export { auditEventOf } from './audit-log.ts'
export type { AuditEvent, AuditQuery } from './audit-log.ts'
export {
  cacheRoot,
  ensureBinaries,
  ensureControllerManager,
  goVersion,
  isFile,
  run,
} from '../control-plane/binaries.ts'
export { NOT_PROBED, afterProbe, nextReady } from './service-network.ts'
export { adminClient } from './api-client.ts'
export type { ApiAnswer, ApiClient } from './api-client.ts'
export { startDelayingProxy } from './delaying-proxy.ts'
export type { DelayingProxy, Slowness } from './delaying-proxy.ts'
export type {
  Endpoint,
  EndpointEvent,
  ProbeState,
  ReadinessProbe,
  ServiceEndpoints,
} from './service-network.ts'
export { mustKubectl, startProcess, waitFor }
export type { Kubectl, Managed, ServiceNetwork }

/** A set of CRDs to serve: the test fixtures, or a directory of CRD files (a release's). */
export type CrdSource = 'fixtures' | (string & {})

/** How one mcp-admission instance runs. */
export interface ServiceOptions {
  /**
   * How it reads the cluster as its service account: `kubeconfig` (the default) with the account's
   * token in a kubeconfig; `pod` with in-cluster config from the account's token and CA laid out
   * as a pod's volume, as the chart runs it; or what a function returns (e.g. a kubeconfig that
   * goes through a proxy).
   */
  readonly credentials?:
    'kubeconfig' | 'pod' | ((env: Environment) => Promise<string | PodServiceAccount>)
  /** Added to `serve`'s flags. */
  readonly args?: readonly string[]
  /** The webhook port (a free one by default). */
  readonly port?: number
  /** Serve the pair in this directory (tls.crt, tls.key, ca.crt) instead of fresh loopback ones. */
  readonly certDir?: string
  /** false: return once /readyz answers at all (200 or 503), not only once it is ready. */
  readonly waitUntilReady?: boolean
}

export interface OperatorOptions {
  /** The release's built operator and sources (toolhive/releases.ts `ensureOperator`). */
  readonly files: OperatorReleaseFiles
  /** The namespaces it watches (the chart's namespace scope). */
  readonly watch: readonly string[]
}

export interface EnvironmentOptions {
  /** The control-plane binaries; those the e2e runner names in the environment by default. */
  readonly binaries?: { readonly kubeApiserver: string; readonly etcd: string }
  /** More kube-apiserver flags, written into the plane's directory. */
  readonly apiServerArgs?: (dir: string) => Promise<string[]>
  /** A service network (`env.network`), so webhooks registered by Service reach a local process. */
  readonly serviceNetwork?: boolean
  /**
   * Make the API server present a client certificate to the webhook (through its admission
   * configuration) and start mcp-admission with `--client-ca`, as a hardened install would.
   */
  readonly apiServerClientCertificate?: boolean
  /** Make the API server write an audit log of every write (`env.auditEvents()`). */
  readonly auditLog?: boolean
  /**
   * Run kube-controller-manager with these controllers only (`env.controllerManager`), started
   * with the control plane and stopped just before it: `namespace-controller` so deleted
   * namespaces go away, `garbage-collector-controller` so dependents follow their owners.
   * Default: none, and no controller-manager (nor its build).
   */
  readonly controllers?: readonly ControllerName[]
  /** CRDs served before anything else, in this order (default: the test fixtures). */
  readonly crds?: readonly CrdSource[]
  /** The service's namespace, service account and RBAC from `manifests/` (default: installed). */
  readonly identity?: boolean
  /** Runs after the CRDs and identity, before mcp-admission starts. */
  readonly beforeService?: (env: Environment) => Promise<void>
  /** Whether and how mcp-admission runs (default: with its service account's kubeconfig). */
  readonly service?: false | ServiceOptions
  /** Register the shipped webhooks in front of it (default: when it runs). */
  readonly webhooks?: boolean
  /** The real ToolHive operator, started last. */
  readonly operator?: OperatorOptions
}

export interface Environment {
  readonly plane: ControlPlane
  /** kubectl as cluster admin. */
  readonly kubectl: Kubectl
  /** The mcp-admission started with the environment (throws when `service: false`). */
  readonly admission: RunningAdmission
  /** The operator (throws without `operator`). */
  readonly operator: Managed
  /** The service network (throws without `serviceNetwork`). */
  readonly network: ServiceNetwork
  /** kube-controller-manager (throws without `controllers`). */
  readonly controllerManager: Managed
  /** The API server's audit events so far, oldest first (throws without `auditLog`). */
  auditEvents(): Promise<AuditEvent[]>
  /** The shipped manifests, rendered by kustomize as `kubectl apply -k` would. */
  manifests(): Promise<readonly Manifest[]>
  /** Creates a fresh namespace. */
  namespace(prefix?: string): Promise<string>
  /** Installs CRDs and waits until the API server serves them. */
  installCrds(...sources: readonly CrdSource[]): Promise<void>
  /** A kubeconfig authenticating as a service account (mcp-admission's unless named). */
  serviceAccountKubeconfig(account?: {
    readonly namespace: string
    readonly name: string
  }): Promise<string>
  /** mcp-admission's service-account files as the kubelet projects them into its pod. */
  podServiceAccount(): Promise<PodServiceAccount>
  /** Starts one more mcp-admission (stopped with the environment, or before by the caller). */
  startAdmission(options?: ServiceOptions): Promise<RunningAdmission>
  /** Registers the shipped webhooks in front of `admission` and waits until they are called. */
  registerWebhooks(admission?: RunningAdmission): Promise<void>
  /** Removes them and waits until the API server no longer calls them. */
  unregisterWebhooks(): Promise<void>
  /** Runs `stop` when the environment stops, before what was started until now. */
  onStop(stop: () => unknown): void
  /** Stops everything, last started first. */
  stop(): Promise<void>
}

/** The operator's identity as its Helm chart names it (`operator.serviceAccount.name`). */
export const OPERATOR_ACCOUNT = { namespace: 'toolhive-system', name: 'toolhive-operator' }

/** One environment for a tap test (file or subtest), torn down when it ends. */
export async function startEnvironment(
  t: Pick<Test, 'teardown' | 'comment'>,
  options: EnvironmentOptions = {},
): Promise<Environment> {
  const started = Date.now()
  const env = await createEnvironment(options)
  t.teardown(() => env.stop())
  t.comment(
    `e2e environment up in ${((Date.now() - started) / 1000).toFixed(1)} s (API server ${env.plane.server})`,
  )
  return env
}

/** Builds the environment `options` ask for; on a failure, stops what it had started. */
export async function createEnvironment(options: EnvironmentOptions = {}): Promise<Environment> {
  const stops: (() => unknown)[] = []
  const stop = async () => {
    const failures: unknown[] = []
    for (const each of stops.splice(0).reverse()) {
      try {
        await each()
      } catch (error) {
        failures.push(error)
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, 'stopping the e2e environment')
  }
  const runsService = options.service !== false
  if ((options.webhooks ?? runsService) && !runsService)
    throw new Error('webhooks need the service: `webhooks: true` with `service: false`')
  try {
    const network = options.serviceNetwork ? await startServiceNetwork() : undefined
    if (network) stops.push(() => network.close())
    const clientAuth = options.apiServerClientCertificate ? await webhookClientAuth() : undefined
    const audit = options.auditLog ? auditLog() : undefined
    const argSources = [
      options.apiServerArgs,
      network?.apiServerArgs,
      clientAuth?.apiServerArgs,
      audit?.apiServerArgs,
    ]
    const plane = await startControlPlane({
      ...(options.binaries ? { binaries: options.binaries } : {}),
      apiServerArgs: async (dir) => {
        const args: string[] = []
        for (const source of argSources) if (source) args.push(...(await source(dir)))
        return args
      },
    })
    stops.push(() => plane.stop())
    const env = environmentOn(plane, network, audit, {
      onStop: (each) => stops.push(each),
      stop,
    })
    // Before anything is installed, as in a cluster: the controllers then see every CRD appear.
    if (options.controllers && options.controllers.length > 0) {
      const manager = await startControllerManager(plane, options.controllers)
      env.onStop(() => manager.stop())
      env.started.controllerManager = manager
    }

    await env.installCrds(...(options.crds ?? ['fixtures']))
    if (options.identity ?? true) await installIdentity(env.kubectl, await env.manifests())
    await options.beforeService?.(env)
    if (options.service !== false) {
      const service = options.service ?? {}
      env.started.admission = await env.startAdmission(
        clientAuth
          ? {
              ...service,
              args: [`--client-ca=${await clientAuth.writeCa(plane.dir)}`, ...(service.args ?? [])],
              port: clientAuth.port,
            }
          : service,
      )
      if (options.webhooks ?? true) await env.registerWebhooks()
    }
    if (options.operator) env.started.operator = await startOperatorFor(env, options.operator)
    return env
  } catch (error) {
    await stop().catch(() => undefined)
    throw error
  }
}

/** The environment, with the instances the builder starts set as it starts them. */
type Started = Environment & {
  started: { admission?: RunningAdmission; operator?: Managed; controllerManager?: Managed }
}

/** The environment's operations on a running control plane. */
function environmentOn(
  plane: ControlPlane,
  network: ServiceNetwork | undefined,
  audit: AuditLog | undefined,
  lifecycle: Pick<Environment, 'onStop' | 'stop'>,
): Started {
  const kubectl = kubectlFor(plane.kubeconfig)
  const started: Started['started'] = {}
  const once = new Map<string, Promise<unknown>>()
  const memo = <T>(key: string, make: () => Promise<T>): Promise<T> => {
    const found = once.get(key) ?? make()
    once.set(key, found)
    return found as Promise<T>
  }
  const missing = (what: string, option: string): never => {
    throw new Error(`this environment has no ${what} (see the \`${option}\` option)`)
  }
  const { onStop } = lifecycle
  const env: Started = {
    plane,
    kubectl,
    started,
    get admission() {
      return started.admission ?? missing('mcp-admission', 'service')
    },
    get operator() {
      return started.operator ?? missing('operator', 'operator')
    },
    get network() {
      return network ?? missing('service network', 'serviceNetwork')
    },
    get controllerManager() {
      return started.controllerManager ?? missing('kube-controller-manager', 'controllers')
    },
    async auditEvents() {
      return (audit ?? missing('audit log', 'auditLog')).events()
    },
    manifests: () => memo('manifests', () => renderManifests(kubectl)),
    async namespace(prefix = 'e2e') {
      const name = `${prefix}-${randomBytes(3).toString('hex')}`
      await mustKubectl(kubectl, ['create', 'namespace', name])
      return name
    },
    async installCrds(...sources: readonly CrdSource[]) {
      for (const source of sources)
        if (source === 'fixtures') await installCrds(kubectl)
        else await installReleaseCrds(kubectl, source)
    },
    serviceAccountKubeconfig: (account?: { readonly namespace: string; readonly name: string }) =>
      account
        ? serviceAccountKubeconfig(kubectl, plane, account)
        : memo('kubeconfig', () => serviceAccountKubeconfig(kubectl, plane)),
    podServiceAccount: () =>
      memo('pod', () => podServiceAccount(kubectl, plane, join(plane.dir, 'serviceaccount'))),
    async startAdmission(service: ServiceOptions = {}) {
      const how = service.credentials ?? 'kubeconfig'
      const credentials =
        how === 'kubeconfig'
          ? await env.serviceAccountKubeconfig()
          : how === 'pod'
            ? await env.podServiceAccount()
            : await how(env)
      const admission = await startAdmission(plane, credentials, service.args ?? [], {
        ...(service.port === undefined ? {} : { port: service.port }),
        ...(service.certDir === undefined ? {} : { certDir: service.certDir }),
        ...(service.waitUntilReady === undefined ? {} : { waitUntilReady: service.waitUntilReady }),
      })
      onStop(() => admission.stop())
      return admission
    },
    async registerWebhooks(admission?: RunningAdmission) {
      const target = admission ?? env.admission
      await registerWebhooks(kubectl, await env.manifests(), target)
      await waitUntilCalledOn(target, kubectl, await memo('probe', () => env.namespace('probe')))
    },
    async unregisterWebhooks() {
      await mustKubectl(kubectl, [
        'delete',
        '--ignore-not-found',
        'mutatingwebhookconfiguration/mcp-admission',
        'validatingwebhookconfiguration/mcp-admission',
      ])
      const namespace = await memo('probe', () => env.namespace('probe'))
      await waitFor(
        'the API server to stop calling the webhooks',
        async () => ((await webhookMutates(kubectl, namespace)) ? undefined : true),
        { timeoutMs: 30_000, intervalMs: 250 },
      )
    },
    onStop,
    stop: lifecycle.stop,
  }
  return env
}

/** The operator as its own service account (cluster-admin, as its chart's RBAC amounts to). */
async function startOperatorFor(env: Environment, options: OperatorOptions): Promise<Managed> {
  const { namespace, name } = OPERATOR_ACCOUNT
  await mustKubectl(
    env.kubectl,
    ['apply', '--server-side', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }),
  )
  await mustKubectl(env.kubectl, ['create', 'serviceaccount', name, '-n', namespace])
  await mustKubectl(env.kubectl, [
    'create',
    'clusterrolebinding',
    name,
    '--clusterrole=cluster-admin',
    `--serviceaccount=${namespace}:${name}`,
  ])
  const kubeconfig = await env.serviceAccountKubeconfig(OPERATOR_ACCOUNT)
  const operator = await startOperator(env.plane, options.files, options.watch, { kubeconfig })
  env.onStop(() => operator.stop())
  return operator
}

/** The RunConfig ConfigMap a dry run in `namespace` sends to the mutating webhook. */
function runConfigProbe(namespace: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'webhook-probe-runconfig',
      namespace,
      labels: { 'toolhive.stacklok.io/component': 'run-config' },
    },
    data: { 'runconfig.json': '{}' },
  })
}

/** Whether the mutating webhook stamps a RunConfig ConfigMap in `namespace` (a dry run). */
async function webhookMutates(kubectl: Kubectl, namespace: string): Promise<boolean> {
  const out = await mustKubectl(
    kubectl,
    ['create', '--dry-run=server', '-o', 'json', '-f', '-'],
    runConfigProbe(namespace),
  )
  const annotations = (JSON.parse(out) as { metadata: { annotations?: Record<string, string> } })
    .metadata.annotations
  return Boolean(annotations?.['toolhive.stacklok.dev/content-checksum'])
}

/** The API server picks up new webhook configurations asynchronously; wait until it calls ours. */
export async function waitUntilWebhooksAreCalled(
  kubectl: Kubectl,
  namespace: string,
): Promise<void> {
  await waitFor(
    'the API server to call the mutating webhook',
    async () => ((await webhookMutates(kubectl, namespace)) ? true : undefined),
    { timeoutMs: 30_000, intervalMs: 250 },
  )
}

/**
 * Waits until the API server sends the mutating webhook's reviews to `admission` itself, counted
 * by the instance's own request metric: a patch seen on the probe proves neither that (a previous
 * instance may still be answering) nor anything with `--mutation-mode=observe`, which patches
 * nothing. It says nothing of the validating configuration, which the API server picks up on its
 * own schedule: a file that switches instances under a validating webhook waits for that itself.
 */
async function waitUntilCalledOn(
  admission: RunningAdmission,
  kubectl: Kubectl,
  namespace: string,
): Promise<void> {
  const calls = () =>
    admission.metric('controller_runtime_webhook_requests_total', { webhook: '/mutate' })
  const before = await calls()
  await waitFor(
    'the API server to call the mutating webhook on this instance',
    async () => {
      await mustKubectl(
        kubectl,
        ['create', '--dry-run=server', '-f', '-'],
        runConfigProbe(namespace),
      )
      return (await calls()) > before ? true : undefined
    },
    { timeoutMs: 30_000, intervalMs: 250, process: admission.process },
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
