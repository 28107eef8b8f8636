/**
 * Request body parsing for the admission routes. Only JSON is accepted, and it is parsed with
 * plain JSON.parse: `__proto__` and `constructor` are legal keys in Kubernetes maps (a ConfigMap
 * may have a data key named `__proto__`) and JSON.parse keeps them as inert own properties.
 * Every failure is answered with a message, as the API server and humans with curl both need: 415
 * for a body that is not declared JSON (as the API server itself answers), 400 for one that is
 * not a JSON document.
 */

import type { FastifyInstance } from 'fastify'

export const EMPTY_BODY_MESSAGE = 'request body is empty: expected an AdmissionReview JSON document'

class BodyError extends Error {
  readonly statusCode: 400 | 415
  override name = 'BodyError'
  constructor(message: string, statusCode: 400 | 415 = 400) {
    super(message)
    this.statusCode = statusCode
  }
}

/** The answer to any content type but JSON, well-formed or not. */
export function unsupportedContentType(type: string | undefined): BodyError {
  return new BodyError(
    `unsupported content type ${type ?? '(none)'}: expected application/json`,
    415,
  )
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
      // A byte order mark is read as for object files: allowed at the start, not part of the JSON.
      done(null, JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text))
    } catch (error) {
      done(new BodyError(`request body is not valid JSON: ${(error as Error).message}`))
    }
  })
  app.addContentTypeParser('*', (request, _payload, done) => {
    done(unsupportedContentType(request.headers['content-type']))
  })
}
