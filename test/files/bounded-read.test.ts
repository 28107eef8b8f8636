/**
 * The bounded reader on its own: what it reads, what it refuses and how the refusal reads. The
 * commands that use it are tested with the same hostile files in test/cli/files-special.test.ts.
 */

import { execFileSync } from 'node:child_process'
import { readlinkSync, readdirSync } from 'node:fs'
import { mkdtemp, open, rm, symlink } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { hungFileSystem } from '../helpers/hung-file-system.ts'
import type { FileReadError } from '../../src/files/bounded-read.ts'
import {
  FILE_READ_DEADLINE_MS,
  MiB,
  readBoundedFile,
  readBoundedInput,
  readBoundedStream,
  sizeText,
} from '../../src/files/bounded-read.ts'

/** Whether this process holds a descriptor open on `path`. */
function holdsOpen(path: string): boolean {
  return readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path
    } catch {
      return false // closed between the listing and the look
    }
  })
}

t.test(
  'regular files up to the bound are read whole, whatever fstat says of their size',
  async (t) => {
    const dir = t.testdir({ empty: '', small: 'abc', exact: 'x'.repeat(1000) })
    t.equal((await readBoundedFile(join(dir, 'empty'), 10)).length, 0)
    t.equal((await readBoundedFile(join(dir, 'small'), 10)).toString(), 'abc')
    t.equal((await readBoundedFile(join(dir, 'exact'), 1000)).length, 1000, 'exactly the bound')
    await symlink(join(dir, 'small'), join(dir, 'link'))
    t.equal((await readBoundedFile(join(dir, 'link'), 10)).toString(), 'abc', 'through a link')
    // /proc files say size 0 and have content: read to their end, and bounded all the same.
    t.match((await readBoundedFile('/proc/self/status', MiB)).toString(), /^Name:/)
    await t.rejects(readBoundedFile('/proc/self/status', 16), {
      name: 'FileReadError',
      message: 'larger than 16 bytes',
    })
  },
)

t.test('what is refused, and how: system errors keep their code', async (t) => {
  const dir = t.testdir({ sub: {}, big: 'x'.repeat(2 * MiB + 1) })
  execFileSync('mkfifo', [join(dir, 'fifo')])
  await symlink(join(dir, 'nowhere'), join(dir, 'dangling'))
  await symlink(join(dir, 'loop'), join(dir, 'loop'))
  const rows: readonly (readonly [string, number, Partial<FileReadError>])[] = [
    [join(dir, 'missing'), MiB, { code: 'ENOENT' }],
    [join(dir, 'dangling'), MiB, { code: 'ENOENT' }],
    [join(dir, 'loop'), MiB, { code: 'ELOOP' }],
    [join(dir, 'big', 'x'), MiB, { code: 'ENOTDIR' }],
    [join(dir, 'sub'), MiB, { code: 'EISDIR', message: 'is a directory' }],
    [join(dir, 'fifo'), MiB, { code: undefined, message: 'not a regular file (a FIFO)' }],
    ['/dev/zero', MiB, { message: 'not a regular file (a character device)' }],
    ['/dev/urandom', MiB, { message: 'not a regular file (a character device)' }],
    ['/dev/null', MiB, { message: 'not a regular file (a character device)' }],
    [join(dir, 'big'), 2 * MiB, { message: `larger than 2 MiB (${2 * MiB + 1} bytes)` }],
    [join(dir, 'big'), 1000, { message: `larger than 1000 bytes (${2 * MiB + 1} bytes)` }],
  ]
  for (const [path, bound, error] of rows) {
    await t.rejects(readBoundedFile(path, bound), { name: 'FileReadError', path, ...error }, path)
  }
})

t.test('a stream is read up to the bound, and no further', async (t) => {
  t.equal((await readBoundedStream(Readable.from(['ab', 'c']), 3, 'input')).toString(), 'abc')
  t.equal((await readBoundedStream(Readable.from([]), 3, 'input')).length, 0)
  const endless = new Readable({
    read() {
      this.push(Buffer.alloc(64 * 1024))
    },
  })
  await t.rejects(readBoundedStream(endless, MiB, 'standard input'), {
    name: 'FileReadError',
    path: 'standard input',
    message: 'larger than 1 MiB',
  })
  t.ok(endless.destroyed, 'the endless stream is stopped')
  t.equal(sizeText(7 * MiB), '7 MiB')
  t.equal(sizeText(MiB + 1), `${MiB + 1} bytes`)
})

