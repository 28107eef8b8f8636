/**
 * Paths that are no regular file, or too large, through every command that reads a file (`check`,
 * `--objects` of `check`, `review` and `serve`, the review file, standard input, `--client-ca`):
 * exit 2 at once with one line naming the path and what it is, never a blocked read (a FIFO with
 * no writer), a read that never ends (`/dev/zero`) or the memory to hold it. A test that blocked
 * would fail at tap's timeout.
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

/** What an object file that is a pipe is told: how to read a pipe instead. */
const INPUT_PIPE_HINT = ': to read a pipe, give - and pipe it to standard input'

/** [path, what the line says about it] for every kind of file that is not one. */
async function notRegular(
  t: Test,
  { input = true }: { readonly input?: boolean } = {},
): Promise<(readonly [string, string])[]> {
  const files = await specialFiles(t)
  // A file a command can also read from standard input says how to read a pipe.
  const PIPE_HINT = input ? INPUT_PIPE_HINT : ''
  return [
    ['/dev/zero', 'not a regular file (a character device)'],
    ['/dev/null', 'not a regular file (a character device)'],
    ['/dev/urandom', 'not a regular file (a character device)'],
    [files.zeroLink, 'not a regular file (a character device)'],
    [files.fifo, `not a regular file (a FIFO)${PIPE_HINT}`],
    [files.fifoLink, `not a regular file (a FIFO)${PIPE_HINT}`],
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

t.test('check and --objects of every command refuse what is not a regular file', async (t) => {
  for (const [path, reason] of await notRegular(t)) {
    refusedWith(t, await runCli(['check', path]), `${path}: ${reason}`)
    // Named by an option: the line says which one.
    const byOption = `--objects ${path}: ${reason}`
    refusedWith(t, await runCli(['check', '--objects', path, OBJECTS]), byOption)
    refusedWith(t, await runCli(['review', '--objects', path, REVIEW]), byOption)
    refusedWith(t, await serve(['--objects', path]), byOption)
  }
})

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

t.test('review refuses a review file that is not a regular file', async (t) => {
  for (const [path, reason] of await notRegular(t)) {
    refusedWith(t, await runCli(['review', path]), `${path}: ${reason}`)
  }
})

t.test('--client-ca that is not a regular file: exit 2 before anything listens', async (t) => {
  const rows = await notRegular(t, { input: false })
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
