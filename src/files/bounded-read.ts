/**
 * The one reader of every input the service and the CLI take from the file system. Each input is
 * bounded in size, never blocked by what its path turns out to be, and abortable by shutdown (an
 * AbortSignal). Two rules, by what the input is (docs/cli.md, "What is read, and its bounds"):
 *
 * - Configuration (`readBoundedFile`): a regular file, read whole within FILE_READ_DEADLINE_MS.
 *   The files a kubeconfig names and the kubeconfig itself (cli/kubeconfig.ts,
 *   cluster/kubeconfig-files.ts), the serving certificate and key (http/certificates.ts), the
 *   client CA (http/client-ca.ts), token files (cluster/token-file.ts) and CRD files
 *   (`--crds`, cluster/load-objects.ts). A FIFO, device or socket there is a mistake or an
 *   attack: a FIFO with no writer blocks an ordinary open in a libuv thread nothing can cancel
 *   (certificate reloads queue behind it, the process outlives its shutdown), `/dev/zero` never
 *   ends.
 * - Input (`readBoundedInput`, `readBoundedStream` for `-`): object files given as arguments and
 *   their `-` (`check`, `--objects`), the review file of `review`. A FIFO or pipe is read, as
 *   kubectl reads one (`check <(kustomize build)`), for as long as its writer takes: no deadline,
 *   since a slow pipeline is not a fault; a character device is read too, up to the size bound
 *   (`/dev/zero` ends there, with one line); a socket or block device is refused.
 *
 * Every open is O_NONBLOCK (a FIFO's open returns at once instead of waiting for a writer) and the
 * kind is checked with fstat on the opened descriptor (no window for a swap between the check and
 * the read). A pipe is read through the event loop (a libuv pipe handle, epoll), never by a
 * blocking read in the thread pool: a pending read then pins no thread that an exit would wait
 * for, and SIGTERM ends a command waiting on a pipe with no writer at once.
 *
 * What is not read here: the package's own package.json (program.ts), and directory listings
 * (object directories, the development certificate directory).
 */

import { close, constants, fstat, open, read, stat } from 'node:fs'
import type { Stats } from 'node:fs'
import { Socket } from 'node:net'
import { constants as osConstants } from 'node:os'
import type { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { errorMessage } from '../policy/messages/render.ts'

// Node's errno values are the negated system ones.
const { errno } = osConstants

const openFd = promisify(open)
const fstatFd = promisify(fstat)
const readFd = promisify(read)
const closeFd = promisify(close)
const statPath = promisify(stat)

export const MiB = 1024 * 1024

/**
 * How long a configuration file may take to read, from open to last byte. The largest bound here
 * (a 64 MiB CRD file) reads in well under a second from any disk; only a file system that has
 * stopped answering (a hung NFS mount, a FUSE daemon that is gone) takes longer. Then the command
 * or the reload fails with one line within 10 s, where it would wait for ever: the same 10 s
 * kubectl gives a connection before it gives up.
 */
export const FILE_READ_DEADLINE_MS = 10_000

/**
 * A file that could not be read, or was refused. `code` and `errno` are the system's when a call
 * failed (ENOENT, EACCES, and EISDIR for a directory), so callers word them as they word any
 * file-system error; a refusal has neither, and its message says why (`not a regular file (a
 * FIFO)`, `larger than 1 MiB`, `not read within 10 s`).
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

export interface ReadOptions {
  /** Ends a read in progress (shutdown): the read rejects at once, whatever it waits for. */
  readonly signal?: AbortSignal | undefined
}

export interface FileReadOptions extends ReadOptions {
  /** The whole read's bound; FILE_READ_DEADLINE_MS unless a test says otherwise. */
  readonly deadlineMs?: number | undefined
}

// O_NONBLOCK: a FIFO's open returns at once instead of waiting for a writer (and reads of the
// regular files that are accepted ignore it). O_NOCTTY: a terminal never becomes the controlling one.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY

const CHUNK_BYTES = 64 * 1024

/** How often a character device with nothing to read yet (a terminal) is asked again. */
const DEVICE_POLL_MS = 50

