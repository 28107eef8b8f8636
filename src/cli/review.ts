/** `mcp-admission review`: one AdmissionReview through the same pipeline as the server. */

import { createAdmission } from '../admission/webhook.ts'
import type { WebhookName } from '../admission/review.ts'
import { MemoryView } from '../cluster/memory-view.ts'
import { fileSystemError, printable } from '../cluster/load-errors.ts'
import { loadObjects } from '../cluster/load-objects.ts'
import { MiB, readBoundedFile, readBoundedStream } from '../files/bounded-read.ts'
import { EXIT, UsageError } from './io.ts'
import type { CliIo } from './io.ts'

/** The server's body limit (7 MiB: two objects of up to 3 MiB and the envelope). */
export const REVIEW_MAX_BYTES = 7 * MiB

interface ReviewOptions {
  readonly objects: readonly string[]
  readonly webhook: WebhookName
}

export async function reviewCommand(
  file: string,
  options: ReviewOptions,
  io: CliIo,
): Promise<number> {
  const view = new MemoryView(await loadObjects(options.objects))
  const source = file === '-' ? 'standard input' : file
  // Bounded as the server bounds a request body; a file must be a regular file (not a FIFO or
  // device that would block or never end), standard input a stream of at most the same size.
  const read =
    file === '-'
      ? readBoundedStream(io.stdin, REVIEW_MAX_BYTES, source)
      : readBoundedFile(file, REVIEW_MAX_BYTES)
  const raw = (
    await read.catch((error: unknown) => {
      throw new UsageError(fileSystemError(source, error).message)
    })
  ).toString('utf8')
  let body: unknown
  try {
    body = JSON.parse(raw)
  } catch (error) {
    // V8's message quotes the text around the error: escaped, so a binary file prints no raw bytes.
    throw new UsageError(`${source} is not valid JSON: ${printable((error as Error).message)}`)
  }
  const outcome = await createAdmission({ view }).review(body, options.webhook)
  if (!outcome.ok) throw new UsageError(`${source}: ${outcome.message}`)
  io.stdout.write(`${JSON.stringify(outcome.review, null, 2)}\n`)
  const { response } = outcome.review
  if (response.allowed) return EXIT.ok
  return response.status?.code === 400 ? EXIT.usage : EXIT.denied
}
