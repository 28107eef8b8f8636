/**
 * The corpus of the YAML differential test: object files as bytes, each read by kubectl's reader
 * (main.go) and by the loader. Scalars are each written into a ConfigMap, as a value and (some)
 * as a key; whole documents exercise the split, merges, aliases, byte order marks, directives,
 * encodings, JSON streams and what kubectl refuses. `stricter` marks the files kubectl reads and
 * the loader refuses on purpose (a repeated key, nesting past 200 levels, an int64 a JavaScript
 * number cannot hold), with the refusal expected.
 */

export interface CorpusFile {
  readonly name: string
  readonly content: Uint8Array
  /** The loader refuses what kubectl reads: the message it must refuse with. */
  readonly stricter?: RegExp
}

const REPEATED = /Map keys must be unique|two keys become/
const DEEP = /nested deeper than 200 levels/
const INEXACT = /beyond 2\^53/

/** Scalars as written in a YAML value position (plain unless quoted or tagged). */
export const SCALARS: readonly string[] = [
  // YAML 1.1 booleans, their case variants and near misses.
  ...['y', 'Y', 'yes', 'Yes', 'YES', 'yEs', 'yeS', 'n', 'N', 'no', 'No', 'NO', 'nO'],
  ...['true', 'True', 'TRUE', 'tRUE', 'false', 'False', 'FALSE', 'fALSE', 'on', 'On', 'ON'],
  ...['oN', 'off', 'Off', 'OFF', 'oFF', 'yes.', 'yess', 'y.', 't', 'f', 'T', 'F', 'o', 'O'],
  // Nulls.
  ...['~', 'null', 'Null', 'NULL', 'nULL', 'nul', '~~', '', '"~"', "'null'"],
  // Integers: Go's prefixes, signs, underscores, ranges.
  ...['0', '00', '000', '-0', '+0', '1', '+1', '-1', '017', '0017', '018', '08', '09', '0777'],
  ...['0o17', '0O17', '0o18', '0o', '0x1F', '0X1f', '0x1g', '0x', '0xffffffff', '0b101'],
  ...['0B101', '0b102', '0b', '-0b101', '+0b101', '0b-101', '0b+101', '-0b-1', '-0x10'],
  ...['+0x10', '-017', '1_000', '1__000', '1000_', '_1000', '0_17', '0x_1F', '0o_17', '0b_1'],
  ...['1_0_0', '-1_000', '+1_000', '9223372036854775807', '9223372036854775808'],
  ...['-9223372036854775808', '-9223372036854775809', '18446744073709551615'],
  ...['18446744073709551616', '9007199254740992', '-9007199254740992', '1000000000000000000'],
  ...['99999999999999999999', '0x7FFFFFFFFFFFFFFF', '0xFFFFFFFFFFFFFFFF', '0x1FFFFFFFFFFFFFFFF'],
  ...[`0b${'1'.repeat(63)}`, `0b${'1'.repeat(64)}`, `-0b${'1'.repeat(63)}`, '1:20', '190:20:30'],
  ...['1,000', '1.0.0', '1 000', '12e', '1e', '1e+', '0x1p3', '++1', '--1', '+-1', '+', '-'],
  // Floats.
  ...['1e3', '1E3', '1e+3', '1e-3', '1.5e3', '1.5E-3', '.5', '.5e3', '.5E+3', '.5_5', '._5'],
  ...['.5__5', '.5_', '.5e_3', '.5e3_0', '.5_e3', '1.', '-1.', '+.5', '-.5', '.e3', '.', '..'],
  ...['1.5', '1.50', '-1.5', '+1.5', '0.1', '00.5', '01.5', '3.14159265358979323846264338'],
  ...['2.5e-5', '1e400', '-1e400', '1e-400', '1_000.5', '1_0e1_0', '1.5_5', '1e308', '1.8e308'],
  ...['123456789012345678901234567890', '0.000001', '1e21', '1e20', '123e-20', '-0.0', '0.0'],
  ...['.inf', '.Inf', '.INF', '.iNF', '+.inf', '+.Inf', '-.inf', '-.Inf', '-.INF', '.nan'],
  ...['.NaN', '.NAN', '.Nan', '-.nan', 'inf', 'Inf', 'Infinity', '-Infinity', 'NaN', 'nan'],
  // Timestamps: strings to kubectl, as written.
  ...['2001-12-14', '2001-12-14t21:59:43.10-05:00', '2001-12-14T21:59:43.10Z', '2001-1-2'],
  ...['2001-12-14 21:59:43.10', '2001-12-14 21:59:43.10 -5', '2001-13-01', '2001-02-29'],
  ...['2000-02-29', '2001-12-14T25:00:00Z', '20011-01-01', '2001-12-14T21:59:43+24:00'],
  // Plain strings.
  ...['hello', 'hello world', 'a:b', 'http://example.com/x', '-a', 'a -b', 'a #b', 'a#b'],
  ...['café', 'ÿes', '€100', '日本', '😀', 'a\tb', 'x: y', 'key:', '?x', '!', '|x'],
  // Quoted: always strings.
  ...['"yes"', "'no'", '"017"', '"1e3"', '"~"', "''", '""', '".inf"', '"1_000"', '"0x1F"'],
  ...["'it''s'", '"\\x41"', '"\\u00e9"', '"\\N"', '"\\_"', '"\\L"', '"\\P"', '"\\/"', '"\\e"'],
  ...['"\\a"', '"\\0"', '"\\U0001F600"', '"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"', '"\\t"'],
  ...['"a\\\n  b"', '"a\n  b"', "'a\n  b'", '"\\q"', '"\\x4"'],
  // Tags.
  ...['!!str 1', '!!str yes', '!!str', '!!int "3"', '!!int 3.5', '!!int abc', '!!int 0x10'],
  ...['!!int 017', '!!int 1_000', '!!float 3', '!!float "1e3"', '!!float abc', '!!float .inf'],
  ...['!!float 18446744073709551615', '!!float 0b11', '!!bool yes', '!!bool "true"', '!!bool 1'],
  ...['!!bool n', '!!null ~', '!!null ""', '!!null x', '!!null', '!!timestamp 2001-12-14'],
  ...['!!timestamp 2001-13-01', '!!timestamp abc', '!!timestamp "2001-12-14 21:59:43.10"'],
  ...['!!timestamp 2001-12-14t21:59:43.10-05:00', '!!timestamp 2001-12-14t21:59:43-05'],
  ...['!!timestamp 2001-12-14T21:59:43,5Z', '!!timestamp 2001-12-14  21:59:43', '!!binary aGk='],
  ...['!!binary aGVsbG8=', '!!binary /w==', '!!binary 4oI=', '!!binary 4oIA', '!!binary "aGk"'],
  ...['!!binary "a GVs"', '!!binary ""', '!foo bar', '!foo 3', '!foo yes', '! 3', '! yes'],
  ...['!<tag:yaml.org,2002:int> 5', '!<tag:yaml.org,2002:str> 5', '!!set x', '!!merge x'],
  ...['!!map x', '!!seq x', '!!merge <<', '<<', '!!omap x'],
  // Block scalars.
  ...[
    '|\n  a\n  b\n',
    '>\n  a\n  b\n',
    '|-\n  yes\n',
    '>+\n  1\n\n',
    '|2\n   x\n',
    '!!int |\n  3\n',
  ],
  // Unicode line breaks inside plain scalars (YAML 1.1 breaks, 1.2 content).
  ...['a\u2028b', 'a\u2029b', 'a\u0085b', 'a\u00a0b'],
]

