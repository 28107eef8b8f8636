/** `mcp-admission review`: one AdmissionReview through the same pipeline as the server. */

import { readFile } from 'node:fs/promises'
import { text } from 'node:stream/consumers'
import { createAdmission } from '../admission/webhook.ts'
import type { WebhookName } from '../admission/review.ts'
import { MemoryView } from '../cluster/memory-view.ts'
import { fileSystemError, printable } from '../cluster/load-errors.ts'
import { loadObjects } from '../cluster/load-objects.ts'
import { EXIT, UsageError } from './io.ts'
import type { CliIo } from './io.ts'

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
  const raw =
    file === '-'
      ? await text(io.stdin)
      : await readFile(file, 'utf8').catch((error: unknown) => {
          throw new UsageError(fileSystemError(file, error).message)
        })
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
