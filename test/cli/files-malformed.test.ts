/**
 * Malformed object files through every command that reads them (`check`, `review --objects`,
 * `serve --objects`): exit 2 and one line naming the file and document, never a stack trace,
 * never exit 1 (which means "denied"), never the file's raw bytes.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { runCli } from '../helpers/cli.ts'

const REVIEW = 'samples/reviews/runconfig-configmap-create.json'

/** A fresh directory for one test's files, removed when the test ends. */
async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'files-cli-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** Billion laughs: six levels of nine aliases each, 9^6 strings once expanded. */
function aliasBomb(): string {
  const lines = ['kind: ConfigMap', 'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]']
  for (const [name, previous] of ['ba', 'cb', 'dc', 'ed', 'fe']) {
    lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`)
  }
  return `${lines.join('\n')}\n`
}

t.test('an alias bomb: exit 2 naming file and document, in every command', async (t) => {
  const dir = await tempDir(t)
  const bomb = join(dir, 'bomb.yaml')
  await writeFile(bomb, aliasBomb())
  const line = `mcp-admission: ${bomb}, document 1: document contains excessive aliasing\n`
  t.same(await runCli(['check', bomb]), { code: 2, stdout: '', stderr: line })
  const byOption = line.replace('mcp-admission: ', 'mcp-admission: --objects ')
  t.same(await runCli(['review', '--objects', bomb, REVIEW]), {
    code: 2,
    stdout: '',
    stderr: byOption,
  })
  // serve reads its objects before it listens; the certificates, if any, go to the temp dir.
  const serve = await runCli([
    'serve',
    '--objects',
    bomb,
    '--cert-dir',
    join(dir, 'certs'),
    '--port',
    '0',
    '--probe-port',
    '0',
  ])
  t.equal(serve.code, 2)
  t.equal(serve.stderr, byOption)
})

t.test('an object nested 6,000 deep: exit 2, not a stack overflow in any output', async (t) => {
  const dir = await tempDir(t)
  const deep = join(dir, 'deep.json')
  await writeFile(deep, `{"kind":"ConfigMap","data":${'{"a":'.repeat(6_000)}1${'}'.repeat(6_000)}}`)
  for (const output of ['text', 'yaml', 'json'])
    t.same(await runCli(['check', '-o', output, deep]), {
      code: 2,
      stdout: '',
      stderr: `mcp-admission: ${deep}, document 1: nested deeper than 200 levels\n`,
    })
})

t.test('a binary file: an escaped excerpt of its start, not its bytes', async (t) => {
  const dir = await tempDir(t)
  const gzip = Buffer.from([0x1f, 0x8b, 0x08, 0x00, ...Array<number>(4000).fill(0x07)])
  for (const name of ['archive.yaml', 'archive.json']) {
    await writeFile(join(dir, name), gzip)
    const result = await runCli(['check', join(dir, name)])
    t.equal(result.code, 2, name)
    t.match(result.stderr, `${name}: binary content, not YAML or JSON: "\\u001f`, name)
    t.ok(result.stderr.length < 200, `${name}: short`)
    t.notMatch(result.stderr.slice(0, -1), /\p{Cc}/u, `${name}: escaped`)
  }
  // review's own file: V8's JSON.parse message quotes it raw.
  const review = join(dir, 'review.json')
  await writeFile(review, Buffer.from([0x07, 0x1b, 0x5b, ...Array<number>(40).fill(0x01)]))
  const result = await runCli(['review', review])
  t.equal(result.code, 2)
  t.match(result.stderr, `${review} is not valid JSON: `)
  t.notMatch(result.stderr.slice(0, -1), /\p{Cc}/u, 'escaped')
})

t.test('a repeated key: exit 2, the key and its line named', async (t) => {
  const file = join(await tempDir(t), 'dup.yaml')
  await writeFile(file, 'apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  name: b\n')
  t.same(await runCli(['check', file]), {
    code: 2,
    stdout: '',
    stderr: `mcp-admission: ${file}, document 1: Map keys must be unique: "name" repeated at line 5, column 3\n`,
  })
})
