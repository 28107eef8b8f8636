/**
 * Object files read as kubectl reads them (issue 37): YAML 1.1 scalars as go-yaml resolves them,
 * `<<` merges, kubectl's document split (a byte order mark at any document, JSON streams), and
 * what kubectl refuses refused in one line. test/e2e/yaml-parity.test.ts proves the same against
 * kubectl's own code; these are the cases that matter most, kept fast and without Go.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { ObjectFileError, parseDocuments, parseObjects } from '../../src/cluster/load-objects.ts'
import { isGoTimestamp } from '../../src/cluster/load-scalar.ts'
import { goFloat32Text } from '../../src/cluster/load-yaml.ts'
import { MAX_NESTING } from '../../src/policy/kube/nesting.ts'
import { runCli } from '../helpers/cli.ts'

const named = 'kind: ConfigMap\nmetadata: {name: a}\n'

/** The value of `data.v` when `v` is written as `scalar`. */
function valueOf(scalar: string): unknown {
  const [object] = parseObjects(`${named}data:\n  v: ${scalar}\n`, 'v.yaml')
  return (object?.['data'] as { v: unknown }).v
}

/** The keys of `data` when one key is written as `key`. */
function keyOf(key: string): string[] {
  const [object] = parseObjects(`${named}data:\n  ${key}: x\n`, 'k.yaml')
  return Object.keys(object?.['data'] as object)
}

/** The whole message a parse fails with. */
function failure(content: string | Uint8Array, source = 'f.yaml'): string {
  try {
    parseObjects(content, source)
  } catch (error) {
    if (error instanceof ObjectFileError) return error.message
    throw error
  }
  throw new Error(`parsing ${source} did not fail`)
}

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kubectl-read-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

t.test('plain scalars resolve as go-yaml resolves them (YAML 1.1)', async (t) => {
  const cases: [string, unknown][] = [
    ['yes', true],
    ['Yes', true],
    ['YES', true],
    ['y', true],
    ['Y', true],
    ['on', true],
    ['ON', true],
    ['True', true],
    ['NO', false],
    ['n', false],
    ['Off', false],
    ['FALSE', false],
    ['yEs', 'yEs'],
    ['~', null],
    ['NULL', null],
    ['', null],
    ['017', 15],
    ['0o17', 15],
    ['0x1F', 31],
    ['0b101', 5],
    ['-0b101', -5],
    ['0b-101', -5],
    ['1_000', 1000],
    ['+12', 12],
    ['08', 8],
    ['09.5', 9.5],
    ['1e3', 1000],
    ['.5', 0.5],
    ['.5_5', 0.55],
    ['._5', '._5'],
    ['-.inf', undefined],
    ['1e400', '1e400'],
    ['1e-400', 0],
    ['9223372036854775808', 9223372036854775808],
    ['18446744073709551616', '18446744073709551616'],
    ['99999999999999999999', 1e20],
    ['9007199254740992', 9007199254740992],
    ['2001-12-14', '2001-12-14'],
    ['2001-12-14t21:59:43.10-05:00', '2001-12-14t21:59:43.10-05:00'],
    ['1:20', '1:20'],
    ['"yes"', 'yes'],
    ["'017'", '017'],
    ['|\n    yes', 'yes\n'],
    ['!!str 017', '017'],
    ['!!int "017"', 15],
    ['!!float 3', 3],
    ['!!bool "on"', true],
    ['!!null ""', null],
    ['!!binary aGVsbG8=', 'hello'],
    ['!!binary 4oI=', '\uFFFD\uFFFD'], // each byte of a broken sequence, as Go's JSON writes it
    ['!!timestamp 2001-12-14 21:59:43.10', '2001-12-14 21:59:43.10'],
    ['!foo 3', '3'],
    ['! yes', 'yes'],
    ['!!set x', 'x'],
    ['<<', '<<'],
    ['"it\\\'s"', "it's"],
  ]
  for (const [scalar, expected] of cases) {
    if (expected === undefined) {
      t.match(failure(`${named}data:\n  v: ${scalar}\n`), /is no number JSON can hold/, scalar)
    } else t.same(valueOf(scalar), expected, scalar)
  }
})

t.test('keys become JSON keys as sigs.k8s.io/yaml writes them', async (t) => {
  const cases: [string, string][] = [
    ['yes', 'true'],
    ['off', 'false'],
    ['0x1F', '31'],
    ['1.5', '1.5'],
    ['1.0', '1'],
    ['123456.0', '123456'],
    ['1e6', '1e+06'],
    ['0.1234567891', '0.12345679'],
    ['1e-5', '1e-05'],
    ['0.0001', '0.0001'],
    ['-2.5e-7', '-2.5e-07'],
    ['1e39', '.inf'],
    ['-1e39', '-.inf'],
    ['.nan', '.nan'],
    ['-0.0', '-0'],
    ['!!binary aGk=', 'hi'],
    ['2001-12-14', '2001-12-14'],
    ['"<<"', '<<'],
  ]
  for (const [key, expected] of cases) t.same(keyOf(key), [expected], key)
  t.equal(goFloat32Text(0), '0')
  t.equal(goFloat32Text(1234567), '1.234567e+06')
  t.equal(goFloat32Text(1e-10), '1e-10')
})

