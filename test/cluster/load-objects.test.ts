/** Reading object files: documents one at a time, Lists expanded, errors that say where. */

import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { MAX_NESTING } from '../../src/policy/kube/nesting.ts'
import {
  ObjectFileError,
  bracketsNestDeeperThan,
  loadObjects,
  parseObjects,
  readObjects,
} from '../../src/cluster/load-objects.ts'

/** A fresh directory for one test's files, removed when the test ends. */
async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'objects-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** A one-object manifest whose name tells which file it came from. */
const configMap = (name: string): string => `kind: ConfigMap\nmetadata: {name: ${name}}\n`

async function namesIn(paths: string[]): Promise<unknown[]> {
  return (await loadObjects(paths)).map((o) => o.metadata?.name)
}

/** The whole message a load fails with (tap's `rejects` would match a part of it). */
async function failure(paths: string[]): Promise<string> {
  try {
    await loadObjects(paths)
  } catch (error) {
    if (error instanceof ObjectFileError) return error.message
    throw error
  }
  throw new Error(`loading ${paths.join(', ')} did not fail`)
}

/** The whole message a parse fails with. */
function parseFailure(text: string, source: string): string {
  try {
    parseObjects(text, source)
  } catch (error) {
    if (error instanceof ObjectFileError) return error.message
    throw error
  }
  throw new Error(`parsing ${source} did not fail`)
}

t.test('multi-document YAML, Lists and empty documents', async (t) => {
  const text = [
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}',
    '',
    'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}',
  ].join('\n---\n')
  const names = parseObjects(text, 'x.yaml').map((o) => o.metadata?.name)
  t.same(names, ['a', 'b', 'c'])
})

t.test('a syntax error names the file, the document, the line and the column', async (t) => {
  const text = 'kind: ConfigMap\nmetadata: {name: a}\n---\nkind: ConfigMap\nmetadata: {name: [}\n'
  t.throws(() => parseObjects(text, 'broken.yaml'), {
    name: 'ObjectFileError',
    message: /^broken\.yaml, document 2: .* at line 5, column \d+$/,
  })
})

t.test('an alias that contains itself is refused, not followed', async (t) => {
  const text = 'kind: ConfigMap\ndata: &loop\n  self: *loop\n'
  t.throws(() => parseObjects(text, 'loop.yaml'), {
    name: 'ObjectFileError',
    message: "loop.yaml, document 1: anchor 'loop' value contains itself at line 3, column 9",
  })
})

t.test('a directory is read file by file, in name order, JSON by the fast path', async (t) => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'b.yaml'), 'kind: ConfigMap\nmetadata: {name: from-yaml}\n')
  await writeFile(
    join(dir, 'a.json'),
    JSON.stringify({
      kind: 'List',
      items: [{ kind: 'ConfigMap', metadata: { name: 'from-json' } }],
    }),
  )
  await writeFile(join(dir, 'notes.txt'), 'not an object file')
  const streamed: unknown[] = []
  for await (const object of readObjects([dir])) streamed.push(object.metadata?.name)
  t.same(streamed, ['from-json', 'from-yaml'])
  t.same(
    (await loadObjects([dir])).map((o) => o.metadata?.name),
    streamed,
  )
  await t.rejects(loadObjects([join(dir, 'missing.yaml')]), ObjectFileError)
})

t.test('values are plain JSON data with strings of their own', async (t) => {
  // Parsed strings are copied out of the file's text (a kept slice would pin the whole text);
  // what is observable is that the objects are plain JSON, identical to a JSON parse.
  const [object] = parseObjects(
    'kind: ConfigMap\nmetadata: {name: a}\ndata:\n  a: "1"\n  b: [1, true, null]\n',
    'x.yaml',
  )
  t.same(object, {
    kind: 'ConfigMap',
    metadata: { name: 'a' },
    data: { a: '1', b: [1, true, null] },
  })
  t.equal(Object.getPrototypeOf(object), Object.prototype)
})

