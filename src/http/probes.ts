/** The plain-HTTP probe app: liveness, readiness and Prometheus metrics, apart from admission. */

import Fastify, { LogController } from 'fastify'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Metrics } from '../metrics/metrics.ts'
import type { Readiness } from './readiness.ts'

export function buildProbeApp(options: {
  readonly logger: Logger
  readonly metrics: Metrics
  readonly readiness: Readiness
}): FastifyInstance {
  const { metrics, readiness } = options
  const app = Fastify({
    loggerInstance: options.logger,
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
  }) as unknown as FastifyInstance

  app.get('/healthz', (_request, reply) => reply.send({ status: 'ok' }))
  app.get('/readyz', (_request, reply) => {
    const failing = readiness.failing()
    if (failing.length === 0) return reply.send({ status: 'ready' })
    return reply.code(503).send({ status: 'not ready', failing })
  })
  app.get('/metrics', async (_request, reply) => {
    const body = await metrics.registry.metrics()
    return reply.type(metrics.registry.contentType).send(body)
  })
  return app
}
