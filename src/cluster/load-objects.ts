/** Reads Kubernetes objects from YAML/JSON files and directories (multi-document, `List` kinds). */

import { readdir, readFile, stat } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { Composer, LineCounter, Parser } from 'yaml'
import type { Document } from 'yaml'
import { isRecord } from '../policy/kube.ts'
import type { KubeObject } from '../policy/kube.ts'

const OBJECT_FILE_EXTENSIONS = new Set(['.yaml', '.yml', '.json'])

/** Thrown for unreadable or malformed object files; the message names the file and document. */
export class ObjectFileError extends Error {
  override name = 'ObjectFileError'
}

/** Loads every object from the given files and directories (directories: their object files, sorted). */
export async function loadObjects(paths: readonly string[]): Promise<KubeObject[]> {
  const objects: KubeObject[] = []
  for await (const object of readObjects(paths)) objects.push(object)
  return objects
}

/**
 * The objects of the given files and directories, one at a time: a caller that keeps a reduced
 * form of each (the served view trims them) never holds more than one file's text and one parsed
 * document at once, rather than every document of every file.
 */
export async function* readObjects(paths: readonly string[]): AsyncGenerator<KubeObject> {
  for (const path of paths) {
    for (const file of await objectFiles(path)) yield* objectsIn(await read(file), file)
  }
}

/** Parses the objects in one YAML or JSON text (JSON is YAML), expanding `List` kinds. */
export function parseObjects(text: string, source: string): KubeObject[] {
  return [...objectsIn(text, source)]
}

function* objectsIn(text: string, source: string): Generator<KubeObject> {
  // A .json file is read with JSON.parse: the same result as the YAML parser, many times faster
  // for large views (a JSON List of thousands of objects).
  if (source.endsWith('.json')) {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new ObjectFileError(`${source}, document 1: ${(error as Error).message}`)
    }
    yield* expandList(value, `${source}, document 1`)
    return
  }
  const lines = new LineCounter()
  // The composer hands out each document as soon as it is complete: documents already read are
  // garbage while the rest of the file is parsed.
  const documents = new Composer().compose(new Parser(lines.addNewLine).parse(text))
  let index = 0
  for (const document of documents) {
    const where = `${source}, document ${++index}`
    const value = documentValue(document, where, lines)
    if (value === null || value === undefined) continue // empty document
    yield* expandList(value, where)
  }
}

function documentValue(document: Document, where: string, lines: LineCounter): unknown {
  const firstError = document.errors[0]
  if (firstError) {
    const { line, col } = lines.linePos(firstError.pos[0])
    throw new ObjectFileError(`${where}: ${firstError.message} at line ${line}, column ${col}`)
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 })
  if (value === undefined || value === null) return value
  // The parser's strings are slices of the file's text, and V8 keeps a whole text alive for any
  // slice of it still held: one kept name would pin megabytes. Written out and read back, every
  // string gets its own storage. What JSON cannot hold is dealt with as the API server would
  // never see it: a cycle (an alias inside itself) is refused, `.nan` and `.inf` become null.
  let text: string
  try {
    text = JSON.stringify(value)
  } catch (error) {
    throw new ObjectFileError(`${where}: not a JSON document: ${(error as Error).message}`)
  }
  return JSON.parse(text)
}

function expandList(value: unknown, where: string): KubeObject[] {
  if (!isRecord(value))
    throw new ObjectFileError(`${where}: expected an object, got ${describe(value)}`)
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

async function objectFiles(path: string): Promise<string[]> {
  let info
  try {
    info = await stat(path)
  } catch (error) {
    throw new ObjectFileError(`${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
  if (!info.isDirectory()) return [path]
  const entries = await readdir(path, { withFileTypes: true })
  return entries
    .filter((e) => e.isFile() && OBJECT_FILE_EXTENSIONS.has(extname(e.name)))
    .map((e) => join(path, e.name))
    .sort()
}

async function read(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    throw new ObjectFileError(`${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
}

function describe(value: unknown): string {
  return Array.isArray(value) ? 'a list' : typeof value
}
