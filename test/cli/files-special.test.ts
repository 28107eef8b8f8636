/**
 * Paths that are no regular file, or too large, through every command that reads a file. Inputs
 * (`check`'s files, `--objects` of `check`, `review` and `serve`, the review file, standard input)
 * read a character device up to their bound and refuse a socket; configuration (`--client-ca`,
 * `--crds`) is a regular file or nothing. Either ends at once with one line naming the path and
 * what it is, exit 2: never a read that never ends (`/dev/zero`) or the memory to hold it. A test
 * that blocked would fail at tap's timeout. FIFOs given as inputs are read (a pipeline's output):
 * test/cli/input-signals.test.ts runs those in a child process, with and without a writer.
 */

import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import t from 'tap'
import type { Test } from 'tap'
import { run } from '../../src/cli/program.ts'
import { REVIEW_MAX_BYTES } from '../../src/cli/review.ts'
import { OBJECT_FILE_MAX_BYTES } from '../../src/cluster/load-files.ts'
import { MiB } from '../../src/files/bounded-read.ts'
import { CLIENT_CA_MAX_BYTES } from '../../src/http/client-ca.ts'
import { BODY_LIMIT_BYTES } from '../../src/http/app.ts'
import { runCli } from '../helpers/cli.ts'
import { freePort } from '../helpers/ports.ts'

const REVIEW = 'samples/reviews/runconfig-configmap-create.json'
const OBJECTS = 'samples/objects'

/** The special files of one test: each is what its name says. */
async function specialFiles(t: Test) {
  const dir = t.testdir({ 'in-dir': {} })
  const fifo = join(dir, 'fifo.yaml')
  execFileSync('mkfifo', [fifo])
  const fifoInDir = join(dir, 'in-dir', 'objects.yaml')
  execFileSync('mkfifo', [fifoInDir])
  // A socket's path must be short (108 bytes): it lives in a directory of its own under /tmp.
  const socketDir = await mkdtemp(join(tmpdir(), 'sock-'))
  t.teardown(() => rm(socketDir, { recursive: true, force: true }))
  const socket = join(socketDir, 'socket.yaml')
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(socket, resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          resolve()
        }),
      ),
  )
  const zeroLink = join(dir, 'zero.yaml')
  await symlink('/dev/zero', zeroLink)
  const fifoLink = join(dir, 'fifo-link.json')
  await symlink(fifo, fifoLink)
  return { dir, fifo, fifoInDir, socket, zeroLink, fifoLink }
}

/** [path, what the line says about it] for every kind of configuration file that is not one. */
function notRegular(
  files: Awaited<ReturnType<typeof specialFiles>>,
): (readonly [string, string])[] {
  return [
    ['/dev/zero', 'not a regular file (a character device)'],
    ['/dev/null', 'not a regular file (a character device)'],
    ['/dev/urandom', 'not a regular file (a character device)'],
    [files.zeroLink, 'not a regular file (a character device)'],
    [files.fifo, 'not a regular file (a FIFO)'],
    [files.fifoLink, 'not a regular file (a FIFO)'],
    [files.socket, 'not a regular file (a socket)'],
  ]
}

/** A sparse file one byte over `bytes`: its size is refused before anything is read. */
async function oversized(dir: string, name: string, bytes: number): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, '')
  await truncate(path, bytes + 1)
  return path
}

function refusedWith(t: Test, result: { code: number; stderr: string }, line: string): void {
  t.equal(result.code, 2, 'exit 2')
  t.equal(result.stderr, `mcp-admission: ${line}\n`, line)
}

t.test(
  'check and --objects of every command: a device is read to the bound, a socket refused',
  async (t) => {
    const { zeroLink, socket } = await specialFiles(t)
    const tooLarge = `larger than ${OBJECT_FILE_MAX_BYTES / MiB} MiB`
    const rows: readonly (readonly [string, string, 'all' | 'check'])[] = [
      ['/dev/zero', tooLarge, 'all'],
      [socket, 'not a file or a pipe (a socket)', 'all'],
      ['/dev/urandom', tooLarge, 'check'],
      [zeroLink, tooLarge, 'check'],
      ['/dev/null', 'no objects found', 'check'],
    ]
    for (const [path, reason, commands] of rows) {
      refusedWith(t, await runCli(['check', path]), `${path}: ${reason}`)
      if (commands === 'check') continue
      // Named by an option: the line says which one.
      const byOption = `--objects ${path}: ${reason}`
      refusedWith(t, await runCli(['check', '--objects', path, OBJECTS]), byOption)
      refusedWith(t, await runCli(['review', '--objects', path, REVIEW]), byOption)
      refusedWith(t, await serve(['--objects', path]), byOption)
    }
  },
)

t.test('a FIFO named like an object file in a directory is refused, not skipped', async (t) => {
  const { fifoInDir, dir } = await specialFiles(t)
  const line = `${fifoInDir}: not a regular file (a FIFO)`
  refusedWith(t, await runCli(['check', join(dir, 'in-dir')]), line)
  refusedWith(
    t,
    await runCli(['check', '--objects', join(dir, 'in-dir'), OBJECTS]),
    `--objects ${line}`,
  )
})