t.test('<< merges as go-yaml merges: in place, earlier list items first', async (t) => {
  const [object] = parseObjects(
    `${named}base: &b {a: 1, b: 1}\nother: &o {b: 2, c: 2}\n` +
      'before: {a: 0, <<: *b}\n' + // a key before the merge is overwritten
      'after: {<<: *b, a: 9}\n' + // a key after it wins
      'list: {<<: [*o, *b]}\n' + // the earlier mapping wins
      'inline: {<<: [{p: 1}, {p: 2, q: 2}]}\n' + // (`y` would be the key true)
      'nested: {<<: {<<: *b, c: 3}}\n' +
      'quoted: {"<<": 1}\n',
    'merge.yaml',
  )
  t.same(object, {
    kind: 'ConfigMap',
    metadata: { name: 'a' },
    base: { a: 1, b: 1 },
    other: { b: 2, c: 2 },
    before: { a: 1, b: 1 },
    after: { a: 9, b: 1 },
    list: { a: 1, b: 2, c: 2 },
    inline: { p: 1, q: 2 },
    nested: { a: 1, b: 1, c: 3 },
    quoted: { '<<': 1 },
  })
  for (const value of ['1', '', '[{a: 1}, 2]', '*l']) {
    t.match(
      failure(`${named}l: &l [{a: 1}]\nm:\n  <<: ${value}\n`),
      /: map merge requires map or sequence of maps as the value at line \d+, column \d+$/,
      value,
    )
  }
})

t.test('a byte order mark starts any document, as in `cat a.yaml b.yaml`', async (t) => {
  const bom = '\uFEFF'
  const text = `${bom}${named}---\n${bom}kind: Secret\nmetadata: {name: b}\n`
  t.same(
    parseObjects(text, 'cat.yaml').map((o) => o.kind),
    ['ConfigMap', 'Secret'],
  )
  // Through `check`, as bytes from a file: both objects are read and checked (check needs the
  // apiVersion the loader alone does not).
  const dir = await tempDir(t)
  const file = join(dir, 'cat.yaml')
  await writeFile(
    file,
    `${bom}apiVersion: v1\n${named}---\n${bom}apiVersion: v1\nkind: Secret\nmetadata: {name: b}\n`,
  )
  const result = await runCli(['check', '-o', 'json', file])
  t.equal(result.code, 0, result.stderr)
  t.same(
    (JSON.parse(result.stdout) as { items: { kind: string }[] }).items.map((o) => o.kind),
    ['ConfigMap', 'Secret'],
  )
})

t.test('kubectl splits documents on --- lines before any YAML is read', async (t) => {
  // A %YAML directive needs the --- line kubectl splits on: kubectl refuses every directive.
  for (const text of [
    `%YAML 1.1\n---\n${named}`,
    `%YAML 1.1\n${named}`,
    `%TAG ! tag:x,1:\n---\n`,
  ]) {
    t.match(failure(text), /^f\.yaml, document 1: a directive \(%(YAML 1\.1|TAG .*)\): kubectl/)
  }
  const dir = await tempDir(t)
  const file = join(dir, 'directive.yaml')
  await writeFile(file, `%YAML 1.1\n---\n${named}`)
  const result = await runCli(['check', file])
  t.equal(result.code, 2)
  t.match(
    result.stderr,
    /^mcp-admission: .*directive\.yaml, document 1: a directive \(%YAML 1\.1\)/,
  )
  t.equal(result.stderr.split('\n').length, 2, 'one line')
  // Only a comment may follow ---; CRLF line ends are LF; a lone CR and NEL are line breaks.
  t.match(
    failure(`${named}--- {a: 1}\n`),
    /document 1: invalid document separator: \{a: 1\} at line 3/,
  )
  t.match(failure(`${named}----\n`), /invalid document separator: -/)
  t.same(
    parseObjects(`--- # one\r\n${named.replaceAll('\n', '\r\n')}---\t\r\n${named}`, 'f.yaml')
      .length,
    2,
  )
  t.match(failure(`${named}data:\n  a: x\ry\n`), /Implicit map keys .* at line 4/)
  t.same(parseDocuments(`${named}data: [a,\u0085  b]\n`, 'f.yaml'), [
    { kind: 'ConfigMap', metadata: { name: 'a' }, data: ['a', 'b'] },
  ])
  // go-yaml reads only the first document of a chunk: after `...`, the rest is not read.
  t.same(parseObjects(`${named}...\nkind: Secret\n`, 'f.yaml').length, 1)
})

