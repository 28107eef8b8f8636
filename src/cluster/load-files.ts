/**
 * Which files a path names. A file is itself, whatever its name. A directory is read like
 * `kubectl apply -R`: recursively, every .yaml, .yml and .json file (any case), in name order,
 * with symbolic links followed. Each directory is entered once by its real path, so a link cycle
 * ends. Entries named `..*` are skipped: they are the kubelet's bookkeeping in a mounted
 * ConfigMap or Secret (`..data`, `..2026_11_23_10_00_00.123/`), whose files are read once,
 * through the top-level links, by their plain names, and never from a previous version's
 * directory that an update has not removed yet.
 */

import { readdir, readlink, realpath, stat } from 'node:fs/promises'
import type { Stats } from 'node:fs'
import { extname, join, resolve } from 'node:path'
import { kindOf, MiB } from '../files/bounded-read.ts'
import { fileSystemError, ObjectFileError } from './load-errors.ts'

export const OBJECT_FILE_EXTENSIONS = ['.yaml', '.yml', '.json'] as const

/**
 * The largest object file read: far above any manifest or `kubectl get -A -o yaml` dump a view
 * is loaded from (a 2,000-object file is ~4 MiB), far below what would take the process's memory.
 */
export const OBJECT_FILE_MAX_BYTES = 64 * MiB

/** What a directory yields, for messages and help: `*.yaml, *.yml, *.json files, recursively`. */
export const DIRECTORY_READS = `${OBJECT_FILE_EXTENSIONS.map((e) => `*${e}`).join(', ')} files, recursively`

interface ObjectFile {
  /** As the user would name it: the path given, joined with the names under it. */
  readonly path: string
  /** The file itself, links resolved: the same file reached twice is read once. */
  readonly realPath: string
}

interface PathFiles {
  readonly directory: boolean
  readonly files: readonly ObjectFile[]
}

/** The object files of one path given on the command line; missing or unreadable: an error. */
export async function objectFilesOf(path: string): Promise<PathFiles> {
  const info = await statOf(path)
  if (!info.isDirectory()) return { directory: false, files: [await objectFile(path)] }
  const files: ObjectFile[] = []
  await walk(path, new Set(), files)
  return { directory: true, files }
}

function isObjectFileName(name: string): boolean {
  return (OBJECT_FILE_EXTENSIONS as readonly string[]).includes(extname(name).toLowerCase())
}

async function walk(dir: string, entered: Set<string>, files: ObjectFile[]): Promise<void> {
  const real = await realPathOf(dir)
  if (entered.has(real)) return // reached again through a link: a cycle, or a second way in
  entered.add(real)
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    throw fileSystemError(dir, error)
  }
  for (const name of names.filter((n) => !n.startsWith('..')).sort()) {
    const path = join(dir, name)
    let info: Stats
    try {
      info = await stat(path) // follows links
    } catch (error) {
      // A dangling or looping link: an error if it names an object file, as kubectl's would be.
      if (isObjectFileName(name)) throw await missingPathError(path, error)
      continue
    }
    if (info.isDirectory()) await walk(path, entered, files)
    else if (isObjectFileName(name)) {
      // A FIFO, device or socket named like an object file is refused, not skipped unread.
      if (!info.isFile()) throw new ObjectFileError(`${path}: not a regular file (${kindOf(info)})`)
      files.push(await objectFile(path))
    }
  }
}

async function objectFile(path: string): Promise<ObjectFile> {
  return { path, realPath: await realPathOf(path) }
}

async function statOf(path: string): Promise<Stats> {
  try {
    return await stat(path)
  } catch (error) {
    throw await missingPathError(path, error)
  }
}

/**
 * Why `path` could not be read: a symbolic link whose target is missing says so, with the target
 * (`x.yaml: a symbolic link to /gone/x.yaml, which does not exist`), where "no such file" would
 * send the reader looking for a file that is there.
 */
async function missingPathError(path: string, error: unknown): Promise<ObjectFileError> {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return fileSystemError(path, error)
  const target = await readlink(path).catch(() => undefined)
  if (target === undefined) return fileSystemError(path, error)
  return new ObjectFileError(`${path}: a symbolic link to ${target}, which does not exist`)
}

/** The real path; a path with none (a pipe such as `/dev/fd/63`) stands for itself. */
async function realPathOf(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path))
}
