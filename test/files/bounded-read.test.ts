/**
 * The bounded reader on its own: what it reads, what it refuses and how the refusal reads. The
 * commands that use it are tested with the same hostile files in test/cli/files-special.test.ts.
 */

import { execFileSync } from 'node:child_process'
import { symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import t from 'tap'
import type { FileReadError } from '../../src/files/bounded-read.ts'
import { MiB, readBoundedFile, readBoundedStream, sizeText } from '../../src/files/bounded-read.ts'

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
