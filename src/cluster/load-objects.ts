/** Reads Kubernetes objects from YAML/JSON files and directories (multi-document, `List` kinds). */

import type { Readable } from 'node:stream'
import { Composer, LineCounter, Parser } from 'yaml'
import type { Document } from 'yaml'
import { MAX_NESTING } from '../policy/kube/nesting.ts'
import { isRecord } from '../policy/kube/object.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { firstDuplicateKey } from './load-duplicate-keys.ts'
import { ObjectFileError, inputFileError } from './load-errors.ts'
import { errorMessage, jsonQuoted, printableLine } from '../policy/messages/render.ts'
import { readBoundedFile, readBoundedStream } from '../files/bounded-read.ts'
import { DIRECTORY_READS, OBJECT_FILE_MAX_BYTES, objectFilesOf } from './load-files.ts'

export { ObjectFileError } from './load-errors.ts'

/** Where `-` reads from, for the commands that take it (`check -`). */
export interface ObjectSources {
  readonly stdin?: Readable
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
      for (const object of objectsIn(await read(file.path), file.path)) {
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

/** Parses the objects in one YAML or JSON text (JSON is YAML), expanding `List` kinds. */
export function parseObjects(text: string, source: string): KubeObject[] {
  return [...objectsIn(text, source)].map((sourced) => sourced.object)
}

function* objectsIn(text: string, source: string): Generator<SourcedObject> {
  refuseBinary(text, source)
  // Deep flow nesting (`[[[[…`, `{"a":{"a":…`) is refused before any parser recurses into it:
  // the YAML parser would take seconds and hundreds of MB to overflow the stack instead.
  if (bracketsNestDeeperThan(text, MAX_NESTING)) {
    throw new ObjectFileError(`${source}, document 1: nested deeper than ${MAX_NESTING} levels`)
  }
  // A .json file is read with JSON.parse: the same result as the YAML parser, many times faster
  // for large views (a JSON List of thousands of objects). A byte order mark is allowed, as the
  // YAML reading of the same bytes allows it; a repeated key is refused, as there.
  if (/\.json$/i.test(source)) {
    const where = `${source}, document 1`
    const json = text.startsWith('\uFEFF') ? text.slice(1) : text
    let value: unknown
    try {
      value = JSON.parse(json)
    } catch (error) {
      // V8's message quotes the text around the error: escaped, so a stray byte stays visible.
      throw new ObjectFileError(`${where}: ${printableLine((error as Error).message)}`)
    }
    const duplicate = firstDuplicateJsonKey(json)
    if (duplicate !== undefined) {
      throw new ObjectFileError(
        `${where}: Map keys must be unique: ${jsonQuoted(duplicate.key)} repeated at offset ${duplicate.offset}`,
      )
    }
    yield* expandList(plainJson(value, where), where)
    return
  }
  const lines = new LineCounter()
  // The composer hands out each document as soon as it is complete: documents already read are
  // garbage while the rest of the file is parsed. Duplicate keys are found by
  // `firstDuplicateKey`, in linear time; the composer's own check is quadratic in a mapping's size.
  const composer = new Composer({ uniqueKeys: false })
  const documents = composer.compose(new Parser(lines.addNewLine).parse(text))
  let index = 0
  for (const document of documents) {
    const where = `${source}, document ${++index}`
    const value = documentValue(document, where, lines)
    if (value === null || value === undefined) continue // empty document
    yield* expandList(value, where)
  }
}

/** NUL is in no YAML or JSON text: a binary file, shown by the (escaped) start of its content. */
function refuseBinary(text: string, source: string): void {
  if (!text.includes('\0')) return
  throw new ObjectFileError(`${source}: binary content, not YAML or JSON: ${jsonQuoted(text)}`)
}

function documentValue(document: Document, where: string, lines: LineCounter): unknown {
  const syntax = document.errors[0]
  const duplicate = firstDuplicateKey(document)
  if (syntax !== undefined && (duplicate === undefined || syntax.pos[0] <= duplicate.offset)) {
    throw new ObjectFileError(
      `${where}: ${printableLine(syntax.message)}${at(syntax.pos[0], lines)}`,
    )
  }
  if (duplicate !== undefined) {
    throw new ObjectFileError(
      `${where}: Map keys must be unique: ${jsonQuoted(duplicate.key)} repeated${at(duplicate.offset, lines)}`,
    )
  }
  let value: unknown
  try {
    value = document.toJS({ maxAliasCount: 100 })
  } catch (error) {
    // The alias limit throws (a ReferenceError) rather than reporting a document error.
    throw new ObjectFileError(`${where}: ${printableLine((error as Error).message)}`)
  }
  if (value === undefined || value === null) return value
  value = plainJson(value, where)
  // The parser's strings are slices of the file's text, and V8 keeps a whole text alive for any
  // slice of it still held: one kept name would pin megabytes. Written out and read back, every
  // string gets its own storage. A cycle (an alias inside itself) is refused.
  let text: string
  try {
    text = JSON.stringify(value)
  } catch (error) {
    throw new ObjectFileError(
      `${where}: not a JSON document: ${printableLine((error as Error).message)}`,
    )
  }
  return JSON.parse(text)
}

/**
 * `value` as the JSON that Go's YAML reader (sigs.k8s.io/yaml, as kubectl reads manifests) would
 * make of it, or a one-line refusal where Go refuses or the conversion is not exact:
 * * a number JSON cannot hold (`1e400`, `.inf`, `.nan`) is refused: it would silently turn into
 *   null and the object read as unchanged; so is an integer past 2^53, already rounded here;
 * * `!!binary` is its bytes as text (refused unless they are UTF-8, as JSON strings must be);
 * * `!!set` is a mapping of its members to null, as Go reads it;
 * * `!!timestamp` is refused: Go writes it in its own format, keeping the zone, which the YAML
 *   library here does not keep;
 * * nesting deeper than MAX_NESTING is refused.
 * Custom tags (`!foo bar`) are read as their plain value, as Go does. Walked without recursion.
 */
function plainJson(root: unknown, where: string): unknown {
  const holder = { root }
  const pending: [Record<string, unknown> | unknown[], string | number, number, string][] = [
    [holder, 'root', 0, ''],
  ]
  // An alias makes one node reachable twice (or from inside itself: JSON.stringify refuses that
  // cycle later): each is converted and walked once.
  const converted = new Map<object, unknown>()
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [parent, key, depth, path] = next
    const node = (parent as Record<string | number, unknown>)[key]
    if (typeof node === 'object' && node !== null && converted.has(node)) {
      ;(parent as Record<string | number, unknown>)[key] = converted.get(node)
      continue
    }
    const refuse = (why: string) =>
      new ObjectFileError(`${where}: ${path === '' ? '' : `${printableLine(path)}: `}${why}`)
    if (typeof node === 'number') {
      if (!Number.isFinite(node))
        throw refuse('a number beyond float64 (or .inf, .nan): JSON cannot hold it')
      // Go reads an integer into int64 exactly; past 2^53 this reading has already rounded it.
      if (Number.isInteger(node) && !Number.isSafeInteger(node))
        throw refuse('an integer beyond 2^53: it cannot be read exactly here')
      continue
    }
    if (typeof node !== 'object' || node === null) continue
    if (depth >= MAX_NESTING) throw refuse(`nested deeper than ${MAX_NESTING} levels`)
    let replaced: unknown = node
    if (node instanceof Uint8Array) {
      try {
        replaced = new TextDecoder('utf-8', { fatal: true }).decode(node)
      } catch {
        throw refuse('!!binary content is not UTF-8 text: JSON cannot hold it exactly')
      }
    } else if (node instanceof Set) {
      const members: Record<string, null> = {}
      for (const member of node as Set<unknown>) {
        if (typeof member === 'object' && member !== null)
          throw refuse('a !!set member that is not a scalar')
        members[String(member)] = null
      }
      replaced = members
    } else if (node instanceof Date) {
      throw refuse('a !!timestamp: write the time as a quoted string')
    }
    ;(parent as Record<string | number, unknown>)[key] = replaced
    converted.set(node, replaced)
    if (typeof replaced !== 'object' || replaced === null) continue
    if (Array.isArray(replaced)) {
      replaced.forEach((_, i) =>
        pending.push([replaced as unknown[], i, depth + 1, `${path}[${i}]`]),
      )
    } else {
      for (const child of Object.keys(replaced)) {
        pending.push([
          replaced as Record<string, unknown>,
          child,
          depth + 1,
          path === '' ? child : `${path}.${child}`,
        ])
      }
    }
  }
  return holder.root
}

/**
 * Whether `[`/`{` nest deeper than `limit` anywhere in the text, outside double-quoted strings:
 * a linear pre-scan, so deep flow nesting is refused before a parser recurses into it. It may
 * overcount (a bracket in a plain scalar or a comment), never in a real manifest by 200.
 */
export function bracketsNestDeeperThan(text: string, limit: number): boolean {
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

/**
 * The first repeated key of any object in a valid JSON text, in linear time: JSON.parse keeps the
 * last value silently, where the YAML reading of the same bytes refuses the file.
 */
function firstDuplicateJsonKey(text: string): { key: string; offset: number } | undefined {
  const scopes: (Set<string> | undefined)[] = []
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '{') scopes.push(new Set())
    else if (c === '[') scopes.push(undefined)
    else if (c === '}' || c === ']') scopes.pop()
    else if (c === '"') {
      const start = i
      let escaped = false
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === '\\') {
          escaped = true
          i++
        }
      }
      const keys = scopes.at(-1)
      if (keys === undefined) continue
      let after = i + 1
      while (after < text.length && /\s/.test(text[after] ?? '')) after++
      if (text[after] !== ':') continue
      const raw = text.slice(start, i + 1)
      const key = escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1)
      if (keys.has(key)) return { key, offset: start }
      keys.add(key)
    }
  }
  return undefined
}

function at(offset: number, lines: LineCounter): string {
  const { line, col } = lines.linePos(offset)
  return ` at line ${line}, column ${col}`
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

async function read(file: string): Promise<string> {
  try {
    return (await readBoundedFile(file, OBJECT_FILE_MAX_BYTES)).toString('utf8')
  } catch (error) {
    throw inputFileError(file, error)
  }
}

/** Standard input, bounded like a file. */
async function readStdin(stdin: Readable): Promise<string> {
  try {
    return (await readBoundedStream(stdin, OBJECT_FILE_MAX_BYTES, STDIN)).toString('utf8')
  } catch (error) {
    throw new ObjectFileError(`${STDIN}: ${errorMessage(error)}`)
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  return Array.isArray(value) ? 'a list' : typeof value
}
