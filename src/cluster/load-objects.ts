/** Reads Kubernetes objects from YAML/JSON files and directories (multi-document, `List` kinds). */

import type { Readable } from 'node:stream'
import { MAX_NESTING } from '../policy/kube/nesting.ts'
import { isRecord } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { ObjectFileError, fileSystemError } from './load-errors.ts'
import type { JsonScan } from './load-json.ts'
import { StreamError, kubectlDocuments, lineOf } from './load-stream.ts'
import type { StreamDocument } from './load-stream.ts'
import { objectFileText } from './load-text.ts'
import { DocumentError, NESTING_MESSAGE, yamlDocumentValue } from './load-yaml.ts'
import { errorMessage, jsonQuoted, printableLine } from '../policy/messages/render.ts'
import { readBoundedFile, readBoundedInput, readBoundedStream } from '../files/bounded-read.ts'
import { DIRECTORY_READS, OBJECT_FILE_MAX_BYTES, objectFilesOf } from './load-files.ts'

export { ObjectFileError } from './load-errors.ts'

/** Where `-` reads from, for the commands that take it (`check -`), and how paths are read. */
export interface ObjectSources {
  readonly stdin?: Readable
  /**
   * Read the paths as configuration (`--crds`): regular files only, each within the deadline of
   * files/bounded-read.ts. Otherwise they are inputs: a path given may also be a pipe
   * (`<(kustomize build)`) or a character device, read up to the size bound with no deadline.
   */
  readonly configuration?: boolean
}

/** Loads every object from the given files and directories (see `readObjects`). */
export async function loadObjects(
  paths: readonly string[],
  sources: ObjectSources = {},
): Promise<KubeObject[]> {
  const objects: KubeObject[] = []
  for await (const { object } of readSourcedObjects(paths, sources)) objects.push(object)
  return objects
}

/**
 * The objects of the given files and directories (directories as `load-files.ts` walks them),
 * one at a time: a caller that keeps a reduced form of each (the served view trims them) never
 * holds more than one file's text and one parsed document at once, rather than every document
 * of every file. A file reached twice (two paths, two links) is read once; a path that yields no
 * object at all is an error, so a mistyped or empty directory cannot pass for a checked one.
 */
export async function* readObjects(paths: readonly string[]): AsyncGenerator<KubeObject> {
  for await (const { object } of readSourcedObjects(paths)) yield object
}

/** An object and where it was read: `crds/a.yaml, document 2`. */
export interface SourcedObject {
  readonly object: KubeObject
  readonly where: string
}

/** Loads every object with where it was read, for messages that must name the file. */
export async function loadSourcedObjects(
  paths: readonly string[],
  sources: ObjectSources = {},
): Promise<SourcedObject[]> {
  const objects: SourcedObject[] = []
  for await (const sourced of readSourcedObjects(paths, sources)) objects.push(sourced)
  return objects
}

/** readObjects, each object with where it was read. */
async function* readSourcedObjects(
  paths: readonly string[],
  sources: ObjectSources = {},
): AsyncGenerator<SourcedObject> {
  const objectsPerFile = new Map<string, number>() // by real path
  let stdinRead = false
  for (const path of paths) {
    if (path === '-' && sources.stdin !== undefined) {
      if (stdinRead) throw new ObjectFileError('-: standard input can be read only once')
      stdinRead = true
      const found = objectsIn(await readStdin(sources.stdin), STDIN)
      let count = 0
      for (const object of found) {
        count++
        yield object
      }
      if (count === 0) throw new ObjectFileError(`${STDIN}: no objects found`)
      continue
    }
    const { directory, files } = await objectFilesOf(path)
    let found = 0
    for (const file of files) {
      const earlier = objectsPerFile.get(file.realPath)
      if (earlier !== undefined) {
        found += earlier
        continue
      }
      let count = 0
      for (const object of objectsIn(await read(file.path, sources), file.path)) {
        count++
        yield object
      }
      objectsPerFile.set(file.realPath, count)
      found += count
    }
    if (found === 0) {
      throw new ObjectFileError(
        `${path}: no objects found${directory ? ` (reads ${DIRECTORY_READS})` : ''}`,
      )
    }
  }
}

/**
 * Parses the objects in one file's content as kubectl reads it (see `kubectlDocuments`,
 * `yamlDocumentValue`), expanding `List` kinds. Bytes are decoded as kubectl decodes them
 * (`objectFileText`); a text is taken as decoded, a leading byte order mark dropped.
 */
export function parseObjects(content: string | Uint8Array, source: string): KubeObject[] {
  return [...objectsIn(content, source)].map((sourced) => sourced.object)
}

/** The documents of one file's content as kubectl reads them, empty ones left out, Lists kept. */
export function parseDocuments(content: string | Uint8Array, source: string): unknown[] {
  return [...documentsIn(content, source)].map(({ value }) => value)
}

