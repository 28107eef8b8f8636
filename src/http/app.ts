/**
 * The admission Fastify app: routes, body parsing, metrics and logging, but no listen (the
 * server module owns TLS and sockets, tests use `inject`).
 */

import Fastify, { LogController } from 'fastify'
import type { FastifyInstance, FastifyServerOptions, onRequestHookHandler } from 'fastify'
import type { ServerOptions as HttpsOptions } from 'node:https'
import type { Logger } from 'pino'
import type { Admission, ReviewOutcome } from '../admission/webhook.ts'
import { validationActionsFor } from '../admission/enforcement.ts'
import type { Enforcement } from '../admission/enforcement.ts'
import { WEBHOOKS } from '../admission/review.ts'
import type { WebhookName } from '../admission/review.ts'
import { EMPTY_BODY_MESSAGE, acceptJsonOnly, unsupportedContentType } from './body.ts'
import { fallbackLog } from './fallback-log.ts'
import type { FallbackLog } from './fallback-log.ts'
import type { Metrics } from '../metrics/metrics.ts'

/** Two objects of up to 3 MiB each, plus the envelope (docs/wire.md#behaviour-on-the-wire). */
export const BODY_LIMIT_BYTES = 7 * 1024 * 1024

interface AdmissionAppOptions {
  readonly admission: Admission
  readonly logger: Logger
  readonly metrics: Metrics
  /** TLS options; absent only for `inject` tests. */
  readonly https?: HttpsOptions
  /** Socket tuning passed through to Fastify (keep-alive, timeouts). */
  readonly server?: Pick<
    FastifyServerOptions,
    'keepAliveTimeout' | 'requestTimeout' | 'connectionTimeout' | 'maxRequestsPerSocket'
  >
}

export function buildAdmissionApp(options: AdmissionAppOptions): FastifyInstance {
  const { admission, logger, metrics } = options
  const app = Fastify({
    loggerInstance: logger,
    // One line per review is logged by the route itself; Fastify's own per-request lines are noise.
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger per request: nothing logs through it (the review's own line carries its
    // uid), so it would be an allocation per review for nothing. Fastify's rare lines use the root.
    childLoggerFactory: (root) => root,
    bodyLimit: BODY_LIMIT_BYTES,
    // Requests that arrive during a drain are still answered (on a closing connection): a 503
    // would count as a webhook failure at the API server.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ...(options.https ? { https: options.https } : {}),
    ...options.server,
  }) as unknown as FastifyInstance

  acceptJsonOnly(app)
  const fallbacks = fallbackLog(logger)
  app.addHook('onClose', (_instance, done) => {
    fallbacks.flush()
    done()
  })

  app.setErrorHandler(
    (thrown: { code?: string; statusCode?: number; message: string }, request, reply) => {
      // A content type Fastify cannot even parse ("foo", ";") gets the same words as any other.
      const error =
        thrown.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? unsupportedContentType(request.headers['content-type'])
          : thrown
      const status =
        error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500
      if (status >= 500) request.log.error({ err: error }, 'request failed')
      else request.log.debug({ err: error }, 'rejected malformed request')
      return reply.code(status).send({ code: status, message: error.message })
    },
  )
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ code: 404, message: `no route for ${request.method} ${request.url}` }),
  )

  for (const webhook of WEBHOOKS) {
    const path = `/${webhook}`
    app.post(path, { onRequest: instrument(metrics, path) }, async (request, reply) => {
      if (request.body === undefined) {
        return reply.code(400).send({ code: 400, message: EMPTY_BODY_MESSAGE })
      }
      const outcome = await admission.review(request.body, webhook)
      logOutcome(logger, webhook, outcome)
      if (webhook === 'mutate') countMutation(metrics, outcome, admission.enforcement)
      countViolations(metrics, outcome, admission.enforcement)
      countGuardedDelete(metrics, outcome)
      countFallback(metrics, fallbacks, outcome)
      if (!outcome.ok) return reply.code(400).send({ code: 400, message: outcome.message })
      return outcome.review
    })
  }
  return app
}

/**
 * controller-runtime's webhook metrics for the route at `path`, counted on close so aborts count
 * too. A hook of the route itself: no per-request lookup of which route this is.
 */
function instrument(metrics: Metrics, path: string): onRequestHookHandler {
  const labels = { webhook: path }
  return (_request, reply, done) => {
    const started = process.hrtime.bigint()
    metrics.inFlight.inc(labels)
    reply.raw.once('close', () => {
      metrics.inFlight.dec(labels)
      metrics.latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9)
      metrics.requests.inc({ webhook: path, code: String(reply.raw.statusCode) })
    })
    done()
  }
}

