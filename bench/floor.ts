/**
 * The floor: the least a Node HTTPS webhook can do, on the same machine and in the same run as the
 * product. Fastify over Node's https with the product's TLS settings, certificate and socket
 * timeouts; the body parsed with JSON.parse (as the product does); the answer is "allowed" with
 * the uid. Nothing else: no envelope check, routing, policy, diff, metrics or logging.
 *
 * Run as a forked child: `floor.ts <port> <cert-dir>`; it reports `ready` over IPC once
 * listening, and exits when the parent goes away.
 */

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import { BODY_LIMIT_BYTES } from '../src/http/app.ts'
import { TLS_OPTIONS } from '../src/http/server.ts'

export function buildFloor(certDir: string): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    keepAliveTimeout: 100_000,
    requestTimeout: 30_000,
    https: {
      ...TLS_OPTIONS,
      cert: readFileSync(join(certDir, 'tls.crt')),
      key: readFileSync(join(certDir, 'tls.key')),
    },
  }) as unknown as FastifyInstance
  app.server.headersTimeout = 10_000
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string))
    } catch (error) {
      done(error as Error)
    }
  })
  const answer = async (request: { body: unknown }) => {
    const review = request.body as { apiVersion: string; kind: string; request: { uid: string } }
    return {
      apiVersion: review.apiVersion,
      kind: review.kind,
      response: { uid: review.request.uid, allowed: true },
    }
  }
  app.post('/mutate', answer)
  app.post('/validate', answer)
  return app
}

if (process.send !== undefined) {
  const [port, certDir] = process.argv.slice(2)
  process.on('disconnect', () => process.exit(0))
  setTimeout(() => process.exit(0), 30 * 60_000).unref()
  const app = buildFloor(certDir!)
  await app.listen({ host: '127.0.0.1', port: Number(port) })
  process.send('ready')
}
