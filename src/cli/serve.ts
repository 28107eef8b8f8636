/** `mcp-admission serve`: the admission server, with the embedded default when no cluster is set. */

import { fileURLToPath } from 'node:url'
import { resolve } from 'node:path'
import { createAdmission } from '../admission/webhook.ts'
import { MemoryView, objectKey } from '../cluster/memory-view.ts'
import { trimForView } from '../cluster/trim.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { readObjects } from '../cluster/load-objects.ts'
import { namedBy } from './objects-option.ts'
import type { ClusterView } from '../cluster/view.ts'
import { loadServerFiles, startServer } from '../http/server.ts'
import type { RunningServer } from '../http/server.ts'
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { Logger } from 'pino'
import { KubeApi } from '../cluster/kube-api.ts'
import { KubeView } from '../cluster/kube-view.ts'
import { createMetrics } from '../metrics/metrics.ts'
import type { Metrics } from '../metrics/metrics.ts'
import { TOOLHIVE_KIND_TABLE } from '../policy/kinds.ts'
import { startReconciler } from '../reconciler/controller.ts'
import { DEFAULT_TIMING, LEASE_NAME } from '../reconciler/leader-election.ts'
import { EXIT, UsageError } from './io.ts'
import type { CliIo } from './io.ts'
import { createLogger } from './logger.ts'
import { resolveServeConfig } from './serve-config.ts'
import type { Credentials, ServeConfig, ServeOptions } from './serve-config.ts'
import { asStartupError } from './startup-errors.ts'
import { loadClusterCredentials } from './kubeconfig.ts'

/** Sample objects shipped with the package (also the embedded default's view). */
const SAMPLES_DIR = fileURLToPath(new URL('../../samples/objects/', import.meta.url))

export async function serveCommand(options: ServeOptions, io: CliIo): Promise<number> {
  const resolved = resolveServeConfig(options, io.env, {
    samplesDir: SAMPLES_DIR,
    devCertDir: resolve('certs'),
  })
  if ('errors' in resolved) {
    // One problem is one line (a pod's termination message shows it whole); several, a list.
    const [only, ...more] = resolved.errors
    throw new UsageError(
      more.length === 0
        ? `invalid configuration: ${only}`
        : `invalid configuration:\n  ${resolved.errors.join('\n  ')}`,
    )
  }
  // Whatever fails while starting becomes one line and exit 2 (program.ts), never a stack.
  const running = await startFromConfig(resolved.config, io).catch((error: unknown) => {
    throw asStartupError(error, resolved.config.serverNames)
  })
  io.runUntilSignal(() => running.close())
  return EXIT.ok
}

/**
 * Starts the service described by a validated config. Every input is read and checked first
 * (kubeconfig, client CA, cert dir, object files), then the certificates are generated if need
 * be, then both listeners bind, and only then do the watches start: a failed start leaves
 * nothing running, and the process exits by itself.
 */
async function startFromConfig(config: ServeConfig, io: CliIo): Promise<RunningServer> {
  const logger = createLogger(config.logLevel, io.stdout)
  // startServer checks these again itself; checked here too so that no development certificate
  // is written for a start that is bound to fail.
  if (config.mode !== 'reconciler') await loadServerFiles(config.server)
  const metrics = createMetrics()
  const { view, cluster } = await createView(config, io, logger, metrics)
  if (config.generateDevCertificates) {
    // Loaded only here: the x509 generator is not needed in a cluster.
    const { ensureDevCertificates } = await import('../http/dev-cert-dir.ts')
    const { created, written } = await ensureDevCertificates(config.server.certDir)
    if (created)
      logger.info(
        { certDir: config.server.certDir, files: written },
        'generated development certificates',
      )
  }
  const server = await startServer(config.server, {
    admission:
      config.mode === 'reconciler'
        ? undefined
        : createAdmission({
            view,
            operatorServiceAccount: config.operatorServiceAccount,
            enforcement: config.enforcement,
          }),
    view,
    logger,
    metrics,
  })
  if (cluster) {
    cluster.view.start()
    logger.info(
      { server: cluster.server },
      'reading the cluster: not ready until the served ToolHive kinds are known and listed',
    )
  }
  const reconciler =
    cluster && config.mode !== 'admission'
      ? startReconciler({
          api: cluster.api,
          view: cluster.view,
          logger,
          metrics,
          election: {
            ...DEFAULT_TIMING,
            namespace: config.leaderElectionNamespace,
            name: LEASE_NAME,
            identity: `${hostname()}_${randomUUID().slice(0, 8)}`,
          },
        })
      : undefined
  let closing: Promise<void> | undefined
  const running: RunningServer = {
    ...server,
    // The view outlives the drain (requests in flight may read it); the Lease is released on the way.
    close: () =>
      (closing ??= (async () => {
        await server.close()
        await reconciler?.stop()
        await cluster?.view.stop()
      })()),
  }
  if (config.view.kind === 'embedded') {
    logger.info(
      {
        objects: config.view.objects,
        tryIt: `curl --cacert ${config.server.certDir}/ca.crt -H 'content-type: application/json' --data @samples/reviews/runconfig-configmap-create.json ${running.admissionUrl}/mutate`,
      },
      'embedded default: no cluster configured, serving an in-memory view of sample objects',
    )
  }
  return running
}

