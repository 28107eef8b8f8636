/** `mcp-admission review`: one AdmissionReview through the same pipeline as the server. */

import { createAdmission } from '../admission/webhook.ts'
import type { WebhookName } from '../admission/review.ts'
import { MemoryView } from '../cluster/memory-view.ts'
import { inputFileError } from '../cluster/load-errors.ts'
import { printableLine } from '../policy/messages/render.ts'
import { loadObjects } from '../cluster/load-objects.ts'
import { MiB, readBoundedFile, readBoundedStream } from '../files/bounded-read.ts'
import { isRecord } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import type { CrdCatalog } from '../policy/crd/crd-catalog.ts'
import { denied, errored } from '../admission/response.ts'
import { renderWarnings } from '../policy/messages/render.ts'
import { crdStep } from './admit.ts'
import { loadCrdCatalog, servedByCatalog } from './crds.ts'
import { EXIT, UsageError } from './io.ts'
import { namedBy } from './objects-option.ts'
import type { CliIo } from './io.ts'

/** The server's body limit (7 MiB: two objects of up to 3 MiB and the envelope). */
export const REVIEW_MAX_BYTES = 7 * MiB

interface ReviewOptions {
  readonly objects: readonly string[]
  readonly webhook: WebhookName
  /** CRDs the request's object is first evaluated against, as the API server does. */
  readonly crds?: readonly string[]
  /** Or a kubeconfig whose cluster's ToolHive CRDs are read for the same purpose. */
  readonly kubeconfig?: string | undefined
  readonly strict?: boolean
}

export async function reviewCommand(
  file: string,
  options: ReviewOptions,
  io: CliIo,
): Promise<number> {
  const catalog = await loadCrdCatalog(options, io)
  const view = new MemoryView(
    await namedBy('--objects', () => loadObjects(options.objects)),
    servedByCatalog(catalog),
  )
  const source = file === '-' ? 'standard input' : file
  // Bounded as the server bounds a request body; a file must be a regular file (not a FIFO or
  // device that would block or never end), standard input a stream of at most the same size.
  const read =
    file === '-'
      ? readBoundedStream(io.stdin, REVIEW_MAX_BYTES, source)
      : readBoundedFile(file, REVIEW_MAX_BYTES)
  const raw = (
    await read.catch((error: unknown) => {
      throw new UsageError(inputFileError(source, error).message)
    })
  ).toString('utf8')
  let body: unknown
  try {
    // A byte order mark is allowed at the start, as in object files.
    body = JSON.parse(raw.startsWith('\uFEFF') ? raw.slice(1) : raw)
  } catch (error) {
    // V8's message quotes the text around the error: escaped, so a binary file prints no raw bytes.
    throw new UsageError(`${source} is not valid JSON: ${printableLine((error as Error).message)}`)
  }
  const crd = catalog && crdVerdict(catalog, body, options.strict === true)
  if (crd?.refusal !== undefined) {
    io.stdout.write(`${JSON.stringify(crd.refusal, null, 2)}\n`)
    return EXIT.denied
  }
  const outcome = await createAdmission({ view }).review(crd?.body ?? body, options.webhook)
  if (!outcome.ok) throw new UsageError(`${source}: ${outcome.message}`)
  if (crd !== undefined && crd.warnings.length > 0) {
    const response = outcome.review.response
    response.warnings = renderWarnings([...crd.warnings, ...(response.warnings ?? [])])
  }
  io.stdout.write(`${JSON.stringify(outcome.review, null, 2)}\n`)
  const { response } = outcome.review
  if (response.allowed) return EXIT.ok
  return response.status?.code === 400 ? EXIT.usage : EXIT.denied
}

/** What the CRD says of a review's object: a refusal to print, or the review with the object decoded. */
interface CrdReview {
  readonly refusal?: unknown
  readonly body: unknown
  readonly warnings: readonly string[]
}

/**
 * The API server decodes a custom resource against its CRD and validates it before any webhook
 * sees it: a refusal is its answer (as a review response, so it reads like one), and an allowed
 * object reaches the webhook pruned and defaulted, with the CRD's warnings. Undefined when the
 * review is not a CREATE or UPDATE of a kind the CRDs define (the webhook then judges as usual).
 */
function crdVerdict(catalog: CrdCatalog, body: unknown, strict: boolean): CrdReview | undefined {
  if (!isRecord(body) || !isRecord(body.request)) return undefined
  const request = body.request
  const operation = request.operation
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || !isRecord(request.object))
    return undefined
  const object = request.object as KubeObject
  const step = crdStep(
    { catalog, strict },
    {
      operation,
      object,
      oldObject: isRecord(request.oldObject) ? request.oldObject : undefined,
    },
  )
  if (step.kind === 'unjudged') return undefined
  const uid = typeof request.uid === 'string' ? request.uid : ''
  const review = (response: unknown) => ({
    apiVersion: body.apiVersion,
    kind: 'AdmissionReview',
    response,
  })
  if (step.kind === 'unserved') {
    // What the API server answers for a resource it does not serve: no webhook is called.
    const status = { status: 'Failure', message: step.message, reason: 'NotFound', code: 404 }
    return { refusal: review({ uid, allowed: false, status }), body, warnings: [] }
  }
  if (step.kind === 'refused') {
    const { verdict } = step
    const response =
      'decodeError' in verdict
        ? errored(uid, 400, verdict.decodeError)
        : denied(uid, verdict.violations, verdict.warnings, {
            group: String(object.apiVersion).split('/')[0] ?? '',
            kind: String(object.kind),
            name: typeof object.metadata?.name === 'string' ? object.metadata.name : undefined,
          })
    return { refusal: review(response), body, warnings: verdict.warnings }
  }
  // The CRD's warnings ride on the object's review: the webhook's own warnings follow them.
  return {
    body: { ...body, request: { ...request, object: step.object } },
    warnings: step.warnings,
  }
}
