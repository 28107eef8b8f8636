/** `mcp-admission review`: one AdmissionReview through the same pipeline as the server. */

import { createDecide } from '../admission/decide.ts'
import { decodeReview } from '../admission/decode.ts'
import { ENFORCING, respond } from '../admission/enforcement.ts'
import { allowed, denied, errored, toReview } from '../admission/response.ts'
import type {
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReviewResponse,
  WebhookName,
} from '../admission/review.ts'
import { MemoryView } from '../cluster/memory-view.ts'
import { fileSystemError } from '../cluster/load-errors.ts'
import { printableLine, renderText, renderWarnings } from '../policy/messages/render.ts'
import { loadObjects } from '../cluster/load-objects.ts'
import { MiB, readBoundedInput, readBoundedStream } from '../files/bounded-read.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { admitRequest } from './admit.ts'
import type { WriteResult } from './admit.ts'
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
  // Bounded as the server bounds a request body: a file, a pipe (`<(…)`) or standard input of
  // at most the same size (files/bounded-read.ts).
  const read =
    file === '-'
      ? readBoundedStream(io.stdin, REVIEW_MAX_BYTES, source)
      : readBoundedInput(file, REVIEW_MAX_BYTES)
  const raw = (
    await read.catch((error: unknown) => {
      throw new UsageError(fileSystemError(source, error).message)
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
  const decoded = decodeReview(body)
  if (!decoded.ok) {
    // Answered in-band when the uid can be read, as the server answers it.
    if (decoded.uid === undefined) throw new UsageError(`${source}: ${renderText(decoded.message)}`)
    const apiVersion = decoded.apiVersion ?? 'admission.k8s.io/v1'
    return answer(io, toReview(apiVersion, errored(decoded.uid, 400, decoded.message)))
  }
  const { apiVersion, request } = decoded.review
  const crds = catalog && { catalog, strict: options.strict === true }
  const result = await admitRequest(request, {
    decide: createDecide({ view }),
    crds,
    webhooks: [options.webhook],
  })
  return answer(io, toReview(apiVersion, responseOf(request, result, options.webhook)))
}

function withWarnings(warnings: readonly string[]): Pick<AdmissionResponse, 'warnings'> {
  return warnings.length === 0 ? {} : { warnings: renderWarnings(warnings) }
}

/** Prints the review; the exit code follows its verdict (a 400 is bad input). */
function answer(io: CliIo, review: AdmissionReviewResponse): number {
  io.stdout.write(`${JSON.stringify(review, null, 2)}\n`)
  const { response } = review
  if (response.allowed) return EXIT.ok
  return response.status?.code === 400 ? EXIT.usage : EXIT.denied
}

/**
 * The response the API server would act on: the webhook's own, or, when the write never reached
 * it, the CRD's refusal (a validation error, or a decoding error as 400) or the API server's 404
 * for a resource it does not serve. The CRD's warnings come first, as the client sees them.
 */
function responseOf(
  request: AdmissionRequest,
  result: WriteResult,
  webhook: WebhookName,
): AdmissionResponse {
  const decision = result.decisions[webhook]
  const { uid } = request
  if (result.admitted || result.refusal.step === webhook) {
    const response = decision ? respond(uid, decision, webhook, ENFORCING) : allowed(uid) // unreachable: the write went through this webhook
    const { serverWarnings } = result
    return serverWarnings.length === 0
      ? response
      : { ...response, warnings: renderWarnings([...serverWarnings, ...(response.warnings ?? [])]) }
  }
  const { refusal } = result
  if (refusal.step === 'server') {
    // What the API server answers for a resource it does not serve: no webhook is called.
    const status = { status: 'Failure', message: refusal.message, reason: 'NotFound', code: 404 }
    return { uid, allowed: false, status } as AdmissionResponse
  }
  if (refusal.step !== 'crd') return allowed(uid) // the other webhook: not simulated here
  const { verdict } = refusal
  const object: KubeObject = request.object ?? {}
  return 'decodeError' in verdict
    ? { ...errored(uid, 400, verdict.decodeError), ...withWarnings(result.serverWarnings) }
    : denied(uid, verdict.violations, result.serverWarnings, {
        group: String(object.apiVersion).split('/')[0] ?? '',
        kind: String(object.kind),
        name: typeof object.metadata?.name === 'string' ? object.metadata.name : undefined,
      })
}