t.test('a stream starting with { is read as kubectl reads JSON streams', async (t) => {
  const a = '{"kind":"A","metadata":{"name":"a"}}'
  const kinds = (text: string) =>
    parseDocuments(text, 's.yaml').map((d) => (d as { kind: string }).kind)
  t.same(kinds(`${a}{"kind":"B","metadata":{"name":"b"}}`), ['A', 'B'])
  t.same(kinds(`${a}\n---\nkind: B\nmetadata: {name: b}\n`), ['A', 'B'])
  t.same(kinds(' {kind: A, metadata: {name: a}, on: yes}'), ['A'], 'YAML flow, after JSON fails')
  t.same(parseDocuments('{"kind":"A","metadata":{"name":"a"},"s":"\\ud800"}', 's.json'), [
    { kind: 'A', metadata: { name: 'a' }, s: '\uFFFD' },
  ])
  // After two JSON values the stream is JSON: no YAML after them.
  t.match(failure(`${a}${a}\n---\nkind: C\n`), /document 3: invalid JSON: unexpected "--/)
  // The JSON error is reported when the YAML read after it fails too.
  t.match(
    failure('{"kind": "A",\n  "x": [}\n'),
    /document 1: invalid JSON: unexpected "}\\n" at line 2, column 9$/,
  )
  t.match(failure(`${a}\n}`), /document 2: invalid JSON: unexpected "}"/)
  t.match(failure(`{"kind":"A","n":1e400}`), /the number 1e400 is beyond float64/)
})

t.test('bytes are decoded as kubectl decodes them', async (t) => {
  const encode = (text: string) => new TextEncoder().encode(text)
  const utf16 = (text: string, bigEndian: boolean) => {
    const bytes = [bigEndian ? 0xfe : 0xff, bigEndian ? 0xff : 0xfe]
    for (let i = 0; i < text.length; i++) {
      const unit = text.charCodeAt(i)
      bytes.push(...(bigEndian ? [unit >> 8, unit & 0xff] : [unit & 0xff, unit >> 8]))
    }
    return new Uint8Array(bytes)
  }
  for (const bigEndian of [false, true]) {
    t.same(parseObjects(utf16(`${named}data: {a: é}\n`, bigEndian), 'u.yaml')[0]?.['data'], {
      a: 'é',
    })
  }
  // Invalid UTF-8 becomes U+FFFD; after a UTF-8 byte order mark it is refused.
  const invalid = new Uint8Array([...encode(`${named}data: {a: x`), 0xff, ...encode('}\n')])
  t.same(parseObjects(invalid, 'i.yaml')[0]?.['data'], { a: 'x\uFFFD' })
  t.match(
    failure(new Uint8Array([0xef, 0xbb, 0xbf, ...invalid]), 'i.yaml'),
    /^i\.yaml: invalid UTF-8 at line 3 \(after a UTF-8 byte order mark/,
  )
  t.same(parseObjects(new Uint8Array([0xef, 0xbb, 0xbf, ...encode(named)]), 'b.yaml').length, 1)
})

t.test('what kubectl refuses is refused in one line naming file, document and line', async (t) => {
  const cases: [string, RegExp][] = [
    [`${named}data:\n  ~: v\n`, /a null mapping key: kubectl cannot read it at line 4, column 3$/],
    [`${named}data:\n  : v\n`, /a null mapping key/],
    [
      `${named}data:\n  [a]: v\n`,
      /a mapping or list as a mapping key: kubectl cannot read it at line 4/,
    ],
    [`${named}data:\n  ? {a: 1}\n  : v\n`, /a mapping or list as a mapping key/],
    [`${named}data:\n  18446744073709551615: v\n`, /a mapping key beyond int64/],
    [`${named}data: {a: !!int abc}\n`, /cannot read !!str "abc" as !!int at line 3/],
    [`${named}data: {a: !!float 18446744073709551615}\n`, /cannot read !!int .* as !!float/],
    [
      `${named}data: {a: !!timestamp 2001-13-01}\n`,
      /cannot read !!str "2001-13-01" as !!timestamp/,
    ],
    [`${named}data: {a: !!binary "a GVs"}\n`, /!!binary value contains invalid base64 data/],
    [
      `${named}data: {a: *nowhere}\n`,
      /unknown anchor 'nowhere' referenced|Aliased anchor not found/,
    ],
    [`${named}data: {a: "\\/"}\n`, /kubectl cannot read the escape \\\//],
    [`${named}data: {a: "\\ud83d\\ude00"}\n`, /kubectl cannot read the escape \\ud83d/],
    [`${named}data: [!!str]\n`, /a tag must be followed by a space or a line end/],
    [`${named}data: [?x]\n`, /kubectl reads a \? or a leading : in a flow collection otherwise/],
    [`${named}data: [key:]\n`, /kubectl reads a key: right before , \] or \} as a string/],
    [`${named}data: {a: x\u2028y}\n`, /a line or paragraph separator/],
    [`${named}data: {a: x\u0007y}\n`, /a character YAML does not allow: "\\u0007y}/],
    [`${named}a: 1\n"a": 2\n`, /Map keys must be unique: "a" repeated at line 4, column 1$/],
    [`${named}data: {1: a, "1": b}\n`, /Map keys must be unique: "1" repeated/],
    [`${named}data: {<<: {1: a}, "1": b}\n`, /two keys become "1" in JSON/],
    [`${named}data: {<<: {.nan: a}, .NaN: b}\n`, /two keys become ".nan" in JSON/],
    [`${named}a: &x [*x]\n`, /anchor 'x' value contains itself/],
  ]
  for (const [text, message] of cases) {
    // TAP is line-based: the text as a name is escaped.
    const name = JSON.stringify(text).replace(
      /[^\x20-\x7e]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    )
    const line = failure(text)
    t.match(line, /^f\.yaml, document 1: /, name)
    t.match(line, message, name)
    t.notMatch(line, /\n/, 'one line')
  }
})

t.test('go-yaml aliases: small ones are read, bombs are refused', async (t) => {
  const many = `${named}a: &a {x: 1}\nb: [${Array.from({ length: 150 }, () => '*a').join(', ')}]\n`
  t.equal((parseObjects(many, 'm.yaml')[0]?.['b'] as unknown[]).length, 150)
  const bomb = [`${named}a: &a [x, x, x, x, x, x, x, x, x]`]
  for (const [name, previous] of ['ba', 'cb', 'dc', 'ed', 'fe', 'gf']) {
    bomb.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`)
  }
  t.match(failure(`${bomb.join('\n')}\n`), /document contains excessive aliasing$/)
})

t.test('3,000 levels of block nesting: the nesting error, not a stack overflow', async (t) => {
  const message = `f.yaml, document 1: nested deeper than ${MAX_NESTING} levels`
  const maps = Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i + 1)}a:\n`).join('')
  t.equal(failure(`${named}data:\n${maps}`).replace(/ at line .*/, ''), message)
  t.equal(failure(`${named}data:\n${'- '.repeat(3000)}x\n`).replace(/ at line .*/, ''), message)
  t.equal(failure(`${named}data:\n${'- '.repeat(100_000)}x\n`).replace(/ at line .*/, ''), message)
  // Through aliases too: 150 levels used twice over.
  const half = `${'['.repeat(150)}${']'.repeat(150)}`
  t.equal(
    failure(`${named}a: &d ${half}\nb: ${'[ '.repeat(60)}*d${' ]'.repeat(60)}\n`).replace(
      / at line .*/,
      '',
    ),
    message,
  )
  // Up to the limit is read.
  const deep = Array.from({ length: MAX_NESTING - 1 }, (_, i) => `${' '.repeat(i)}a:\n`).join('')
  t.equal(parseObjects(`${named}${deep}`, 'f.yaml').length, 1)
})

t.test('timestamps are go-yaml timestamps only in their layouts and ranges', async (t) => {
  for (const text of ['2001-12-14', '2000-02-29', '2001-1-2T3:4:5Z', '2001-12-14 21:59:43,5']) {
    t.ok(isGoTimestamp(text), text)
  }
  for (const text of ['2001-02-29', '2001-13-01', '2001-12-14T24:00:00Z', '2001-12-14 ', '2001']) {
    t.notOk(isGoTimestamp(text), text)
  }
  t.notOk(isGoTimestamp('2001-12-14T21:59:43+25:00'))
  t.ok(isGoTimestamp('1900-02-28T00:00:00.123456789123-24:00'))
})

t.test('nothing is printed: the yaml library emits no process warning', async (t) => {
  const warnings: Error[] = []
  const listener = (warning: Error) => warnings.push(warning)
  process.on('warning', listener)
  t.teardown(() => process.off('warning', listener))
  // What the yaml library's own conversion warned about (collection keys), and its warnings
  // about unknown tags and a YAML 1.1 directive.
  for (const text of [
    `${named}data:\n  ? [a]\n  : v\n`,
    `${named}data: {a: !foo x, b: !!int 3}\n`,
    `%YAML 1.1\n---\n${named}`,
    `${named}data: {<<: {a: 1}}\n`,
  ]) {
    try {
      parseObjects(text, 'w.yaml')
    } catch (error) {
      if (!(error instanceof ObjectFileError)) throw error
    }
  }
  await new Promise((resolve) => setImmediate(resolve)) // warnings are emitted on the next tick
  t.same(warnings, [])
})