function* objectsIn(content: string | Uint8Array, source: string): Generator<SourcedObject> {
  for (const { value, where } of documentsIn(content, source)) yield* expandList(value, where)
}

function* documentsIn(
  content: string | Uint8Array,
  source: string,
): Generator<{ value: unknown; where: string }> {
  const text =
    typeof content === 'string' ? content.replace(/^\uFEFF/, '') : objectFileText(content, source)
  refuseBinary(text, source)
  // Deep flow nesting (`[[[[…`, `{"a":{"a":…`) is refused before any parser reads it: the YAML
  // parser would take seconds and hundreds of MB to get there. Deep block nesting is refused
  // by the YAML parsing itself (`load-yaml.ts`), as soon as it opens.
  if (bracketsNestDeeperThan(text, MAX_NESTING)) {
    throw new ObjectFileError(`${source}, document 1: ${NESTING_MESSAGE}`)
  }
  // Documents are split and read one at a time: documents already read are garbage while the
  // rest of the file is read.
  const documents = kubectlDocuments(text)
  for (let index = 1; ; index++) {
    const where = `${source}, document ${index}`
    let next: IteratorResult<StreamDocument>
    try {
      next = documents.next()
    } catch (error) {
      if (!(error instanceof StreamError)) throw error
      throw new ObjectFileError(
        `${where}: ${printableLine(error.message)}${at(positionIn(text, error.offset))}`,
      )
    }
    if (next.done === true) return
    const value = documentValue(next.value, text, where)
    if (value === null || value === undefined) continue // empty document
    yield { value, where }
  }
}

/** NUL is in no YAML or JSON text: a binary file, shown by the (escaped) start of its content. */
function refuseBinary(text: string, source: string): void {
  if (!text.includes('\0')) return
  throw new ObjectFileError(`${source}: binary content, not YAML or JSON: ${jsonQuoted(text)}`)
}

/** What go-yaml reads: printable characters only (YAML 1.1's set; tab, CR and LF among them). */
const NOT_YAML = /[^\t\n\r\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u

function documentValue(document: StreamDocument, text: string, where: string): unknown {
  if (document.json !== undefined) return jsonDocumentValue(document, document.json, text, where)
  const chunk = document.text
  const refuse = (message: string, offset: number | undefined): ObjectFileError =>
    // Read after a JSON value kubectl could not read, a failure is reported as that one.
    document.failure !== undefined
      ? new ObjectFileError(
          `${where}: ${printableLine(document.failure.message)}${at(positionIn(text, document.failure.offset))}`,
        )
      : new ObjectFileError(
          `${where}: ${printableLine(message)}${offset === undefined ? '' : at(positionIn(chunk, offset, document.line))}`,
        )
  const control = NOT_YAML.exec(chunk)
  if (control !== null) {
    throw refuse(
      `a character YAML does not allow: ${jsonQuoted(chunk.slice(control.index, control.index + 60))}`,
      control.index,
    )
  }
  let value: unknown
  try {
    value = yamlDocumentValue(chunk)
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error
    throw refuse(error.message, error.offset)
  }
  // Strings read from YAML are slices of the file's text, and V8 keeps a whole text alive for
  // any slice of it still held: one kept name would pin megabytes. Written out and read back,
  // every string gets its own storage, and every object an ordinary prototype.
  return value === null ? null : JSON.parse(JSON.stringify(value))
}

/**
 * A JSON document as kubectl holds it: Go's JSON reader turns a lone surrogate escape into
 * U+FFFD and refuses a number beyond float64; the loader also refuses a repeated key (Go keeps
 * the last) and an int64 a JavaScript number cannot hold exactly.
 */
function jsonDocumentValue(
  document: StreamDocument,
  scan: JsonScan,
  text: string,
  where: string,
): unknown {
  const refuse = (message: string, offset: number): ObjectFileError =>
    new ObjectFileError(`${where}: ${message}${at(positionIn(text, document.offset + offset))}`)
  if (scan.duplicate !== undefined) {
    throw refuse(
      `Map keys must be unique: ${jsonQuoted(scan.duplicate.key)} repeated`,
      scan.duplicate.offset - document.offset,
    )
  }
  if (scan.inexact !== undefined) {
    throw refuse(
      `the integer ${scan.inexact.literal} is beyond 2^53: it cannot be read exactly here`,
      scan.inexact.offset - document.offset,
    )
  }
  if (scan.infinite !== undefined) {
    throw refuse(
      `the number ${printableLine(scan.infinite.literal, 40)} is beyond float64 (kubectl refuses it)`,
      scan.infinite.offset - document.offset,
    )
  }
  const root: unknown = JSON.parse(document.text)
  // Walked without recursion (the pre-scan has bounded the nesting anyway).
  const pending: unknown[] = [root]
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (typeof node !== 'object' || node === null) continue
    const container = node as Record<string, unknown>
    for (const key of Object.keys(container)) {
      const value = container[key]
      if (typeof value === 'string' && !value.isWellFormed()) container[key] = value.toWellFormed()
      if (!key.isWellFormed() && !Array.isArray(container)) {
        Reflect.deleteProperty(container, key)
        container[key.toWellFormed()] = value
      }
      pending.push(value)
    }
  }
  return root
}