/** Scalars the loader refuses on purpose wherever they are. */
const STRICTER: ReadonlyMap<string, RegExp> = new Map([
  ['9223372036854775807', INEXACT],
  ['0x7FFFFFFFFFFFFFFF', INEXACT],
  [`0b${'1'.repeat(63)}`, INEXACT],
  [`-0b${'1'.repeat(63)}`, INEXACT],
])

/**
 * Scalars the loader refuses in a flow list, where kubectl reads them: the yaml library reads
 * `[-]` as a block list, `[key:]` as a mapping and `[?x]` as a string, LS and PS as text; go-yaml
 * reads `[a<NEL>b]`, a line break at column 0, without checking its indentation.
 */
const STRICTER_IN_FLOW: ReadonlyMap<string, RegExp> = new Map([
  ['-', /Block collections are not allowed/],
  ['key:', /kubectl reads a key: right before/],
  ['?x', /kubectl reads a \? or a leading :/],
  ['a\u2028b', /line or paragraph separator/],
  ['a\u2029b', /line or paragraph separator/],
  ['a\u0085b', /sufficiently indented/],
])

/** Scalars also written as keys. */
const KEYS: readonly string[] = [
  ...['yes', 'y', 'Y', 'no', 'on', 'off', 'true', 'TRUE', '1', '0x1F', '017', '1_000', '-1'],
  ...['1.5', '1.0', '1e6', '123456.0', '1234567.0', '0.1234567891', '1e-5', '0.0001', '1e39'],
  ...['-0.0', '.inf', '-.inf', '.nan', '~', 'null', '""', "''", '"yes"', '2001-12-14'],
  ...['9223372036854775807', '9223372036854775808', '18446744073709551615'],
  ...['99999999999999999999', '!!binary aGk=', '!!str 1', '!!int "7"', '!foo x', 'a b'],
  ...['<<', '"<<"', '!!merge <<', '1e400', 'café', '0.1', '3.4028235e38', '16777217'],
]