t.test('a directory is read recursively, links followed, extensions in any case', async (t) => {
  // Each of these was skipped without a word: a CI step then passed having checked nothing.
  const dir = await tempDir(t)
  const elsewhere = await tempDir(t)
  await mkdir(join(dir, 'sub', 'deeper'), { recursive: true })
  await writeFile(join(dir, 'sub', 'deeper', 'nested.yml'), configMap('nested'))
  await writeFile(join(dir, 'UPPER.YAML'), configMap('upper'))
  await writeFile(join(dir, 'Mixed.Json'), '{"kind": "ConfigMap", "metadata": {"name": "mixed"}}')
  await writeFile(join(dir, '.hidden.yaml'), configMap('hidden'))
  await writeFile(join(dir, 'README.md'), '# not an object file')
  await writeFile(join(elsewhere, 'target.yaml'), configMap('linked-file'))
  await mkdir(join(elsewhere, 'linked'))
  await writeFile(join(elsewhere, 'linked', 'in-linked-dir.yaml'), configMap('linked-dir'))
  await symlink(join(elsewhere, 'target.yaml'), join(dir, 'link.yaml'))
  await symlink(join(elsewhere, 'linked'), join(dir, 'link-dir'))
  // Entries in code-point order, subdirectories where their names fall, as kubectl -R walks.
  t.same(await namesIn([dir]), ['hidden', 'mixed', 'upper', 'linked-dir', 'linked-file', 'nested'])
})

t.test('a mounted ConfigMap volume: each file once, by its plain name', async (t) => {
  // The kubelet's layout: every file a link into ..data, itself a link to a timestamped
  // directory. Walked naively, each file comes once through its link and once more from the
  // timestamped directory (and again from the previous one while an update is under way).
  const volume = await tempDir(t)
  const version = '..2026_11_23_10_00_00.123'
  await mkdir(join(volume, version))
  await writeFile(join(volume, version, 'server.yaml'), configMap('server'))
  await writeFile(join(volume, version, 'proxy.yaml'), 'kind: ConfigMap\nmetadata: {name: [\n')
  await symlink(version, join(volume, '..data'))
  await symlink(join('..data', 'server.yaml'), join(volume, 'server.yaml'))
  t.same(await namesIn([volume]), ['server'])
  // Errors name the file the user sees, not the kubelet's timestamped copy.
  await symlink(join('..data', 'proxy.yaml'), join(volume, 'proxy.yaml'))
  t.match(await failure([volume]), new RegExp(`^${join(volume, 'proxy.yaml')}, document 1: `))
})

t.test('link cycles end: a directory reached twice is read once', async (t) => {
  const dir = await tempDir(t)
  await mkdir(join(dir, 'sub'))
  await writeFile(join(dir, 'sub', 'only.yaml'), configMap('only'))
  await symlink('..', join(dir, 'sub', 'up')) // sub/up/sub/up/… are the same two directories
  await symlink('sub', join(dir, 'again'))
  t.same(await namesIn([dir]), ['only'])
  // Across paths too: a file named again is not read again.
  t.same(await namesIn([dir, join(dir, 'sub'), join(dir, 'again', 'only.yaml')]), ['only'])
})

t.test('a link cycle between files is an error that names it, not a hang', async (t) => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'fine.yaml'), configMap('fine'))
  await symlink('b.yaml', join(dir, 'a.yaml'))
  await symlink('a.yaml', join(dir, 'b.yaml'))
  t.equal(await failure([dir]), `${join(dir, 'a.yaml')}: too many symbolic links encountered`)
})

t.test('a path that yields no object is an error, not an empty success', async (t) => {
  const dir = await tempDir(t)
  await mkdir(join(dir, 'empty'))
  await mkdir(join(dir, 'no-manifests'))
  await writeFile(join(dir, 'no-manifests', 'notes.txt'), 'kind: ConfigMap\n')
  await writeFile(join(dir, 'blank.yaml'), '---\n# nothing\n---\n')
  await writeFile(join(dir, 'one.yaml'), configMap('one'))
  for (const name of ['empty', 'no-manifests']) {
    t.equal(
      await failure([join(dir, 'one.yaml'), join(dir, name)]),
      `${join(dir, name)}: no objects found (reads *.yaml, *.yml, *.json files, recursively)`,
    )
  }
  t.equal(await failure([join(dir, 'blank.yaml')]), `${join(dir, 'blank.yaml')}: no objects found`)
})

t.test('a missing path is named with the reason in words', async (t) => {
  const missing = join(await tempDir(t), 'my-manifests/')
  t.equal(await failure([missing]), `${missing}: no such file or directory`)
})

