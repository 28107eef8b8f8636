/**
 * Request body parsing for the admission routes. Only JSON is accepted, and it is parsed with
 * plain JSON.parse: `__proto__` and `constructor` are legal keys in Kubernetes maps (a ConfigMap
 * may have a data key named `__proto__`) and JSON.parse keeps them as inert own properties.
 * Every failure is a 400 with a message, as the API server and humans with curl both need.
 */

import type { FastifyInstance } from 'fastify'

export const EMPTY_BODY_MESSAGE = 'request body is empty: expected an AdmissionReview JSON document'

export class BodyError extends Error {
  readonly statusCode = 400
  override name = 'BodyError'
}

/** Installs the JSON-only parsers on `app` (call before routes are added). */
export function acceptJsonOnly(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string
    if (text.trim() === '') {
      done(new BodyError(EMPTY_BODY_MESSAGE))
      return
    }
    try {
      done(null, JSON.parse(text))
    } catch (error) {
      done(new BodyError(`request body is not valid JSON: ${(error as Error).message}`))
    }
  })
  app.addContentTypeParser('*', (request, _payload, done) => {
    const type = request.headers['content-type'] ?? '(none)'
    done(new BodyError(`unsupported content type ${type}: expected application/json`))
  })
}