interface CreatedView {
  readonly view: ClusterView
  /** Set when reading a real cluster: what the reconciler needs. */
  readonly cluster?: Cluster
}

async function createView(
  config: ServeConfig,
  io: CliIo,
  logger: Logger,
  metrics: Metrics,
): Promise<CreatedView> {
  switch (config.view.kind) {
    case 'embedded':
    case 'files': {
      // Held as the cluster view holds them: trimmed to what the rules read. The package's own
      // samples are no option's; anything else came from --objects.
      const { objects } = config.view
      return {
        view: sameAs(objects, [SAMPLES_DIR])
          ? await trimmedView(objects)
          : await namedBy('--objects', () => trimmedView(objects)),
      }
    }
    case 'cluster': {
      const cluster = await connectCluster(config.view.credentials, io, logger, metrics)
      return { view: cluster.view, cluster }
    }
  }
}

interface Cluster {
  readonly api: KubeApi
  /** Not started: its watches begin once the listeners are up. */
  readonly view: KubeView
  /** The API server's URL, for the log. */
  readonly server: string
}

/** Reads the credentials (a kubeconfig, or the pod's) and builds the view; nothing runs yet. */
async function connectCluster(
  credentials: Credentials,
  io: CliIo,
  logger: Logger,
  metrics: Metrics,
): Promise<Cluster> {
  const clusterCredentials = await loadClusterCredentials(credentials, {
    logger,
    serviceAccountDir: io.serviceAccountDir,
    env: io.env,
    execTimeoutMs: io.execTimeoutMs,
  })
  const server = clusterCredentials.server
  const api = new KubeApi(clusterCredentials)
  // The initial lists keep only trimmed objects, page by page, but parsing the pages still grows
  // the heap well past what stays live: the same peak as parsing files.
  const view = new KubeView({
    api,
    logger,
    onSynced: releaseLoadingPeak,
    onWatchError: (kind) => {
      metrics.viewErrors.inc({ kind })
    },
  })
  metrics.reportKinds(() => ({
    kinds: TOOLHIVE_KIND_TABLE.map((entry) => entry.kind),
    served: new Map([...view.servedKinds()].map(([kind, resource]) => [kind, resource.version])),
    degraded: new Set(view.degradedKinds().keys()),
  }))
  return { api, view, server }
}

/** Reads the files object by object, keeping only the trimmed form (a low peak for large views). */
function sameAs(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i])
}

async function trimmedView(paths: readonly string[]): Promise<MemoryView> {
  const view = new MemoryView()
  for await (const object of readObjects(paths)) view.put(trimmed(object))
  releaseLoadingPeak()
  return view
}

/**
 * Loading a view (parsing files, or the cluster's initial lists) grows the heap to several times
 * what stays live, and V8 keeps those pages until its memory reducer runs, which a busy server
 * may never trigger. With `--expose-gc` (npm start and the image) one compacting collection,
 * before the server reports ready, returns them to the system.
 */
function releaseLoadingPeak(): void {
  globalThis.gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' })
}

function trimmed(object: KubeObject): KubeObject {
  const key = objectKey(object)
  return key ? trimForView(key.kind, object) : object
}