t.test('an alias bomb is refused as a document error', async (t) => {
  // kubectl's own guard (go-yaml's): aliases may make up only so much of the decoded nodes.
  const laughs = ['kind: ConfigMap', 'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]']
  for (const [name, previous] of ['ba', 'cb', 'dc', 'ed', 'fe']) {
    laughs.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`)
  }
  t.equal(
    parseFailure(`kind: ConfigMap\nmetadata: {name: a}\n---\n${laughs.join('\n')}\n`, 'bomb.yaml'),
    'bomb.yaml, document 2: document contains excessive aliasing',
  )
})

t.test('an object nested deeper than the limit is refused, JSON or YAML', async (t) => {
  const nested = (levels: number) =>
    `{"kind":"ConfigMap","metadata":{"name":"a"},"data":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`
  // The object itself is one level: MAX_NESTING - 1 more levels are still read.
  t.equal(parseObjects(nested(MAX_NESTING - 1), 'ok.json').length, 1)
  // (Far deeper, the YAML parser gives up on its own, also as this file's document error.)
  for (const [source, levels] of [
    ['deep.json', 6_000],
    ['deep.yaml', MAX_NESTING + 50],
  ] as const)
    t.equal(
      parseFailure(nested(levels), source),
      `${source}, document 1: nested deeper than ${MAX_NESTING} levels`,
    )
})

t.test('a mapping of 40,000 keys is read; a repeated key is still refused, named', async (t) => {
  // The yaml library's own duplicate check compares each key with every earlier one (seconds
  // for this document); the loader checks with a Set instead. Not timed here: correctness only.
  const keys = Array.from({ length: 40_000 }, (_, i) => `  k${i}: x`)
  const text = `kind: ConfigMap\nmetadata: {name: a}\ndata:\n${keys.join('\n')}\n`
  const [object] = parseObjects(text, 'big.yaml')
  t.equal(Object.keys((object as { data: object }).data).length, 40_000)
  t.equal(
    parseFailure(`${text}  k39999: again\n`, 'big.yaml'),
    'big.yaml, document 1: Map keys must be unique: "k39999" repeated at line 40004, column 3',
  )
})

t.test('repeated keys are found in every mapping, flow or block, nested or in keys', async (t) => {
  const cases: [string, string][] = [
    ['kind: ConfigMap\nmetadata:\n  name: a\n  name: b\n', '"name" repeated at line 4, column 3'],
    ['kind: ConfigMap\ndata: {a: 1, b: 2, a: 3}\n', '"a" repeated at line 2, column 20'],
    // `y` is a boolean to kubectl (YAML 1.1): the key "true".
    ['kind: ConfigMap\nx: [{y: 1}, {y: 1, y: 2}]\n', '"true" repeated at line 2, column 20'],
    ['kind: ConfigMap\nx: [{k: 1, k: 2}]\n', '"k" repeated at line 2, column 12'],
    ['kind: ConfigMap\nkind: Secret\n', '"kind" repeated at line 2, column 1'],
    // The same value spelled differently is the same key, as it is to kubectl; and so are two
    // keys kubectl writes as the same JSON key (it keeps either at random).
    ['kind: ConfigMap\n1: a\n0x1: b\n', '"1" repeated at line 3, column 1'],
    ['kind: ConfigMap\nyes: a\n"true": b\n', '"true" repeated at line 3, column 1'],
  ]
  for (const [text, where] of cases) {
    t.equal(
      parseFailure(text, 'dup.yaml'),
      `dup.yaml, document 1: Map keys must be unique: ${where}`,
    )
  }
  // A syntax error before the repetition is the one reported: the first problem in the text.
  t.match(parseFailure('kind: [\na: 1\na: 2\n', 'dup.yaml'), /^dup\.yaml, document 1: (?!Map)/)
  // Equal keys in different mappings are no repetition.
  t.equal(
    parseObjects('kind: ConfigMap\nmetadata: {name: a}\na: {k: 1}\nb: {k: 1}\n', 'ok.yaml').length,
    1,
  )
})

t.test('binary content is shown as a short escaped excerpt, never raw', async (t) => {
  const png = `\u0089PNG\r\n\u001a\n\u0000\u0000\u0000\rIHDR${'\u0000\u0001\u007f'.repeat(500)}`
  for (const source of ['image.yaml', 'image.json']) {
    const message = parseFailure(png, source)
    t.match(message, `${source}: binary content, not YAML or JSON: "\\u0089PNG\\r\\n\\u001a\\n`)
    t.ok(message.length <= source.length + 100, `short (${message.length})`)
    t.notMatch(message, /\p{Cc}/u, 'no control characters')
  }
})

t.test('a parser message that quotes the text is escaped and cut short', async (t) => {
  // The yaml library quotes what it could not parse, however long; V8's JSON.parse quotes a few
  // characters around the error, raw. Neither may carry control characters or run for pages.
  const junk = `\u0007\u001b[31m${'x'.repeat(5000)}`
  const cases: [string, string][] = [
    ['a.yaml', `| ${junk}\n`], // "Not a YAML token: " and the rest of the line
    ['b.yaml', `kind: ConfigMap\ndata: |x${junk}\n  a\n`], // "Block scalar header includes …"
    ['c.json', `{"kind": "ConfigMap", "data": ${junk}}`], // "Unexpected token …"
  ]
  for (const [source, text] of cases) {
    const message = parseFailure(text, source)
    t.notMatch(message, /\p{Cc}/u, `${source}: no control characters`)
    t.match(message, /\\u0007\\u001b\[31m/, `${source}: escaped as JSON.stringify escapes`)
    t.ok(message.length < 200, `${source}: short (${message.length})`)
  }
})

t.test(
  'what cannot be checked exactly is refused with one line naming file and document',
  async (t) => {
    const named = 'kind: ConfigMap\nmetadata: {name: a}\n'
    const cases: { name: string; source: string; text: string; message: string }[] = [
      {
        name: 'a repeated key in JSON, as in YAML',
        source: 'dup.json',
        text: '{"kind":"ConfigMap","metadata":{"name":"a","name":"b"}}',
        message:
          'dup.json, document 1: Map keys must be unique: "name" repeated at line 1, column 44',
      },
      {
        name: 'a repeated key in JSON spelled with an escape',
        source: 'dup.json',
        text: '{"kind":"ConfigMap","metadata":{"name":"a"},"\\u006bind":"x"}',
        message:
          'dup.json, document 1: Map keys must be unique: "kind" repeated at line 1, column 45',
      },
      {
        name: 'a number beyond float64 in JSON',
        source: 'big.json',
        text: '{"kind":"Deployment","metadata":{"name":"a"},"spec":{"replicas":1e400}}',
        message:
          'big.json, document 1: the number 1e400 is beyond float64 (kubectl refuses it) at line 1, column 65',
      },
      {
        name: 'an integer past 2^53 in JSON',
        source: 'int.json',
        text: '{"kind":"Deployment","metadata":{"name":"a"},"spec":{"replicas":9007199254740993}}',
        message:
          'int.json, document 1: the integer 9007199254740993 is beyond 2^53: it cannot be read exactly here at line 1, column 65',
      },
      {
        name: 'an integer past 2^53 in YAML',
        source: 'int.yaml',
        text: `${named}spec: {replicas: 9007199254740993}\n`,
        message:
          'int.yaml, document 1: the integer 9007199254740993 is beyond 2^53: it cannot be read exactly here at line 3, column 18',
      },
      {
        name: '.nan in a list',
        source: 'nan.yaml',
        text: `${named}data: {x: [1, .nan]}\n`,
        message:
          'nan.yaml, document 1: .nan is no number JSON can hold (kubectl refuses it) at line 3, column 15',
      },
      {
        name: 'no name',
        source: 'x.yaml',
        text: 'kind: ConfigMap\nmetadata: {labels: {a: b}}\n',
        message: 'x.yaml, document 1: ConfigMap has no metadata.name',
      },
      {
        name: 'no metadata',
        source: 'x.yaml',
        text: 'kind: ConfigMap\n',
        message: 'x.yaml, document 1: ConfigMap has no metadata.name',
      },
      {
        name: 'an empty name',
        source: 'x.json',
        text: '{"kind":"ConfigMap","metadata":{"name":""}}',
        message: 'x.json, document 1: ConfigMap has no metadata.name',
      },
      {
        name: 'metadata that is a list',
        source: 'x.yaml',
        text: 'kind: ConfigMap\nmetadata: [a]\n',
        message: 'x.yaml, document 1: metadata must be a mapping, got a list',
      },
      {
        name: 'metadata that is a string',
        source: 'x.yaml',
        text: 'kind: ConfigMap\nmetadata: a\n',
        message: 'x.yaml, document 1: metadata must be a mapping, got string',
      },
      {
        name: 'a name that is a number',
        source: 'x.yaml',
        text: 'kind: ConfigMap\nmetadata: {name: 7}\n',
        message: 'x.yaml, document 1: metadata.name must be a string, got number',
      },
      {
        name: 'a namespace that is null',
        source: 'x.yaml',
        text: 'kind: ConfigMap\nmetadata: {name: a, namespace: null}\n',
        message: 'x.yaml, document 1: metadata.namespace must be a string, got null',
      },
      {
        name: 'an unnamed item of a nested List',
        source: 'l.yaml',
        text: `kind: List\nitems:\n- kind: List\n  items:\n  - ${named.replace('\n', '\n    ')}\n  - {kind: ConfigMap}\n`,
        message: 'l.yaml, document 1, items[0], items[1]: ConfigMap has no metadata.name',
      },
      {
        name: 'a List whose items are no list',
        source: 'l.yaml',
        text: 'kind: List\nitems: {a: b}\n',
        message: 'l.yaml, document 1: items of a List must be a list',
      },
      {
        name: 'a file name with a newline and an escape sequence',
        source: 'evil\nOK: \u001b[2J.yaml',
        text: 'kind: ConfigMap\n',
        message: 'evil\\nOK: \\x1b[2J.yaml, document 1: ConfigMap has no metadata.name',
      },
    ]
    for (const { name, source, text, message } of cases) {
      t.equal(parseFailure(text, source), message, name)
    }
  },
)

t.test('what kubectl reads is read the same: BOM, nested Lists, tags', async (t) => {
  const bom = '\uFEFF{"kind":"ConfigMap","metadata":{"name":"a"}}'
  t.same(parseObjects(bom, 'bom.json'), parseObjects(bom, 'bom.yaml'), 'a BOM, JSON as YAML')
  const nested =
    'kind: List\nitems:\n- {kind: ConfigMap, metadata: {name: a}}\n- kind: ConfigMapList\n  items:\n  - {kind: ConfigMap, metadata: {name: b}}\n'
  t.same(
    parseObjects(nested, 'l.yaml').map((o) => o.metadata?.name),
    ['a', 'b'],
    'nested Lists are flattened, every item checked',
  )
  const [tagged] = parseObjects(
    'kind: ConfigMap\nmetadata: {name: a, generateName: g}\ndata:\n  bin: !!binary aGVsbG8=\n  set: !!set {x, y}\n  custom: !foo bar\n  str: !!str 3\n  int: !!int "3"\n  twice: &b !!binary aGk=\n  again: *b\n',
    'tags.yaml',
  )
  t.same(tagged?.['data'], {
    bin: 'hello',
    set: { x: null, true: null }, // `y` is a boolean to kubectl
    custom: 'bar',
    str: '3',
    int: 3,
    twice: 'hi',
    again: 'hi',
  })
  t.equal(parseObjects('{"kind":"ConfigMap","metadata":{"generateName":"g-"}}', 'g.json').length, 1)
})

t.test('the bracket pre-scan counts nesting, mixed brackets alike, not brackets', async (t) => {
  const nest = (levels: number) =>
    Array.from({ length: levels }, (_, i) => (i % 2 === 0 ? '[' : '{')).join('')
  t.equal(bracketsNestDeeperThan(nest(MAX_NESTING), MAX_NESTING), false, 'at the limit')
  t.equal(bracketsNestDeeperThan(nest(MAX_NESTING + 1), MAX_NESTING), true, 'past it')
  // Many brackets, none deep: past the count that starts the walk, still read.
  t.equal(bracketsNestDeeperThan('[] {} '.repeat(10 * MAX_NESTING), MAX_NESTING), false)
})

t.test('deep flow nesting is refused before parsing, in linear time', async (t) => {
  // Each would overflow the parser's stack (seconds, hundreds of MB) without the pre-scan; the
  // test's own timeout is the bound.
  const cases: [string, string][] = [
    ['flow.yaml', `kind: ConfigMap\ndata: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`],
    ['flow.yaml', `kind: ConfigMap\ndata: ${'{a: '.repeat(100_000)}1${'}'.repeat(100_000)}\n`],
    ['deep.json', `{"kind":"ConfigMap","data":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`],
    ['open.yaml', `kind: ConfigMap\ndata: ${'['.repeat(1_000_000)}\n`],
  ]
  for (const [source, text] of cases) {
    t.equal(
      parseFailure(text, source),
      `${source}, document 1: nested deeper than ${MAX_NESTING} levels`,
      source,
    )
  }
  // Brackets inside double-quoted strings do not count.
  const quotedBrackets = `kind: ConfigMap\nmetadata: {name: a}\ndata: {x: "${'['.repeat(1000)}"}\n`
  t.equal(parseObjects(quotedBrackets, 'q.yaml').length, 1)
  t.equal(
    parseObjects(JSON.stringify(parseObjects(quotedBrackets, 'q.yaml')[0]), 'q.json').length,
    1,
  )
})