t.test(
  'a configuration file not read by the deadline fails with one reason, at the deadline',
  async (t) => {
    t.equal(FILE_READ_DEADLINE_MS, 10_000)
    const dir = t.testdir({ 'ca.crt': 'pem' })
    const hung = await hungFileSystem(dir)
    const started = performance.now()
    await t.rejects(readBoundedFile(join(dir, 'ca.crt'), MiB, { deadlineMs: 200 }), {
      name: 'FileReadError',
      path: join(dir, 'ca.crt'),
      message: 'not read within 0.2 s',
    })
    const took = performance.now() - started
    t.ok(took >= 190 && took < 2000, `failed at the deadline (${Math.round(took)} ms)`)
    // Stopped (shutdown) before the deadline: at once, whatever the read waits for.
    const stop = new AbortController()
    const stopped = readBoundedFile(join(dir, 'ca.crt'), MiB, { signal: stop.signal })
    setTimeout(() => {
      stop.abort()
    }, 50)
    await t.rejects(stopped, { name: 'FileReadError', message: 'not read: stopping' })
    await hung.release()
    // The pool free again, the reads queued behind it end and close what they opened.
    await sleep(100)
    t.notOk(holdsOpen(join(dir, 'ca.crt')), 'nothing left open')
    t.equal((await readBoundedFile(join(dir, 'ca.crt'), MiB)).toString(), 'pem')
    const aborted = AbortSignal.abort()
    await t.rejects(readBoundedFile(join(dir, 'ca.crt'), MiB, { signal: aborted }), {
      message: 'not read: stopping',
    })
  },
)

t.test('an input may be a pipe: read until its writer closes it, bounded, stoppable', async (t) => {
  const dir = t.testdir({ sub: {}, big: 'x'.repeat(MiB + 1), small: 'abc' })
  const fifo = join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  // A writer that comes later and writes in two steps: everything is read.
  const reading = readBoundedInput(fifo, MiB)
  const writer = await open(fifo, 'w')
  await writer.write('kind: ')
  await sleep(100)
  await writer.write('ConfigMap\n')
  await writer.close()
  t.equal((await reading).toString(), 'kind: ConfigMap\n')
  // A writer that does not stop: refused at the bound.
  const endless = readBoundedInput(fifo, MiB)
  const flood = await open(fifo, 'w')
  const writing = (async () => {
    for (;;) await flood.write(Buffer.alloc(64 * 1024))
  })()
  await t.rejects(endless, { name: 'FileReadError', path: fifo, message: 'larger than 1 MiB' })
  await t.rejects(writing, { code: 'EPIPE' }, 'the reader is gone')
  await flood.close()
  // No writer ever: waits, and is stopped at once, its descriptor closed.
  const stop = new AbortController()
  const waiting = readBoundedInput(fifo, MiB, { signal: stop.signal })
  await sleep(100)
  t.ok(holdsOpen(fifo), 'waiting on the pipe')
  stop.abort()
  await t.rejects(waiting, { name: 'FileReadError', path: fifo, message: 'not read: stopping' })
  await sleep(20)
  t.notOk(holdsOpen(fifo), 'the pipe is closed')
  // Devices up to the bound; what is not a file or a pipe refused.
  t.equal((await readBoundedInput('/dev/null', MiB)).length, 0)
  t.equal((await readBoundedInput(join(dir, 'small'), MiB)).toString(), 'abc')
  const socketDir = await mkdtemp(join(tmpdir(), 'sock-'))
  t.teardown(() => rm(socketDir, { recursive: true, force: true }))
  const socket = join(socketDir, 'socket')
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(socket, resolve))
  t.teardown(() => server.close())
  const rows: readonly (readonly [string, Partial<FileReadError>])[] = [
    ['/dev/zero', { message: 'larger than 1 MiB' }],
    ['/dev/urandom', { message: 'larger than 1 MiB' }],
    [socket, { message: 'not a file or a pipe (a socket)' }],
    [join(dir, 'sub'), { code: 'EISDIR', message: 'is a directory' }],
    [join(dir, 'gone'), { code: 'ENOENT' }],
    [join(dir, 'big'), { message: `larger than 1 MiB (${MiB + 1} bytes)` }],
  ]
  for (const [path, error] of rows) {
    await t.rejects(readBoundedInput(path, MiB), { name: 'FileReadError', path, ...error }, path)
  }
  await t.rejects(readBoundedInput(fifo, MiB, { signal: AbortSignal.abort() }), {
    message: 'not read: stopping',
  })
  // A device read far from its bound is stopped between two reads.
  const device = new AbortController()
  setTimeout(() => {
    device.abort()
  }, 20)
  await t.rejects(readBoundedInput('/dev/zero', 1024 * MiB, { signal: device.signal }), {
    message: 'not read: stopping',
  })
  // A failed read keeps the system's code: /proc/self/mem has nothing at address 0.
  await t.rejects(readBoundedInput('/proc/self/mem', MiB), { code: 'EIO' })
  // A terminal with nothing typed (a new pseudo-terminal's master) is asked again, never
  // waited on in a blocking read: it is stopped at once.
  const tty = new AbortController()
  setTimeout(() => {
    tty.abort()
  }, 150)
  await t.rejects(readBoundedInput('/dev/ptmx', MiB, { signal: tty.signal }), {
    message: 'not read: stopping',
  })
})

t.test('a stream read is stopped at once, and the stream destroyed', async (t) => {
  const never = new Readable({ read() {} })
  const stop = new AbortController()
  const reading = readBoundedStream(never, MiB, 'standard input', { signal: stop.signal })
  stop.abort()
  await t.rejects(reading, { path: 'standard input', message: 'not read: stopping' })
  t.ok(never.destroyed)
})
