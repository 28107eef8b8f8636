/** Reads Kubernetes objects from YAML/JSON files and directories (multi-document, `List` kinds). */

import { Composer, LineCounter, Parser } from 'yaml'
import type { Document } from 'yaml'
import { isRecord } from '../policy/kube.ts'
import type { KubeObject } from '../policy/kube.ts'
import { firstDuplicateKey } from './load-duplicate-keys.ts'
import { ObjectFileError, fileSystemError, printable, quoted } from './load-errors.ts'
import { readBoundedFile } from '../files/bounded-read.ts'
import { DIRECTORY_READS, OBJECT_FILE_MAX_BYTES, objectFilesOf } from './load-files.ts'

export { ObjectFileError } from './load-errors.ts'

/** Loads every object from the given files and directories (see `readObjects`). */
export async function loadObjects(paths: readonly string[]): Promise<KubeObject[]> {
  const objects: KubeObject[] = []
  for await (const object of readObjects(paths)) objects.push(object)
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
  const objectsPerFile = new Map<string, number>() // by real path
  for (const path of paths) {
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
  return [...objectsIn(text, source)]
}

function* objectsIn(text: string, source: string): Generator<KubeObject> {
  refuseBinary(text, source)
  // A .json file is read with JSON.parse: the same result as the YAML parser, many times faster
  // for large views (a JSON List of thousands of objects).
  if (/\.json$/i.test(source)) {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      // V8's message quotes the text around the error: escaped, so a stray byte stays visible.
      throw new ObjectFileError(`${source}, document 1: ${printable((error as Error).message)}`)
    }
    yield* expandList(value, `${source}, document 1`)
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
  throw new ObjectFileError(`${source}: binary content, not YAML or JSON: ${quoted(text)}`)
}

function documentValue(document: Document, where: string, lines: LineCounter): unknown {
  const syntax = document.errors[0]
  const duplicate = firstDuplicateKey(document)
  if (syntax !== undefined && (duplicate === undefined || syntax.pos[0] <= duplicate.offset)) {
    throw new ObjectFileError(`${where}: ${printable(syntax.message)}${at(syntax.pos[0], lines)}`)
  }
  if (duplicate !== undefined) {
    throw new ObjectFileError(
      `${where}: Map keys must be unique: ${quoted(duplicate.key)} repeated${at(duplicate.offset, lines)}`,
    )
  }
  let value: unknown
  try {
    value = document.toJS({ maxAliasCount: 100 })
  } catch (error) {
    // The alias limit throws (a ReferenceError) rather than reporting a document error.
    throw new ObjectFileError(`${where}: ${printable((error as Error).message)}`)
  }
  if (value === undefined || value === null) return value
  // The parser's strings are slices of the file's text, and V8 keeps a whole text alive for any
  // slice of it still held: one kept name would pin megabytes. Written out and read back, every
  // string gets its own storage. What JSON cannot hold is dealt with as the API server would
  // never see it: a cycle (an alias inside itself) is refused, `.nan` and `.inf` become null.
  let text: string
  try {
    text = JSON.stringify(value)
  } catch (error) {
    throw new ObjectFileError(
      `${where}: not a JSON document: ${printable((error as Error).message)}`,
    )
  }
  return JSON.parse(text)
}

function at(offset: number, lines: LineCounter): string {
  const { line, col } = lines.linePos(offset)
  return ` at line ${line}, column ${col}`
}

/**
 * How deep a file's object may nest. Real manifests stay within a few dozen levels; the CLI's
 * YAML output recurses per level and cannot print an object much deeper than a few hundred.
 */
export const MAX_NESTING = 200

/** True when `value` nests deeper than `limit` objects and arrays (measured without recursion). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next
    if (typeof node !== 'object' || node === null) continue
    if (depth > limit) return true
    for (const child of Object.values(node)) pending.push([child, depth + 1])
  }
  return false
}

function expandList(value: unknown, where: string): KubeObject[] {
  if (!isRecord(value))
    throw new ObjectFileError(`${where}: expected an object, got ${describe(value)}`)
  if (nestsDeeperThan(value, MAX_NESTING))
    throw new ObjectFileError(`${where}: nested deeper than ${MAX_NESTING} levels`)
  if (typeof value.kind !== 'string' || value.kind === '') {
    throw new ObjectFileError(`${where}: object has no kind`)
  }
  if (!value.kind.endsWith('List') || !Array.isArray(value.items)) return [value]
  return value.items.map((item: unknown, i) => {
    const itemWhere = `${where}, items[${i}]`
    if (!isRecord(item) || typeof item.kind !== 'string') {
      throw new ObjectFileError(`${itemWhere}: expected an object with a kind`)
    }
    return item
  })
}

async function read(file: string): Promise<string> {
  try {
    return (await readBoundedFile(file, OBJECT_FILE_MAX_BYTES)).toString('utf8')
  } catch (error) {
    throw fileSystemError(file, error)
  }
}

function describe(value: unknown): string {
  return Array.isArray(value) ? 'a list' : typeof value
}