/**
 * `mcp_admission_mutations_total` for a review a mutating route admitted. The labels come from
 * the route, never from the request, so a client cannot grow the series.
 */
function countMutation(metrics: Metrics, outcome: ReviewOutcome, enforcement: Enforcement): void {
  const { route, verdict, writer } = (outcome.ok && outcome.decision) || {}
  if (!route || verdict?.kind !== 'admitted') return
  const { resource = route.kind.toLowerCase(), subResource } = route
  metrics.mutations.inc({
    resource: subResource === '' ? resource : `${resource}/${subResource}`,
    changed: String(verdict.patch.length > 0),
    writer: writer ?? 'other',
    mode: enforcement.mutationMode,
  })
}

/** `mcp_admission_guarded_deletes_total`: a delete of a referenced object, whatever became of it. */
function countGuardedDelete(metrics: Metrics, outcome: ReviewOutcome): void {
  const { route, verdict } = (outcome.ok && outcome.decision) || {}
  if (!route || verdict?.kind === 'failed' || verdict?.protection === undefined) return
  metrics.guardedDeletes.inc({ kind: route.kind, protection: verdict.protection })
}

/**
 * `mcp_admission_live_read_fallbacks_total` and its log: the operator's write admitted with its
 * own stamps, by the owner's kind (a kind of the table, never the request's words).
 */
function countFallback(metrics: Metrics, log: FallbackLog, outcome: ReviewOutcome): void {
  const { verdict } = (outcome.ok && outcome.decision) || {}
  if (verdict?.kind !== 'admitted' || verdict.unproven === undefined) return
  metrics.liveReadFallbacks.inc({ kind: verdict.unproven.ownerKind })
  log.record(verdict.unproven.ownerKind)
}

/** `mcp_admission_violations_total`: each violation once per action taken on it. */
function countViolations(metrics: Metrics, outcome: ReviewOutcome, enforcement: Enforcement): void {
  const { route, rule, verdict } = (outcome.ok && outcome.decision) || {}
  if (!route || verdict?.kind !== 'refused') return
  const count = verdict.violations.length
  for (const action of validationActionsFor(rule, enforcement))
    metrics.violations.inc({ kind: route.kind, action: action.toLowerCase() }, count)
}

/**
 * The log contract, as controller-runtime's and Kyverno's webhooks keep it: one info line for what
 * someone must act on (a denial, a patch on the ToolHive operator's own write: a disagreement,
 * docs/enforcement.md#never-a-fight-with-the-operator) and an error line for a failure; every
 * routine review, patched or not, at debug. At info the log costs nothing per ordinary review: the
 * line was 9 % of the CPU of a burst.
 */
function logOutcome(logger: Logger, webhook: WebhookName, outcome: ReviewOutcome): void {
  if (!outcome.ok) {
    logger.debug(
      { webhook, reason: outcome.message },
      'rejected a body that is not an AdmissionReview',
    )
    return
  }
  const { response } = outcome.review
  const request = outcome.request
  const fields = {
    webhook,
    uid: response.uid,
    kind: request?.kind.kind,
    namespace: request?.namespace,
    name: request?.name,
    operation: request?.operation,
    allowed: response.allowed,
    code: response.status?.code,
    patched: response.patch !== undefined,
  }
  // A patch observed but not returned is still a disagreement with the operator, said the same way.
  const { verdict, writer } = outcome.decision ?? {}
  const changed = verdict?.kind === 'admitted' && verdict.patch.length > 0
  const observed = response.patch === undefined
  if (verdict?.kind === 'failed' && verdict.error !== undefined)
    logger.error({ ...fields, err: verdict.error }, 'admission failed')
  else if (!response.allowed)
    logger.info({ ...fields, reason: response.status?.message }, 'admission denied')
  else if (verdict?.kind === 'refused')
    logger.info({ ...fields, reason: response.warnings }, 'admission found violations')
  else if (changed && writer === 'operator')
    logger.info(
      { ...fields, writer: 'operator' },
      observed
        ? 'admission observed a patch of an operator write'
        : 'admission patched an operator write',
    )
  else if (changed)
    logger.debug(fields, observed ? 'admission observed a patch' : 'admission patched')
  else logger.debug(fields, 'admission allowed')
}
