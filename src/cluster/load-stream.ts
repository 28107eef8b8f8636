/**
 * The documents of an object file's text, split as kubectl splits them (apimachinery's
 * YAMLOrJSONDecoder, as cli-runtime's StreamVisitor uses it):
 * * when the first non-space character in the first 4096 bytes is `{`, the text is a stream of
 *   JSON values (`{…}{…}` or one per line); should one fail to parse while at most one has been
 *   read, the rest is read as YAML from there (after the spaces up to the end of that line), and
 *   a failure of that first YAML document is reported as the JSON error;
 * * YAML is split on lines starting with `---` (CRLF line ends read as LF); only a comment may
 *   follow the marker, anything else is an error (`--- |`, `--- {a: 1}`, `----`). Each chunk is
 *   then one YAML text of its own: a directive, a `...` marker or a byte order mark is read by
 *   the YAML reader inside it, never by the split.
 */

import { scanJsonValue } from './load-json.ts'
import type { JsonScan } from './load-json.ts'

export interface StreamDocument {
  /** A JSON value (and what scanning it found) rather than a YAML text. */
  readonly json?: JsonScan
  /** The document's text: a JSON value, or a YAML chunk with its line ends as LF. */
  readonly text: string
  /** Where it starts in the file's text, and on which line (1-based). */
  readonly offset: number
  readonly line: number
  /** What to report should this document fail: the JSON error it was read after. */
  readonly failure?: StreamError
}

/** A document the split itself refuses, with where in the file's text. */
export class StreamError extends Error {
  override name = 'StreamError'
  readonly offset: number
  constructor(message: string, offset: number) {
    super(message)
    this.offset = offset
  }
}

/** The bytes kubectl peeks at to tell a JSON stream. */
const JSON_PEEK_BYTES = 4096

/** The documents of `text` in order; a StreamError where kubectl's split fails. */
export function* kubectlDocuments(text: string): Generator<StreamDocument> {
  if (!startsJsonStream(text)) {
    yield* yamlDocuments(text, 0)
    return
  }
  let consumed = 0
  let count = 0
  for (;;) {
    const start = skipJsonSpace(text, consumed)
    if (start >= text.length) return
    const scan = scanJsonValue(text, start)
    if (scan.error === undefined) {
      yield { json: scan, text: text.slice(start, scan.end), offset: start, line: 0 }
      count++
      consumed = scan.end
      continue
    }
    const failure = new StreamError(scan.error, scan.offset)
    // Two JSON values make an unambiguous JSON stream: no YAML after them.
    if (count > 1) throw failure
    const yamlStart = consumeLineSpace(text, consumed)
    if (yamlStart === undefined) throw failure
    let first = true
    for (const document of yamlDocuments(text, yamlStart)) {
      yield first ? { ...document, failure } : document
      first = false
    }
    return
  }
}

/** YAML documents from `start`: chunks between `---` lines. */
function* yamlDocuments(text: string, start: number): Generator<StreamDocument> {
  let line = lineOf(text, start)
  // The chunk being read: from `chunk` (-1: none yet), starting on line `chunkLine`.
  let chunk = -1
  let chunkLine = line
  const document = (end: number): StreamDocument => {
    const raw = text.slice(chunk, end)
    // Lines end in LF, the last one too, as kubectl's line reader hands them on.
    const lf = raw.includes('\r\n') ? raw.replaceAll('\r\n', '\n') : raw
    return { text: lf.endsWith('\n') ? lf : `${lf}\n`, offset: chunk, line: chunkLine }
  }
  for (let at = start; at < text.length; line++) {
    const newline = text.indexOf('\n', at)
    const end = newline === -1 ? text.length : newline + 1
    if (text.startsWith('---', at)) {
      const content = text.slice(at + 3, end).replace(/\r?\n$/, '')
      const after = trimGoSpace(content)
      if (after !== '' && !after.startsWith('#')) {
        throw new StreamError(`invalid document separator: ${after}`, at)
      }
      if (chunk !== -1) {
        yield document(at)
        chunk = -1
        at = end
        continue
      }
      // A separator that starts a document stays in it: kubectl passes it to the YAML reader
      // (where a byte order mark after it is then text, not a mark).
    }
    if (chunk === -1) {
      chunk = at
      chunkLine = line
    }
    at = end
  }
  if (chunk !== -1) yield document(text.length)
}

/** The 1-based line of `offset` in `text`. */
export function lineOf(text: string, offset: number): number {
  let line = 1
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++
  }
  return line
}

/** Whether kubectl reads `text` as a JSON stream: `{` first, after spaces, within its peek. */
function startsJsonStream(text: string): boolean {
  let bytes = 0
  for (const c of text) {
    if (bytes >= JSON_PEEK_BYTES) return false
    if (c === '{') return true
    if (!isGoSpace(c)) return false
    bytes += Buffer.byteLength(c)
  }
  return false
}

function skipJsonSpace(text: string, at: number): number {
  while (at < text.length && ' \t\r\n'.includes(text[at] ?? '')) at++
  return at
}

/**
 * Where YAML starts after a JSON value kubectl could not read: past the spaces that follow, up
 * to and including the end of their line. kubectl reads ahead 4 bytes at a time there and gives
 * up (returning the JSON error) when fewer remain, or on a replacement character.
 */
function consumeLineSpace(text: string, at: number): number | undefined {
  for (;;) {
    if (text.length - at < 4 && Buffer.byteLength(text.slice(at)) < 4) return undefined
    const c = String.fromCodePoint(text.codePointAt(at) ?? 0)
    if (c === '\uFFFD') return undefined
    if (!isGoSpace(c)) return at
    at += c.length
    if (c === '\n') return at
  }
}

/** Go's unicode.IsSpace. */
function isGoSpace(c: string): boolean {
  return /^[\t\n\v\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]$/.test(c)
}

/** Go's strings.TrimSpace. */
function trimGoSpace(text: string): string {
  return text.replace(
    /^[\t\n\v\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]+|[\t\n\v\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]+$/g,
    '',
  )
}
