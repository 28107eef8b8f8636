/** Reads Kubernetes objects from YAML/JSON files and directories (multi-document, `List` kinds). */

import { readdir, readFile, stat } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { parseAllDocuments } from 'yaml'
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
  for (const path of paths) {
    for (const file of await objectFiles(path))
      objects.push(...parseObjects(await read(file), file))
  }
  return objects
}

/** Parses the objects in one YAML or JSON text (JSON is YAML), expanding `List` kinds. */
export function parseObjects(text: string, source: string): KubeObject[] {
  // A .json file is read with JSON.parse: the same result as the YAML parser, many times faster
  // for large views (a JSON List of thousands of objects).
  if (source.endsWith('.json')) {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new ObjectFileError(`${source}, document 1: ${(error as Error).message}`)
    }
    return expandList(value, `${source}, document 1`)
  }
  const objects: KubeObject[] = []
  parseAllDocuments(text).forEach((document, index) => {
    const where = `${source}, document ${index + 1}`
    const firstError = document.errors[0]
    if (firstError) throw new ObjectFileError(`${where}: ${firstError.message}`)
    const value: unknown = document.toJS({ maxAliasCount: 100 })
    if (value === null || value === undefined) return // empty document
    objects.push(...expandList(value, where))
  })
  return objects
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