const encoder = new TextEncoder()

/** A scalar as a test name: quoted, anything but printable ASCII escaped (TAP is line-based). */
function quoted(scalar: string): string {
  return JSON.stringify(scalar).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

function text(name: string, body: string, stricter?: RegExp): CorpusFile {
  return { name, content: encoder.encode(body), ...(stricter ? { stricter } : {}) }
}

const cm = (name: string, rest = ''): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${rest}`

/** Every scalar as a value, in block and flow position; some as keys. */
export function scalarFiles(): CorpusFile[] {
  const files: CorpusFile[] = []
  SCALARS.forEach((scalar, i) => {
    // Continuation lines indented past the key: see the documents for less indented ones.
    const value = scalar.replace(/\n(?=.)/g, '\n    ')
    const block = scalar.startsWith('|') || scalar.startsWith('>') || scalar.includes('|\n')
    const name = quoted(scalar)
    const stricter = STRICTER.get(scalar)
    files.push(text(`value-${i}: ${name}`, cm(`v${i}`, `data:\n  v: ${value}\n`), stricter))
    if (!block && !scalar.includes('\n')) {
      const inFlow = stricter ?? STRICTER_IN_FLOW.get(scalar)
      files.push(text(`flow-${i}: ${name}`, cm(`f${i}`, `list: [${scalar}]\n`), inFlow))
    }
  })
  KEYS.forEach((key, i) => {
    files.push(text(`key-${i}: ${quoted(key)}`, cm(`k${i}`, `data:\n  ${key}: v\n`)))
  })
  return files
}

/** Whole documents. */
export function documentFiles(): CorpusFile[] {
  const deep = (levels: number): string =>
    Array.from({ length: levels }, (_, i) => `${'  '.repeat(i + 1)}a:\n`).join('')
  const utf16 = (body: string, bigEndian: boolean): Uint8Array => {
    const bytes = [bigEndian ? 0xfe : 0xff, bigEndian ? 0xff : 0xfe]
    for (const unit of body.split('').map((c) => c.charCodeAt(0))) {
      bytes.push(...(bigEndian ? [unit >> 8, unit & 0xff] : [unit & 0xff, unit >> 8]))
    }
    return new Uint8Array(bytes)
  }
  const bytes = (name: string, ...parts: (string | number[])[]): CorpusFile => ({
    name,
    content: new Uint8Array(
      parts.flatMap((part) => (typeof part === 'string' ? [...encoder.encode(part)] : part)),
    ),
  })
  const base = cm('base')
  return [
    // Merge keys.
    text('merge: a mapping', `${base}x: &b {a: 1, b: 2}\ny:\n  <<: *b\n  c: 3\n`),
    text('merge: a key before it is overwritten', `${base}x: &b {a: 1}\ny:\n  a: 0\n  <<: *b\n`),
    text('merge: a key after it wins', `${base}x: &b {a: 1, b: 2}\ny:\n  <<: *b\n  a: 9\n`),
    text(
      'merge: a list, the earlier mapping wins',
      `${base}p: &p {a: 1}\nq: &q {a: 2, b: 2}\ny:\n  <<: [*p, *q]\n  c: 3\n`,
    ),
    text('merge: an inline mapping', `${base}y:\n  <<: {a: 1}\n  b: 2\n`),
    text('merge: an inline list of mappings', `${base}y:\n  <<: [{a: 1}, {a: 2, b: 3}]\n`),
    text('merge: nested merges', `${base}p: &p {a: 1}\nq: &q {<<: *p, b: 2}\ny: {<<: *q, c: 3}\n`),
    text('merge: twice in one mapping', `${base}p: &p {a: 1}\nq: &q {a: 2}\ny: {<<: *p, <<: *q}\n`),
    text('merge: a scalar is refused', `${base}y:\n  <<: 1\n`),
    text('merge: an empty value is refused', `${base}y:\n  <<:\n  a: 1\n`),
    text('merge: an alias of a list is refused', `${base}l: &l [{a: 1}]\ny:\n  <<: *l\n`),
    text('merge: a list with a scalar is refused', `${base}y:\n  <<: [{a: 1}, 2]\n`),
    text('merge: a quoted key is a key', `${base}y:\n  "<<": {a: 1}\n`),
    text('merge: !!merge tag', `${base}y:\n  !!merge <<: {a: 1}\n`),
    text('merge: hides a key that is then repeated', `${base}y:\n  <<: {a: 1}\n  a: 2\n  b: 3\n`),
    text(
      'merge: a merged int key and a string key',
      `${base}y:\n  <<: {1: a}\n  "1": b\n`,
      REPEATED,
    ),
    // Byte order marks.
    text('bom: the file', `\uFEFF${base}`),
    text('bom: before the second document', `${base}---\n\uFEFF${cm('second')}`),
    text('bom: before a separator', `${base}\uFEFF---\n${cm('second')}`),
    text('bom: mid-line', `${base}data:\n  a: x\uFEFFy\n`),
    text('bom: the file and the second document', `\uFEFF${base}---\n\uFEFF${cm('second')}`),
    text(
      'bom: json then a second file',
      `\uFEFF{"kind":"A","metadata":{"name":"a"}}\n---\n\uFEFF${cm('b')}`,
    ),
    // Encodings.
    bytes('invalid UTF-8 in a value', base, 'data:\n  a: "x', [0xff, 0xe2, 0x82], '"\n'),
    bytes('invalid UTF-8 in a key', base, 'data:\n  ', [0xc0, 0xaf], ': v\n'),
    bytes('invalid UTF-8 after a BOM', [0xef, 0xbb, 0xbf], base, 'data:\n  a: ', [0xff], '\n'),
    bytes('a surrogate encoded in UTF-8', base, 'data:\n  a: ', [0xed, 0xa0, 0x80], '\n'),
    { name: 'UTF-16LE with a BOM', content: utf16(`${base}data:\n  a: é\n`, false) },
    { name: 'UTF-16BE with a BOM', content: utf16(`${base}data:\n  a: é\n`, true) },
    // Directives and markers.
    text('directive: %YAML 1.1', `%YAML 1.1\n---\n${base}`),
    text('directive: %YAML 1.1 without ---', `%YAML 1.1\n${base}`),
    text('directive: %YAML 1.2', `%YAML 1.2\n---\n${base}`),
    text('directive: %TAG', `%TAG !e! tag:example.com,2000:\n---\n${base}`),
    text('directive: in a second document', `${base}---\n%YAML 1.1\n---\n${cm('b')}`),
    text('marker: ... ends the document', `${base}...\n`),
    text('marker: ... then more', `${base}...\n${cm('b')}`),
    text('marker: ... then junk', `${base}...\n[unclosed\n`),
    text('separator: --- # comment', `---  # first\n${base}--- # second\n${cm('b')}`),
    text('separator: ---\\t', `${base}---\t\n${cm('b')}`),
    text('separator: --- x', `${base}--- x\n${cm('b')}`),
    text('separator: ----', `${base}----\n${cm('b')}`),
    text('separator: --- |', `--- |\n  text\n`),
    text('separator: indented', `${base}data:\n  a: |\n    ---\n    x\n`),
    text(
      'separator: CRLF',
      `${base.replaceAll('\n', '\r\n')}---\r\n${cm('b').replaceAll('\n', '\r\n')}`,
    ),
    text('separator: only separators', `---\n---\n${base}---\n---\n`),
    text('line ends: a lone CR', `${base}data:\n  a: x\ry\n`),
    text('line ends: CR at the end', `${base}data:\n  a: x\r`),
    // Empty and non-object documents.
    text('empty documents and comments', `# c\n---\n\n---\n${base}---\n# only\n---\nnull\n`),
    text('a scalar document', `${base}---\nhello\n`),
    text('a list document', `${base}---\n- a\n`),
    text('an empty string document', `${base}---\n""\n`),
    // Keys kubectl cannot read.
    text('key: null', `${base}data:\n  ~: v\n`),
    text('key: empty', `${base}data:\n  : v\n`),
    text('key: a flow mapping', `${base}data:\n  {a: 1}: v\n`),
    text('key: a flow list', `${base}data:\n  [a]: v\n`),
    text('key: a block mapping', `${base}data:\n  ? a: 1\n  : v\n`),
    text('key: an alias of a list', `${base}l: &l [a]\ndata:\n  *l : v\n`),
    text('key: an alias of a scalar', `${base}l: &l k\ndata:\n  *l : v\n`),
    text('key: longer than 1024', `${base}data:\n  ${'k'.repeat(1100)}: v\n`),
    text('key: repeated', `${base}data:\n  a: 1\n  a: 2\n`, REPEATED),
    text('key: yes and true', `${base}data:\n  yes: 1\n  true: 2\n`, REPEATED),
    text('key: 1 and "1"', `${base}data:\n  1: a\n  "1": b\n`, REPEATED),
    text('key: 1.0 and 1', `${base}data:\n  1.0: a\n  1: b\n`, REPEATED),
    // Aliases.
    text('alias: redefined anchor', `${base}a: &x 1\nb: *x\nc: &x 2\nd: *x\n`),
    text('alias: before its anchor', `${base}a: *x\nb: &x 1\n`),
    text('alias: inside itself', `${base}a: &x [*x]\n`),
    text(
      'alias: 150 small ones',
      `${base}a: &a {x: 1}\nb: [${Array.from({ length: 150 }, () => '*a').join(', ')}]\n`,
    ),
    text(
      'alias: a bomb',
      `${base}a: &a [x, x, x, x, x, x, x, x, x]\n${['b', 'c', 'd', 'e', 'f', 'g']
        .map(
          (name, i) =>
            `${name}: &${name} [${Array(9)
              .fill(`*${'abcdef'[i] ?? ''}`)
              .join(', ')}]`,
        )
        .join('\n')}\n`,
    ),
    // Nesting.
    text('nesting: 150 block levels', `${base}data:\n${deep(150)}`),
    text('nesting: 250 block levels', `${base}data:\n${deep(250)}`, DEEP),
    text('nesting: 3,000 block levels', `${base}data:\n${deep(3000)}`, DEEP),
    text('nesting: 3,000 compact sequences', `${base}data:\n${'- '.repeat(3000)}x\n`, DEEP),
    // JSON streams.
    text('json: one object', '{"kind":"A","metadata":{"name":"a"},"n":[1,2.5,-0,1e3,true,null]}'),
    text(
      'json: two objects',
      '{"kind":"A","metadata":{"name":"a"}}{"kind":"B","metadata":{"name":"b"}}',
    ),
    text(
      'json: three, one per line',
      '{"kind":"A","metadata":{"name":"a"}}\n{"kind":"B","metadata":{"name":"b"}}\n{"kind":"C","metadata":{"name":"c"}}\n',
    ),
    text('json: then yaml', `{"kind":"A","metadata":{"name":"a"}}\n---\n${cm('b')}`),
    text(
      'json: two then yaml',
      `{"kind":"A","metadata":{"name":"a"}}\n{"kind":"B","metadata":{"name":"b"}}\n---\n${cm('c')}`,
    ),
    text('json: a trailing comma reads as YAML', '{"kind":"A","metadata":{"name":"a"},}'),
    text('json: flow YAML', '{kind: A, metadata: {name: a}, x: yes}'),
    text('json: invalid both ways', '{"kind":"A","metadata":{"name":"a"}'),
    text('json: a repeated key', '{"kind":"A","metadata":{"name":"a","name":"b"}}', REPEATED),
    text(
      'json: an int64 past 2^53',
      '{"kind":"A","metadata":{"name":"a"},"n":9007199254740993}',
      INEXACT,
    ),
    text(
      'json: a big float',
      '{"kind":"A","metadata":{"name":"a"},"n":[9007199254740993.0,1e20,100000000000000000000]}',
    ),
    text('json: 1e400', '{"kind":"A","metadata":{"name":"a"},"n":1e400}'),
    text('json: a lone surrogate', '{"kind":"A","metadata":{"name":"a"},"s":"\\ud800x"}'),
    text('json: a NBSP before it', '\u00a0{"kind":"A","metadata":{"name":"a"}}'),
    text('json: spaces before it', ' \n\t{"kind":"A","metadata":{"name":"a"}}'),
    text('json: a JSON array', '[{"kind":"A","metadata":{"name":"a"}}]'),
    text('json: a number after it', '{"kind":"A","metadata":{"name":"a"}} 5'),
    text(
      'json: yaml on its line',
      '{"kind":"A","metadata":{"name":"a"}} kind: B\nmetadata: {name: b}\n',
    ),
    text('json: garbage after it', '{"kind":"A","metadata":{"name":"a"}}\n}'),
    // Syntax both readers judge.
    text('syntax: a tab indent', `${base}data:\n\ta: 1\n`),
    text('syntax: a control character', `${base}data:\n  a: x\u0007y\n`),
    text('syntax: DEL', `${base}data:\n  a: x\u007fy\n`),
    text('syntax: a C1 control', `${base}data:\n  a: x\u0080y\n`),
    text('syntax: U+FFFE', `${base}data:\n  a: x\uFFFEy\n`),
    text('syntax: colon in a flow scalar', `${base}data: {a: [b:c, d]}\n`),
    text('syntax: a flow trailing comma', `${base}data: [a, b, ]\n`),
    text('syntax: a flow mapping of keys', `${base}data: {a, b: , c}\n`),
    text('syntax: multi-line plain', `${base}data:\n  a: one\n    two\n\n    three\n`),
    text('syntax: @ starts nothing', `${base}data:\n  a: @x\n`),
    text('syntax: a complex scalar key', `${base}data:\n  ? a\n  : b\n`),
    text('syntax: a comment without a space', `${base}data:\n  a: b#c\n  d: e # f\n`),
    text('syntax: an unknown tag handle', `${base}data:\n  a: !e!x y\n`),
    text(
      'syntax: a flow list continued at column 0',
      `${base}data: [a,\nb]\n`,
      /sufficiently indented/,
    ),
    text(
      'syntax: a quoted string continued at column 0',
      `${base}data: "a\nb"\n`,
      /Missing closing/,
    ),
    text(
      'syntax: a quoted string continued at its key',
      `${base}data:\n  a: 'x\n  y'\n`,
      /Missing closing/,
    ),
    text('syntax: flow forms go-yaml refuses', `${base}data: [a?b]\n`),
    text('syntax: a flow mapping with a ?', `${base}data: {a: b?}\n`),
    text('syntax: a flow key starting with :', `${base}data: [:x]\n`),
    text('syntax: a flow value after :', `${base}data: {"a":1, "b":[x]}\n`),
    // go-yaml reads `[!!str, a]` as ["a"] (the tagged empty item dropped): refused here.
    text('syntax: a tag before a comma', `${base}data: [!!str, a]\n`, /a tag must be followed/),
    text('syntax: an escaped single quote', `${base}data: "it\\'s"\n`),
    text('syntax: a NEL line break', `${base}data:\n  a: x\n\u0085  b: y\n`),
    text('syntax: quoted with line breaks', `${base}data:\n  a: "one\n\n    two\\\n    three"\n`),
    text('syntax: single-quoted lines', `${base}data:\n  a: 'one\n    two'\n`),
    text(
      'syntax: a folded block',
      `${base}data:\n  a: >\n    one\n    two\n\n    three\n     indented\n`,
    ),
    text('syntax: keep and strip', `${base}data:\n  a: |+\n    x\n\n  b: |-\n    y\n`),
    text('syntax: indentation indicator', `${base}data:\n  a: |1\n    x\n`),
    text('syntax: sequences in a mapping', `${base}data:\n- a\n- b\n`),
    text('syntax: a set', `${base}data: !!set {a, b}\n`),
    text('syntax: an omap', `${base}data: !!omap [a: 1, b: 2]\n`),
    text('syntax: a tagged mapping', `${base}data: !foo {a: 1}\n`),
    text(
      'syntax: a document of a List',
      `apiVersion: v1\nkind: List\nitems:\n- ${cm('i').replaceAll('\n', '\n  ').trimEnd()}\n`,
    ),
    text('syntax: an anchor on a key', `${base}data:\n  &k a: 1\n  b: *k\n`),
  ]
}