/** `1 MiB`, `7 MiB`, `512 bytes`: a bound in the words of an error. */
export function sizeText(bytes: number): string {
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`
}

/**
 * The bytes of a regular file of at most `maxBytes`, read within the deadline. Anything else is a
 * FileReadError: a missing or unreadable path (the system's code), a directory (code EISDIR),
 * another kind of file, a file larger than the bound (also one that grows past it while being
 * read), a read not done by the deadline, or one stopped by the signal.
 */
export async function readBoundedFile(
  path: string,
  maxBytes: number,
  options: FileReadOptions = {},
): Promise<Buffer> {
  const deadlineMs = options.deadlineMs ?? FILE_READ_DEADLINE_MS
  const deadline = AbortSignal.timeout(deadlineMs)
  const stop = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline
  const reason = (): string =>
    deadline.aborted ? `not read within ${secondsText(deadlineMs)}` : STOPPED
  return settleOrStop(path, stop, reason, readOpened(path, maxBytes, stop, REGULAR_FILE_ONLY))
}

/**
 * The bytes of an input file of at most `maxBytes`: a regular file, a FIFO or pipe (read until its
 * writer closes it, however long that takes), or a character device (read up to the bound).
 * Refused as readBoundedFile refuses, and also a socket or a block device.
 */
export async function readBoundedInput(
  path: string,
  maxBytes: number,
  options: ReadOptions = {},
): Promise<Buffer> {
  const stop = options.signal ?? new AbortController().signal
  return settleOrStop(path, stop, () => STOPPED, readOpened(path, maxBytes, stop, FILE_OR_PIPE))
}

/** At most `maxBytes` of a stream (standard input, a pipe), or a FileReadError naming `source`. */
export async function readBoundedStream(
  stream: Readable,
  maxBytes: number,
  source: string,
  options: ReadOptions = {},
): Promise<Buffer> {
  const stop = options.signal ?? new AbortController().signal
  const destroy = () => stream.destroy()
  stop.addEventListener('abort', destroy, { once: true })
  try {
    return await settleOrStop(source, stop, () => STOPPED, collect(stream, maxBytes, source))
  } finally {
    stop.removeEventListener('abort', destroy)
  }
}

const STOPPED = 'not read: stopping'

async function collect(stream: Readable, maxBytes: number, source: string): Promise<Buffer> {
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
  return Buffer.concat(chunks, total)
}

/**
 * `work`'s outcome, or a FileReadError with `reason()` as soon as `stop` is aborted. The work
 * goes on by itself then (a read in the thread pool cannot be called back); it sees `stop`, starts
 * nothing more and closes what it opened once its pending call returns.
 */
function settleOrStop<T>(
  path: string,
  stop: AbortSignal,
  reason: () => string,
  work: Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onStop = () => {
      reject(new FileReadError(path, reason(), {}, { cause: stop.reason }))
    }
    if (stop.aborted) onStop()
    else stop.addEventListener('abort', onStop, { once: true })
    work.then(
      (value) => {
        stop.removeEventListener('abort', onStop)
        resolve(value)
      },
      (error: unknown) => {
        stop.removeEventListener('abort', onStop)
        reject(asFileReadError(path, error))
      },
    )
  })
}

/** How an opened file of the kind fstat says is read: in chunks, or as a pipe; undefined: refused. */
type ReadAs = 'chunks' | 'pipe' | undefined

interface Rule {
  readonly readAs: (info: Stats) => ReadAs
  /** The refusal of any other kind: `not a regular file (a FIFO)`. */
  readonly refusal: string
}

/** Configuration: a regular file, nothing else. */
const REGULAR_FILE_ONLY: Rule = {
  readAs: (info) => (info.isFile() ? 'chunks' : undefined),
  refusal: 'not a regular file',
}

/** An input: a regular file, a FIFO or pipe, a character device. */
const FILE_OR_PIPE: Rule = {
  readAs: (info) => {
    if (info.isFIFO()) return 'pipe'
    return info.isFile() || info.isCharacterDevice() ? 'chunks' : undefined
  },
  refusal: 'not a file or a pipe',
}

function refused(path: string, info: Stats, rule: Rule): FileReadError {
  if (info.isDirectory()) {
    // As a read of a directory fails: callers word it as they word EISDIR.
    return new FileReadError(path, 'is a directory', { code: 'EISDIR', errno: -errno.EISDIR })
  }
  return new FileReadError(path, `${rule.refusal} (${kindOf(info)})`)
}

async function readOpened(
  path: string,
  maxBytes: number,
  stop: AbortSignal,
  rule: Rule,
): Promise<Buffer> {
  let fd: number
  try {
    fd = await openFd(path, OPEN_FLAGS)
  } catch (error) {
    throw await openError(path, error, rule)
  }
  let owned = true // until a pipe handle owns the descriptor (and closes it)
  try {
    if (stop.aborted) throw stop.reason
    const info = await fstatFd(fd)
    const readAs = rule.readAs(info)
    if (readAs === undefined) throw refused(path, info, rule)
    if (readAs === 'pipe') {
      const pipe = new Socket({ fd, readable: true, writable: false })
      owned = false
      return await readBoundedStream(pipe, maxBytes, path, { signal: stop })
    }
    if (info.isFile() && info.size > maxBytes) {
      throw new FileReadError(path, `larger than ${sizeText(maxBytes)} (${info.size} bytes)`)
    }
    return await readUpTo(fd, path, maxBytes, stop)
  } finally {
    if (owned) await closeFd(fd).catch(() => undefined)
  }
}

async function readUpTo(
  fd: number,
  path: string,
  maxBytes: number,
  stop: AbortSignal,
): Promise<Buffer> {
  // The size from fstat is a hint (files in /proc say 0, a file may grow, a device has none):
  // read until the end, one byte past the bound at most.
  const chunks: Buffer[] = []
  let total = 0
  for (;;) {
    if (stop.aborted) throw stop.reason
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes + 1 - total))
    let bytesRead: number
    try {
      ;({ bytesRead } = await readFd(fd, chunk, 0, chunk.length, null))
    } catch (error) {
      // A terminal or another device with nothing to read yet answers EAGAIN (the descriptor is
      // non-blocking): asked again a little later, never in a blocking read.
      if (systemCode(error) !== 'EAGAIN') throw error
      await sleep(DEVICE_POLL_MS, undefined, { signal: stop })
      continue
    }
    if (bytesRead === 0) return Buffer.concat(chunks, total)
    chunks.push(chunk.subarray(0, bytesRead))
    total += bytesRead
    if (total > maxBytes) throw new FileReadError(path, `larger than ${sizeText(maxBytes)}`)
  }
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
async function openError(path: string, error: unknown, rule: Rule): Promise<FileReadError> {
  if (systemCode(error) === 'ENXIO') {
    const info = await statPath(path).catch(() => undefined)
    if (info !== undefined && rule.readAs(info) === undefined) {
      const { message } = refused(path, info, rule)
      return new FileReadError(path, message, {}, { cause: error })
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

/** `10 s`, `0.2 s`. */
function secondsText(ms: number): string {
  return `${ms / 1000} s`
}