t.test('review reads a device as a review file to its bound, and refuses a socket', async (t) => {
  const { socket } = await specialFiles(t)
  const tooLarge = `larger than ${REVIEW_MAX_BYTES / MiB} MiB`
  refusedWith(t, await runCli(['review', '/dev/zero']), `/dev/zero: ${tooLarge}`)
  refusedWith(t, await runCli(['review', '/dev/urandom']), `/dev/urandom: ${tooLarge}`)
  refusedWith(t, await runCli(['review', socket]), `${socket}: not a file or a pipe (a socket)`)
  const empty = await runCli(['review', '/dev/null'])
  t.equal(empty.code, 2)
  t.match(empty.stderr, /^mcp-admission: \/dev\/null is not valid JSON/, 'read, and empty')
})

t.test('--crds is configuration: a regular file or nothing, named in the line', async (t) => {
  const files = await specialFiles(t)
  const { dir, fifoInDir } = files
  const crds = async (path: string) => runCli(['check', '--crds', path, OBJECTS])
  for (const [path, reason] of notRegular(files)) {
    refusedWith(t, await crds(path), `${path}: ${reason}`)
  }
  refusedWith(t, await crds(join(dir, 'in-dir')), `${fifoInDir}: not a regular file (a FIFO)`)
  await symlink(join(dir, 'gone.yaml'), join(dir, 'dangling.yaml'))
  refusedWith(
    t,
    await crds(join(dir, 'dangling.yaml')),
    `${join(dir, 'dangling.yaml')}: a symbolic link to ${join(dir, 'gone.yaml')}, which does not exist`,
  )
  const big = await oversized(dir, 'big-crds.yaml', OBJECT_FILE_MAX_BYTES)
  refusedWith(
    t,
    await crds(big),
    `${big}: larger than ${OBJECT_FILE_MAX_BYTES / MiB} MiB (${OBJECT_FILE_MAX_BYTES + 1} bytes)`,
  )
})

t.test('--client-ca that is not a regular file: exit 2 before anything listens', async (t) => {
  const rows = notRegular(await specialFiles(t))
  for (const [path, reason] of rows) {
    refusedWith(
      t,
      await serve(['--cert-dir', join(tmpdir(), 'mcp-admission-no-certs'), '--client-ca', path]),
      `--client-ca ${path}: ${reason}`,
    )
  }
})

t.test('files over their bound are refused by size, before they are read', async (t) => {
  t.equal(REVIEW_MAX_BYTES, BODY_LIMIT_BYTES, "a review file is bounded as the server's body")
  const dir = t.testdir()
  const objects = await oversized(dir, 'big.yaml', OBJECT_FILE_MAX_BYTES)
  const tooLarge = (path: string, bytes: number) =>
    `${path}: larger than ${bytes / 1024 / 1024} MiB (${bytes + 1} bytes)`
  refusedWith(t, await runCli(['check', objects]), tooLarge(objects, OBJECT_FILE_MAX_BYTES))
  refusedWith(
    t,
    await runCli(['review', '--objects', objects, REVIEW]),
    `--objects ${tooLarge(objects, OBJECT_FILE_MAX_BYTES)}`,
  )
  const review = await oversized(dir, 'big.json', REVIEW_MAX_BYTES)
  refusedWith(t, await runCli(['review', review]), tooLarge(review, REVIEW_MAX_BYTES))
  const ca = await oversized(dir, 'ca.pem', CLIENT_CA_MAX_BYTES)
  refusedWith(
    t,
    await serve(['--cert-dir', join(dir, 'certs'), '--client-ca', ca]),
    `--client-ca ${tooLarge(ca, CLIENT_CA_MAX_BYTES)}`,
  )
})

t.test('review - reads standard input up to the same bound', async (t) => {
  const rows: readonly (readonly [string, number, string | undefined])[] = [
    ['one byte over', REVIEW_MAX_BYTES + 1, 'standard input: larger than 7 MiB'],
    ['far over', 3 * REVIEW_MAX_BYTES, 'standard input: larger than 7 MiB'],
  ]
  for (const [name, bytes, line] of rows) {
    const result = await runCli(['review', '-'], ' '.repeat(bytes))
    if (line !== undefined) refusedWith(t, result, line)
    t.comment(name)
  }
  // At the bound it is read (and then it is no JSON: whitespace only).
  const atBound = await runCli(['review', '-'], ' '.repeat(REVIEW_MAX_BYTES))
  t.equal(atBound.code, 2)
  t.match(atBound.stderr, /^mcp-admission: standard input is not valid JSON/)
})

/** `serve` in-process: a start that fails returns its exit code; one that starts is stopped. */
async function serve(args: string[]): Promise<{ code: number; stderr: string }> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const err: string[] = []
  stdout.resume()
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString('utf8')))
  const code = await run(
    [
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      String(await freePort()),
      '--probe-host',
      '127.0.0.1',
      '--probe-port',
      String(await freePort()),
      ...args,
    ],
    {
      stdout,
      stderr,
      stdin: Readable.from(['']),
      env: {},
      runUntilSignal: (close) => {
        void close()
      },
    },
  )
  return { code, stderr: err.join('') }
}