/**
 * Whether `[`/`{` nest deeper than `limit` anywhere in the text, outside double-quoted strings:
 * a linear pre-scan, so deep flow nesting is refused before a parser recurses into it. It may
 * overcount (a bracket in a plain scalar or a comment), never in a real manifest by 200.
 */
export function bracketsNestDeeperThan(text: string, limit: number): boolean {
  // Fewer brackets in all than the limit cannot nest past it: counted natively (indexOf), this
  // spares the character walk below for nearly every manifest (a CRD file holds a few hundred
  // brackets in 700 KB).
  if (!moreThan(limit, '[', '{', text)) return false
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // Skip a double-quoted string, backslash escapes included.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) {
        if (text.charCodeAt(i) === 0x5c) i++
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--
  }
  return false
}

/** Whether `text` holds more than `limit` of the characters `a` and `b` together. */
function moreThan(limit: number, a: string, b: string, text: string): boolean {
  let count = 0
  for (const c of [a, b]) {
    for (let i = text.indexOf(c); i !== -1; i = text.indexOf(c, i + 1)) {
      if (++count > limit) return true
    }
  }
  return false
}

/** ` at line L, column C`. */
function at({ line, column }: { line: number; column: number }): string {
  return ` at line ${line}, column ${column}`
}

/** The line and column (1-based) of `offset` in `text`, whose first line is `firstLine`. */
function positionIn(text: string, offset: number, firstLine = 1): { line: number; column: number } {
  const before = text.slice(0, offset)
  const lineStart = before.lastIndexOf('\n') + 1
  return { line: firstLine + lineOf(before, offset) - 1, column: offset - lineStart + 1 }
}

/**
 * The objects of one document: the document itself, or the items of a List (any kind ending in
 * `List` with an `items` array), nested Lists flattened as `kubectl apply` reads them. Each
 * object needs a kind and a name (or generateName) in a `metadata` mapping, as the API server
 * requires: one without would be admitted here and refused there.
 */
function expandList(value: unknown, where: string): SourcedObject[] {
  if (!isRecord(value))
    throw new ObjectFileError(`${where}: expected an object, got ${describe(value)}`)
  if (typeof value.kind !== 'string' || value.kind === '') {
    throw new ObjectFileError(`${where}: object has no kind`)
  }
  if (value.kind.endsWith('List') && 'items' in value) {
    if (!Array.isArray(value.items)) {
      throw new ObjectFileError(`${where}: items of a ${value.kind} must be a list`)
    }
    return value.items.flatMap((item: unknown, i) => expandList(item, `${where}, items[${i}]`))
  }
  checkMetadata(value, where)
  return [{ object: value, where }]
}

function checkMetadata(object: KubeObject, where: string): void {
  const metadata: unknown = object.metadata
  if (!isRecord(metadata)) {
    throw new ObjectFileError(
      metadata === undefined
        ? `${where}: ${String(object.kind)} has no metadata.name`
        : `${where}: metadata must be a mapping, got ${describe(metadata)}`,
    )
  }
  for (const field of ['name', 'generateName', 'namespace'] as const) {
    const fieldValue = metadata[field]
    if (fieldValue !== undefined && typeof fieldValue !== 'string') {
      throw new ObjectFileError(
        `${where}: metadata.${field} must be a string, got ${describe(fieldValue)}`,
      )
    }
  }
  if (!metadata.name && !metadata.generateName) {
    throw new ObjectFileError(`${where}: ${String(object.kind)} has no metadata.name`)
  }
}

const STDIN = 'standard input'

async function read(file: string, { configuration }: ObjectSources): Promise<Uint8Array> {
  try {
    return configuration === true
      ? await readBoundedFile(file, OBJECT_FILE_MAX_BYTES)
      : await readBoundedInput(file, OBJECT_FILE_MAX_BYTES)
  } catch (error) {
    throw fileSystemError(file, error)
  }
}

/** Standard input's bytes, bounded like a file's (and read like one: a byte order mark, UTF-16). */
async function readStdin(stdin: Readable): Promise<Uint8Array> {
  try {
    return await readBoundedStream(stdin, OBJECT_FILE_MAX_BYTES, STDIN)
  } catch (error) {
    throw new ObjectFileError(`${STDIN}: ${errorMessage(error)}`)
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  return Array.isArray(value) ? 'a list' : typeof value
}
