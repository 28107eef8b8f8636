/** `mcp-admission serve`: the admission server, with the embedded default when no cluster is set. */

import { fileURLToPath } from 'node:url'
import { resolve } from 'node:path'
import { createAdmission } from '../admission/webhook.ts'
import { MemoryView } from '../cluster/memory-view.ts'
import { loadObjects } from '../cluster/load-objects.ts'
import type { ClusterView } from '../cluster/view.ts'
import { startServer } from '../http/server.ts'
import type { RunningServer } from '../http/server.ts'
import { EXIT, UsageError } from './io.ts'
import type { CliIo } from './io.ts'
import { createLogger } from './logger.ts'
import { resolveServeConfig } from './serve-config.ts'
import type { ServeConfig, ServeOptions } from './serve-config.ts'

/** Sample objects shipped with the package (also the embedded default's view). */
export const SAMPLES_DIR = fileURLToPath(new URL('../../samples/objects/', import.meta.url))

export async function serveCommand(options: ServeOptions, io: CliIo): Promise<number> {
  const resolved = resolveServeConfig(options, io.env, {
    samplesDir: SAMPLES_DIR,
    devCertDir: resolve('certs'),
  })
  if ('errors' in resolved) {
    throw new UsageError(`invalid configuration:\n  ${resolved.errors.join('\n  ')}`)
  }
  const running = await startFromConfig(resolved.config, io)
  io.runUntilSignal(() => running.close())
  return EXIT.ok
}

/** Starts the service described by a validated config (used by tests too). */
export async function startFromConfig(config: ServeConfig, io: CliIo): Promise<RunningServer> {
  const logger = createLogger(config.logLevel, io.stdout)
  if (config.generateDevCertificates) {
    // Loaded only here: the x509 generator is not needed in a cluster.
    const { ensureDevCertificates } = await import('../http/dev-certs.ts')
    const { created } = await ensureDevCertificates(config.server.certDir)
    if (created)
      logger.info({ certDir: config.server.certDir }, 'generated development certificates')
  }
  const view = await createView(config)
  const running = await startServer(config.server, {
    admission: createAdmission({ view }),
    view,
    logger,
  })
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

async function createView(config: ServeConfig): Promise<ClusterView> {
  switch (config.view.kind) {
    case 'embedded':
    case 'files':
      return new MemoryView(await loadObjects(config.view.objects))
    case 'cluster':
      throw new UsageError(
        'a cluster is configured (in a pod or via --kubeconfig/KUBECONFIG) but this build has no ' +
          'cluster-backed view yet; pass --objects to serve from files',
      )
  }
}
