/**
 * The one way the service and the CLI read a file: bounded in size, and never blocked by what the
 * path turns out to be. A FIFO, a device or a socket would block an ordinary read for ever (a FIFO
 * with no writer blocks even the open, in a libuv thread that nothing can cancel: certificate
 * reloads queue up behind it and the process outlives its shutdown) or never end (`/dev/zero`).
 * So the file is opened with O_NONBLOCK (an open that cannot block), checked with fstat on the
 * opened handle (no window for a swap between the check and the read), refused unless it is a
 * regular file, and read up to a bound that suits its use.
 */

import { constants } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import type { Stats } from 'node:fs'
import { constants as osConstants } from 'node:os'
import type { Readable } from 'node:stream'
import { errorMessage } from '../policy/messages/render.ts'

// Node's errno values are the negated system ones.
const { errno } = osConstants

export const MiB = 1024 * 1024

/**
 * A file that could not be read, or was refused. `code` and `errno` are the system's when a call
 * failed (ENOENT, EACCES, and EISDIR for a directory), so callers word them as they word any
 * file-system error; a refusal has neither, and its message says why (`not a regular file (a
 * FIFO)`, `larger than 1 MiB`).
 */
export class FileReadError extends Error {
  override name = 'FileReadError'
  readonly path: string
  readonly code: string | undefined
  readonly errno: number | undefined

  constructor(
    path: string,
    reason: string,
    system?: { readonly code?: string | undefined; readonly errno?: number | undefined },
    options?: ErrorOptions,
  ) {
    super(reason, options)
    this.path = path
    this.code = system?.code
    this.errno = system?.errno
  }
}

// O_NONBLOCK: a FIFO's open returns at once instead of waiting for a writer (and reads of the
// regular files that are accepted ignore it). O_NOCTTY: a terminal never becomes the controlling one.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY

const CHUNK_BYTES = 64 * 1024

/** `1 MiB`, `7 MiB`, `512 bytes`: a bound in the words of an error. */
export function sizeText(bytes: number): string {
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`
}

/**
 * The bytes of a regular file of at most `maxBytes`. Anything else is a FileReadError: a missing
 * or unreadable path (the system's code), a directory (code EISDIR), another kind of file, or a
 * file larger than the bound (also one that grows past it while being read).
 */
export async function readBoundedFile(path: string, maxBytes: number): Promise<Buffer> {
  let handle: FileHandle
  try {
    handle = await open(path, OPEN_FLAGS)
  } catch (error) {
    throw await openError(path, error)
  }
  try {
    const info = await handle.stat()
    refuseUnlessRegular(path, info)
    if (info.size > maxBytes) {
      throw new FileReadError(path, `larger than ${sizeText(maxBytes)} (${info.size} bytes)`)
    }
    return await readUpTo(handle, path, maxBytes)
  } catch (error) {
    throw asFileReadError(path, error)
  } finally {
    await handle.close()
  }
}

/** At most `maxBytes` of a stream (standard input), or a FileReadError naming `source`. */
export async function readBoundedStream(
  stream: Readable,
  maxBytes: number,
  source: string,
): Promise<Buffer> {
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    total += bytes.length
    if (total > maxBytes) {
      stream.destroy()
      throw new FileReadError(source, `larger than ${sizeText(maxBytes)}`)
    }
    chunks.push(bytes)
  }
  return Buffer.concat(chunks)
}

async function readUpTo(handle: FileHandle, path: string, maxBytes: number): Promise<Buffer> {
  // The size from fstat is a hint (files in /proc say 0, a file may grow): read until the end,
  // one byte past the bound at most.
  const chunks: Buffer[] = []
  let total = 0
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes + 1 - total))
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
    if (bytesRead === 0) return Buffer.concat(chunks, total)
    chunks.push(chunk.subarray(0, bytesRead))
    total += bytesRead
    if (total > maxBytes) throw new FileReadError(path, `larger than ${sizeText(maxBytes)}`)
  }
}

function refuseUnlessRegular(path: string, info: Stats): void {
  if (info.isFile()) return
  if (info.isDirectory()) {
    // As a read of a directory fails: callers word it as they word EISDIR.
    throw new FileReadError(path, 'is a directory', { code: 'EISDIR', errno: -errno.EISDIR })
  }
  throw new FileReadError(path, `not a regular file (${kindOf(info)})`)
}

/** What a file that is not a regular file is: `a FIFO`, `a character device`, … */
export function kindOf(info: Stats): string {
  if (info.isFIFO()) return 'a FIFO'
  if (info.isCharacterDevice()) return 'a character device'
  if (info.isBlockDevice()) return 'a block device'
  if (info.isSocket()) return 'a socket'
  return 'not a file'
}

/** An open that failed; ENXIO is a socket (or a device with nothing behind it): say which. */
async function openError(path: string, error: unknown): Promise<FileReadError> {
  if (systemCode(error) === 'ENXIO') {
    const info = await stat(path).catch(() => undefined)
    if (info !== undefined && !info.isFile()) {
      return new FileReadError(path, `not a regular file (${kindOf(info)})`, {}, { cause: error })
    }
  }
  return asFileReadError(path, error)
}

function asFileReadError(path: string, error: unknown): FileReadError {
  if (error instanceof FileReadError) return error
  const { code, errno } = (error ?? {}) as NodeJS.ErrnoException
  return new FileReadError(path, errorMessage(error), { code, errno }, { cause: error })
}

function systemCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code
}
