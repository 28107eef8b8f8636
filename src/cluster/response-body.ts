/**
 * An API server's answer read within bounds: a body whole (a GET's object or list page), or a
 * watch stream line by line. Without one, an answer that never ends (a broken server or proxy, a
 * body that is not Kubernetes') grows a string until the heap gives out; with one, it is an error
 * saying so, and the connection is dropped.
 *
 * The body bound is far above the largest answer asked for: a page of 50 CRDs (cli/cluster-crds.ts)
 * is at most some 75 MiB, each object being under etcd's 1.5 MiB request limit, and a page of 500
 * ToolHive objects, RunConfig ConfigMaps or proxy Deployments (list-pages.ts, kube-view.ts) is
 * some 10 MiB at 20 KiB each, several times their usual size. It stays below V8's longest string
 * (some 512 MiB), where reading would fail anyway, and without a word on why.
 */

import type { IncomingMessage } from 'node:http'
import { StringDecoder } from 'node:string_decoder'
import { MiB, sizeText } from '../files/bounded-read.ts'

/** The most a GET's body may hold (see above). */
export const BODY_MAX_BYTES = 256 * MiB

/**
 * The most one watch event may hold: one object, which etcd's 1.5 MiB request limit bounds
 * (its JSON may be some times the stored form: base64 of binary data, a protobuf-stored kind).
 */
export const WATCH_LINE_MAX_BYTES = 16 * MiB

/** Thrown when an answer passes its bound. */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError'
}

/** The whole body as text, decoded as it arrives (no Buffer of a whole page); at most `maxBytes`. */
export async function readBody(response: IncomingMessage, maxBytes: number): Promise<string> {
  const decoder = new StringDecoder('utf8')
  let bytes = 0
  let body = ''
  for await (const chunk of response as AsyncIterable<Buffer>) {
    bytes += chunk.length
    if (bytes > maxBytes) {
      response.destroy()
      throw new BodyTooLargeError(`the answer is larger than ${sizeText(maxBytes)}: not read`)
    }
    body += decoder.write(chunk)
  }
  return body + decoder.end()
}

/**
 * The stream's lines (without `\n` or `\r\n`), each at most `maxBytes`. Split on the byte, which
 * never occurs inside a UTF-8 character, so each line is decoded whole.
 */
export async function* boundedLines(
  stream: AsyncIterable<Buffer>,
  maxBytes: number,
): AsyncGenerator<string> {
  let pending: Buffer[] = []
  let pendingBytes = 0
  const tooLong = () =>
    new BodyTooLargeError(`a line of the answer is longer than ${sizeText(maxBytes)}: not read`)
  for await (const chunk of stream) {
    let start = 0
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      pendingBytes += end - start
      if (pendingBytes > maxBytes) throw tooLong()
      pending.push(chunk.subarray(start, end))
      yield lineOf(pending)
      pending = []
      pendingBytes = 0
      start = end + 1
    }
    pendingBytes += chunk.length - start
    if (pendingBytes > maxBytes) throw tooLong()
    if (start < chunk.length) pending.push(chunk.subarray(start))
  }
  if (pendingBytes > 0) yield lineOf(pending)
}

function lineOf(parts: readonly Buffer[]): string {
  const line = (parts.length === 1 ? parts[0] : Buffer.concat(parts))?.toString('utf8') ?? ''
  return line.endsWith('\r') ? line.slice(0, -1) : line
}
