import t from 'tap'
import type { Test } from 'tap'
import { parseGoTemplate } from '../../../src/policy/go/template.ts'

// Every expected value below is Go 1.27.4's (ToolHive v0.63.0 requires Go 1.27): text/template's
// `template.New("validation").Funcs(json, quote, fromJson).Parse(text)`, and on success a copy of
// ToolHive v0.63.0's templates.walkNode over tmpl.Templates(), sorted. Go 1.26.8 answers the same
// but for the letter U+1C89, new in Unicode 16 (see the lexing cases).

const TOOLHIVE_FUNCTIONS = ['json', 'quote', 'fromJson']

/** The references Go finds, or the error it returns. */
type Expected = readonly string[] | string

function expectGo(
  t: Test,
  text: string,
  expected: Expected,
  functions: readonly string[] = TOOLHIVE_FUNCTIONS,
  name?: string,
): void {
  const result = parseGoTemplate(text, functions, name)
  const want =
    typeof expected === 'string'
      ? { ok: false, error: expected }
      : { ok: true, references: expected }
  t.strictSame(result, want, JSON.stringify(text))
}

t.test('references: the fields a template names, as ExtractReferences lists them', async (t) => {
  const cases: [string, Expected][] = [
    ['{{.steps.a.output.b}}', ['.steps.a.output.b']],
    ['{{(.steps.a).output.b}}', ['.output.b', '.steps.a']],
    ['{{$x := .steps.a.output.c}}{{$x}}', ['.steps.a.output.c']],
    ['{{index .steps "a"}}', ['.steps']],
    ['{{(index .steps "a").output.b}}', ['.output.b', '.steps']],
    ['{{range .x}}{{.y}}{{end}}', ['.x', '.y']],
    ['{{range $i, $v := .items}}{{$v.name}}{{.z}}{{end}}', ['.items', '.z']],
    ['{{if .a}}A{{else if .b}}B{{else}}{{.c}}{{end}}', ['.a', '.b', '.c']],
    [
      '{{with .a}}{{.b}}{{else with .c}}{{.d}}{{else}}{{.e}}{{end}}',
      ['.a', '.b', '.c', '.d', '.e'],
    ],
    ['{{range .a}}{{else}}{{.b}}{{end}}', ['.a', '.b']],
    ['{{template "t" .steps.a.output.d}}', ['.steps.a.output.d']],
    ['{{define "t"}}{{.x}}{{end}}{{template "t" .y}}', ['.x', '.y']],
    ['{{block "b" .steps.a.output.z}}{{.w}}{{end}}', ['.steps.a.output.z', '.w']],
    ['{{define "a"}}{{template "b" .c}}{{end}}{{define "b"}}{{.d}}{{end}}', ['.c', '.d']],
    ['{{/* {{.hidden}} */}}{{- /* c */ -}}{{.shown}}', ['.shown']],
    ['{{"}}"}}{{`}}`}}{{.a}}', ['.a']],
    ['{{.a | json | quote}}', ['.a']],
    ['{{- .a -}}', ['.a']],
    ['{{.a.b 1 2}}', ['.a.b']],
    ['{{$.steps.a.output.b}}{{$.params.x}}', []],
    ['{{.}}{{nil}}{{true}}{{1}}{{"s"}}', []],
    ['{{.a .b .c}}', ['.a', '.b', '.c']],
    ['{{(.a .b).c}}', ['.a', '.b', '.c']],
    ['{{((.a)).b}}', ['.a', '.b']],
    ['{{(json .a).b}}', ['.a', '.b']],
    ['{{json.a}}', ['.a']],
    ['{{$x := .a}}{{$x.y.z}}{{($x).w}}', ['.a', '.w']],
    ['{{$x := .a}}{{$x = .b}}', ['.a', '.b']],
    ['{{if $x := .a}}{{$x.b}}{{else if $x}}{{.c}}{{end}}', ['.a', '.c']],
    [
      '{{if eq .steps.a.output.status "ok"}}{{.steps.b.output.x}}{{end}}',
      ['.steps.a.output.status', '.steps.b.output.x'],
    ],
    ['{{(fromJson .steps.a.output.raw).field}}', ['.field', '.steps.a.output.raw']],
    ['{{.a.b}}{{.a.b}}{{.a}}', ['.a', '.a.b']],
    ['{{.é.日本}}', ['.é.日本']],
    ['plain text only', []],
    ['', []],
    ['{{.a | printf "%s" | len}}', ['.a']],
    ['{{range $i := 5}}{{$i}}{{end}}{{.after}}', ['.after']],
    ['{{range .a}}{{if .b}}{{break}}{{end}}{{continue}}{{end}}', ['.a', '.b']],
    ['{{define "t"}} {{end}}{{define "t"}}{{.b}}{{end}}', ['.b']],
    ['{{define "t"}}{{.a}}{{end}}{{define "t"}} 　{{end}}', ['.a']],
    ['{{define "validation"}}{{.a}}{{end}}  ', ['.a']],
    [
      '{{and .a .b}}{{or .c 1}}{{not .d}}{{call .f .g}}{{html .h}}{{js .i}}{{len .j}}{{slice .k 1}}{{urlquery .l}}{{print .m}}{{println .n}}{{eq .o 1}}{{ne .p 1}}{{lt .q 1}}{{le .r 1}}{{gt .s 1}}{{ge .t 1}}',
      [
        '.a',
        '.b',
        '.c',
        '.d',
        '.f',
        '.g',
        '.h',
        '.i',
        '.j',
        '.k',
        '.l',
        '.m',
        '.n',
        '.o',
        '.p',
        '.q',
        '.r',
        '.s',
        '.t',
      ],
    ],
  ]
  for (const [text, expected] of cases) expectGo(t, text, expected)
})

t.test('references are sorted in byte order, as Go sorts them', async (t) => {
  const cases: [string, Expected][] = [
    [
      '{{.ｂ}}{{.𝐀}}{{.B}}{{.a}}{{.é}}{{.a.b}}{{.a_}}',
      ['.B', '.a', '.a.b', '.a_', '.é', '.ｂ', '.𝐀'],
    ],
  ]
  for (const [text, expected] of cases) expectGo(t, text, expected)
})

t.test('structure: what the parser rejects, with its error', async (t) => {
  const cases: [string, Expected][] = [
    ['{{', 'template: validation:1: unclosed action'],
    ['{{.a', 'template: validation:1: unclosed action'],
    ['{{.a\n\n', 'template: validation:3: unclosed action started at validation:1'],
    ['{{/* x', 'template: validation:1: unclosed comment'],
    ['{{/* a */ .x}}', 'template: validation:1: comment ends before closing delimiter'],
    ['{{"abc}}', 'template: validation:1: unterminated quoted string'],
    ['{{`abc}}', 'template: validation:1: unterminated raw quoted string'],
    ["{{'a}}", 'template: validation:1: unterminated character constant'],
    ['{{"a\nb"}}', 'template: validation:1: unterminated quoted string'],
    ['{{"\\q"}}', 'template: validation:1: invalid syntax'],
    ['{{"\\x4"}}', 'template: validation:1: invalid syntax'],
    ['{{end}}', 'template: validation:1: unexpected {{end}}'],
    ['{{else}}', 'template: validation:1: unexpected {{else}}'],
    ['{{if .a}}', 'template: validation:1: unexpected EOF'],
    ['{{if .a}}{{else}}{{else}}{{end}}', 'template: validation:1: expected end; found {{else}}'],
    ['{{if .a}}{{end}}{{end}}', 'template: validation:1: unexpected {{end}}'],
    ['{{range .a}}{{else if .b}}{{end}}', 'template: validation:1: unexpected <if> in input'],
    ['{{x}}', 'template: validation:1: function "x" not defined'],
    ['{{.a | foo}}', 'template: validation:1: function "foo" not defined'],
    ['{{$y}}', 'template: validation:1: undefined variable "$y"'],
    ['{{with $x := .a}}{{end}}{{$x}}', 'template: validation:1: undefined variable "$x"'],
    ['{{$x := 1}}{{define "t"}}{{$x}}{{end}}', 'template: validation:1: undefined variable "$x"'],
    ['{{$x := 1}}{{block "b" .}}{{$x}}{{end}}', 'template: validation:1: undefined variable "$x"'],
    ['{{break}}', 'template: validation:1: {{break}} outside {{range}}'],
    ['{{continue}}', 'template: validation:1: {{continue}} outside {{range}}'],
    ['{{range .x}}{{else}}{{break}}{{end}}', 'template: validation:1: {{break}} outside {{range}}'],
    ['{{range .x}}{{break 1}}{{end}}', 'template: validation:1: unexpected "1" in {{break}}'],
    [
      '{{range .x}}{{block "b" .}}{{continue}}{{end}}{{end}}',
      'template: validation:1: {{continue}} outside {{range}}',
    ],
    ['{{}}', 'template: validation:1: missing value for command'],
    ['{{ }}', 'template: validation:1: missing value for command'],
    ['{{()}}', 'template: validation:1: missing value for parenthesized pipeline'],
    ['{{(.a}}', 'template: validation:1: unclosed left paren'],
    ['{{.a)}}', 'template: validation:1: unexpected right paren'],
    ['{{if}}{{end}}', 'template: validation:1: missing value for if'],
    ['{{.a || .b}}', 'template: validation:1: unexpected "|" in command'],
    ['{{.a | 1}}', 'template: validation:1: non executable command in pipeline stage 2'],
    ['{{.a | "s"}}', 'template: validation:1: non executable command in pipeline stage 2'],
    ['{{.a | nil}}', 'template: validation:1: non executable command in pipeline stage 2'],
    ['{{.a | .}}', 'template: validation:1: non executable command in pipeline stage 2'],
    ['{{.a | true}}', 'template: validation:1: non executable command in pipeline stage 2'],
    ['{{define "t"}}', 'template: validation:1: unexpected EOF'],
    ['{{define t}}{{end}}', 'template: validation:1: unexpected "t" in define clause'],
    ['{{define "t" .x}}{{end}}', 'template: validation:1: unexpected ".x" in define clause'],
    [
      '{{define "t"}}{{else}}{{end}}',
      'template: validation:1: unexpected {{else}} in define clause',
    ],
    ['{{define "\\q"}}{{end}}', 'template: validation:1: invalid syntax'],
    [
      '{{if .a}}{{define "t"}}{{end}}{{end}}',
      'template: validation:1: unexpected <define> in command',
    ],
    [
      '{{define "t"}}a{{end}}{{define "t"}}b{{end}}',
      'template: validation:1: template: multiple definition of template "t"',
    ],
    [
      '{{define "t"}}{{.a}}{{end}}{{define "\\x74"}}{{.b}}{{end}}',
      'template: validation:1: template: multiple definition of template "t"',
    ],
    [
      '{{define "validation"}}a{{end}}b',
      'template: validation:1: template: multiple definition of template "validation"',
    ],
    [
      '{{block "b" .}}{{else}}{{end}}',
      'template: validation:1: unexpected {{else}} in block clause',
    ],
    ['{{block .x .}}{{end}}', 'template: validation:1: unexpected ".x" in block clause'],
    ['{{block "b"}}{{end}}', 'template: validation:1: missing value for block clause'],
    ['{{template .x}}', 'template: validation:1: unexpected ".x" in template clause'],
    ['{{template "t" | .x}}', 'template: validation:1: unexpected "|" in template clause'],
    [
      '{{range $i, $v, $w := .items}}{{end}}',
      'template: validation:1: too many declarations in range',
    ],
    ['{{range $i, .x}}{{end}}', 'template: validation:1: range can only initialize variables'],
    ['{{range $i, }}{{end}}', 'template: validation:1: missing value for range'],
    ['{{$x, $y := 1}}', 'template: validation:1: too many declarations in command'],
    ['{{$x := $y := 1}}', 'template: validation:1: undefined variable "$y"'],
    ['{{$x : = .a}}', 'template: validation:1: undefined variable "$x"'],
    ['{{.a := .b}}', 'template: validation:1: unexpected ":=" in operand'],
    ['{{.a.}}', 'template: validation:1: unexpected <.> in operand'],
    ['{{. a}}', 'template: validation:1: function "a" not defined'],
    ['{{..a}}', 'template: validation:1: unexpected . after term "."'],
    ['{{"s".a}}', 'template: validation:1: unexpected . after term "\\"s\\""'],
    ['{{1 .a}}', ['.a']],
    ['{{nil.a}}', 'template: validation:1: unexpected . after term "nil"'],
    ['{{true.a}}', 'template: validation:1: unexpected . after term "true"'],
    ['{{(nil).a}}', ['.a']],
    ['{{.a#}}', "template: validation:1: bad character U+0023 '#'"],
    ['{{#}}', 'template: validation:1: unexpected "#" in command'],
    ['{{.a }}', 'template: validation:1: bad character U+00A0'],
    ['{{\u0000}}', 'template: validation:1: unrecognized character in action: U+0000'],
    ['{{.😀}}', "template: validation:1: bad character U+1F600 '😀'"],
    [
      '{{if .a}}\n{{else}}\n{{else}}\n{{end}}',
      'template: validation:3: expected end; found {{else}}',
    ],
    ['a\n{{.b\n}}', ['.b']],
    ['line1\n{{if .a}}\nx\n', 'template: validation:4: unexpected EOF'],
    [
      '{{(\n.a\n}}',
      'template: validation:3: unclosed left paren in action started at validation:1',
    ],
    ['{{"a\n"}}', 'template: validation:1: unterminated quoted string'],
    ['x\n{{/* x\ny', 'template: validation:2: unclosed comment'],
    ['{{.a\n| foo}}', 'template: validation:2: function "foo" not defined'],
    ['{{end .a}}', 'template: validation:1: unexpected ".a" in end'],
    ['{{else .b}}', 'template: validation:1: unexpected ".b" in else'],
    ['{{if .a}}{{else .b}}{{end}}', 'template: validation:1: unexpected ".b" in else'],
    [
      '{{if .a}}x{{else with .b}}{{end}}{{end}}',
      'template: validation:1: unexpected <with> in input',
    ],
    ['{{.a -}}}}', ['.a']],
    [
      '{{end "a long string, quoted é"}}',
      'template: validation:1: unexpected "\\"a long st"... in end',
    ],
    [
      '{{define "t" `raw\nlong string`}}',
      'template: validation:1: unexpected "`raw\\nlong "... in define clause',
    ],
    ['{{.a ,}}', 'template: validation:1: unexpected "," in operand'],
    ['{{.a-}}', "template: validation:1: bad character U+002D '-'"],
  ]
  for (const [text, expected] of cases) expectGo(t, text, expected)
})

t.test('literals: numbers, characters and strings as strconv reads them', async (t) => {
  const cases: [string, Expected][] = [
    ['{{1}}', []],
    ['{{-1}}', []],
    ['{{+1}}', []],
    ['{{1.5}}', []],
    ['{{1e5}}', []],
    ['{{1E-5}}', []],
    ['{{.5}}', []],
    ['{{5.}}', []],
    ['{{0x1F}}', []],
    ['{{0o17}}', []],
    ['{{017}}', []],
    ['{{0b101}}', []],
    ['{{1_000}}', []],
    ['{{0x_1F}}', []],
    ['{{1_000.5}}', []],
    ['{{0x1p-2}}', []],
    ['{{0x1.8p1}}', []],
    ['{{1i}}', []],
    ['{{0x1p2i}}', []],
    ['{{1+2i}}', []],
    ['{{1.5-2.5i}}', []],
    ['{{0x1p1+0x1p1i}}', []],
    ["{{'a'}}", []],
    ["{{'\\n'}}", []],
    ["{{'\\''}}", []],
    ["{{'\\x41'}}", []],
    ["{{'\\u00e9'}}", []],
    ["{{'\\U0001F600'}}", []],
    ["{{'\\101'}}", []],
    ["{{'é'}}", []],
    ['{{"\\a\\b\\f\\n\\r\\t\\v\\\\\\"\\x41\\u00e9\\U0001F600\\101é"}}', []],
    ['{{`raw\r\n`}}', []],
    ['{{18446744073709551615}}', []],
    ['{{-9223372036854775808}}', []],
    ['{{1.7976931348623157e308}}', []],
    ['{{0x1.fffffffffffff7p1023}}', []],
    ['{{1e-400}}', []],
    ['{{0x1p-1080}}', []],
    ['{{-0}}', []],
    ['{{0x1.fffffffffffff800000000001p1022}}', []],
    ['{{0x0p1}}', []],
    ['{{0x0.0p9999}}', []],
    ['{{0x1p1023}}', []],
    ['{{0x1.8p1023}}', []],
    ['{{089}}', 'template: validation:1: integer overflow: "089"'],
    ['{{08}}', 'template: validation:1: integer overflow: "08"'],
    ['{{0x}}', 'template: validation:1: illegal number syntax: "0x"'],
    ['{{0x1.8}}', 'template: validation:1: illegal number syntax: "0x1.8"'],
    ['{{0x1i}}', 'template: validation:1: illegal number syntax: "0x1i"'],
    ['{{0b1i}}', 'template: validation:1: illegal number syntax: "0b1i"'],
    ['{{1__0}}', 'template: validation:1: illegal number syntax: "1__0"'],
    ['{{1_}}', 'template: validation:1: illegal number syntax: "1_"'],
    ['{{1_.5}}', 'template: validation:1: illegal number syntax: "1_.5"'],
    ['{{0_x1}}', 'template: validation:1: bad number syntax: "0_x"'],
    ['{{1.5e}}', 'template: validation:1: illegal number syntax: "1.5e"'],
    ['{{1.2.3}}', 'template: validation:1: unexpected ".3" in operand'],
    ['{{1a}}', 'template: validation:1: bad number syntax: "1a"'],
    ['{{0b12}}', 'template: validation:1: bad number syntax: "0b12"'],
    ['{{-}}', 'template: validation:1: illegal number syntax: "-"'],
    ['{{+}}', 'template: validation:1: illegal number syntax: "+"'],
    ['{{.}}{{+i}}', 'template: validation:1: illegal number syntax: "+i"'],
    ['{{1e400}}', 'template: validation:1: illegal number syntax: "1e400"'],
    [
      '{{1.7976931348623159e308}}',
      'template: validation:1: illegal number syntax: "1.7976931348623159e308"',
    ],
    ['{{0x1p1024}}', 'template: validation:1: illegal number syntax: "0x1p1024"'],
    [
      '{{0x1.fffffffffffff8p1023}}',
      'template: validation:1: illegal number syntax: "0x1.fffffffffffff8p1023"',
    ],
    ['{{0x1p1_0}}', []],
    ['{{0x1p+}}', 'template: validation:1: illegal number syntax: "0x1p+"'],
    [
      '{{18446744073709551616}}',
      'template: validation:1: integer overflow: "18446744073709551616"',
    ],
    [
      '{{-9223372036854775809}}',
      'template: validation:1: integer overflow: "-9223372036854775809"',
    ],
    [
      '{{99999999999999999999}}',
      'template: validation:1: integer overflow: "99999999999999999999"',
    ],
    [
      '{{0xffffffffffffffffff}}',
      'template: validation:1: illegal number syntax: "0xffffffffffffffffff"',
    ],
    ['{{1+2}}', 'template: validation:1: bad number syntax: "1+2"'],
    ['{{1+2j}}', 'template: validation:1: bad number syntax: "1+2j"'],
    ['{{1+i}}', 'template: validation:1: syntax error scanning complex number'],
    ['{{+i+1i}}', 'template: validation:1: strconv.ParseFloat: parsing "+i": invalid syntax'],
    ['{{0o7+1i}}', 'template: validation:1: syntax error scanning complex number'],
    ['{{1+_2i}}', 'template: validation:1: strconv.ParseFloat: parsing "+_2": invalid syntax'],
    [
      '{{1e400+1i}}',
      'template: validation:1: strconv.ParseFloat: parsing "1e400": value out of range',
    ],
    [
      '{{1+1e400i}}',
      'template: validation:1: strconv.ParseFloat: parsing "+1e400": value out of range',
    ],
    ['{{0x1+1i}}', 'template: validation:1: strconv.ParseFloat: parsing "0x1": invalid syntax'],
    ['{{1+.i}}', 'template: validation:1: strconv.ParseFloat: parsing "+.": invalid syntax'],
    ["{{'ab'}}", "template: validation:1: malformed character constant: 'ab'"],
    ["{{''}}", 'template: validation:1: invalid syntax'],
    ["{{'\\\"'}}", 'template: validation:1: invalid syntax'],
    ["{{'\\q'}}", 'template: validation:1: invalid syntax'],
    ["{{'\\400'}}", 'template: validation:1: invalid syntax'],
    ["{{'\\uD800'}}", 'template: validation:1: invalid syntax'],
    ["{{'\\U00110000'}}", 'template: validation:1: invalid syntax'],
    ["{{'\\x4'}}", 'template: validation:1: invalid syntax'],
    ["{{'\\1'}}", 'template: validation:1: invalid syntax'],
    ['{{"\\\'"}}', 'template: validation:1: invalid syntax'],
    ['{{"\\400"}}', 'template: validation:1: invalid syntax'],
    ['{{"\\uD800"}}', 'template: validation:1: invalid syntax'],
    ['{{"\\u12"}}', 'template: validation:1: invalid syntax'],
  ]
  for (const [text, expected] of cases) expectGo(t, text, expected)
})

t.test('lexing: trim markers, comments, spaces, delimiters', async (t) => {
  const cases: [string, Expected][] = [
    ['x {{- .a -}} y', ['.a']],
    ['x\n  {{- .a -}}\n  y', ['.a']],
    ['a  {{- /* comment */ -}}  b', []],
    ['{{/* comment */ -}} x', []],
    ['{{-3}}', []],
    ['{{print .a -1}}', ['.a']],
    ['{{json#}}', "template: validation:1: bad character U+0023 '#'"],
    ['{{$x#}}', "template: validation:1: bad character U+0023 '#'"],
    ['{{.a  -}}', ['.a']],
    ['{{.a\t\n -}}\n x', ['.a']],
    ['{{- 3}}', []],
    ['{{3 -}}', []],
    ['{{.a}}\r\n{{- \r\n .b}}', ['.a', '.b']],
    ['{{\t.a\t}}{{\n.b\n}}', ['.a', '.b']],
    ['{{$x:=.a}}{{$x}}', ['.a']],
    ['{{.a,.b}}', 'template: validation:1: unexpected "," in operand'],
    ['{{-.a}}', 'template: validation:1: bad number syntax: "-.a"'],
    ['{{/* a */ }}', 'template: validation:1: comment ends before closing delimiter'],
    ['{{ /* a */ }}', 'template: validation:1: unexpected "/" in command'],
    ['{{.a}}}', ['.a']],
    ['{{{.a}}', 'template: validation:1: unexpected "{" in command'],
    ['}}', []],
    ['{{.a٠}}', ['.a٠']],
    // U+1C89, a letter since Unicode 16: Go 1.26 (Unicode 15) says bad character U+1C89.
    ['{{.aᲉ}}', ['.aᲉ']],
  ]
  for (const [text, expected] of cases) expectGo(t, text, expected)
})

t.test('the functions given, besides the builtins', async (t) => {
  const cases: [string, string[], Expected][] = [
    ['{{break}}', ['break'], []],
    ['{{range .a}}{{continue}}{{end}}', ['continue'], ['.a']],
    ['{{continue .a}}', ['continue'], ['.a']],
    ['{{json .a}}', [], 'template: validation:1: function "json" not defined'],
    ['{{index .a 1}}', [], ['.a']],
    ['{{é .a}}', ['é'], ['.a']],
    ['{{(x .a).b}}', ['x'], ['.a', '.b']],
  ]
  for (const [text, functions, expected] of cases) expectGo(t, text, expected, functions)
})

t.test("the template's name, in errors and as a definition", async (t) => {
  const cases: [string, string, Expected][] = [
    ['{{define "validation"}}a{{end}}b', 'extract', []],
    [
      '{{define "extract"}}a{{end}}b',
      'extract',
      'template: extract:1: template: multiple definition of template "extract"',
    ],
    ['{{x}}', 'extract', 'template: extract:1: function "x" not defined'],
  ]
  for (const [text, name, expected] of cases) expectGo(t, text, expected, TOOLHIVE_FUNCTIONS, name)
})

t.test('the defaults: the name "validation" of ValidateTemplate', async (t) => {
  t.strictSame(parseGoTemplate('{{x}}', TOOLHIVE_FUNCTIONS), {
    ok: false,
    error: 'template: validation:1: function "x" not defined',
  })
  t.strictSame(parseGoTemplate('{{.a}}', []), { ok: true, references: ['.a'] })
})

t.test(
  '{{template "name"}} without a pipeline: Parse accepts, ExtractReferences panics',
  async (t) => {
    // Go's walk reads the absent pipeline's commands (a nil-pointer dereference); the references
    // are those of the rest of the templates.
    t.strictSame(parseGoTemplate('{{template "t"}}', TOOLHIVE_FUNCTIONS), {
      ok: true,
      references: [],
      extractPanics: true,
    })
    t.strictSame(
      parseGoTemplate('{{define "t"}}{{.a}}{{end}}{{if .b}}{{template "t"}}{{end}}', []),
      { ok: true, references: ['.a', '.b'], extractPanics: true },
    )
    t.strictSame(parseGoTemplate('{{template "t" .c}}', []), { ok: true, references: ['.c'] })
  },
)

t.test('nesting as deep as Go allows, without exhausting the call stack', async (t) => {
  // Go limits parentheses to 10000 levels and nothing else.
  const parens = (n: number) => `{{${'('.repeat(n)}.a${')'.repeat(n)}}}`
  expectGo(t, parens(10000), ['.a'])
  expectGo(t, parens(10001), 'template: validation:1: max expression depth exceeded')
  const ifs = (n: number) => `${'{{if .a}}'.repeat(n)}{{.b}}${'{{end}}'.repeat(n)}`
  expectGo(t, ifs(10000), ['.a', '.b'])
  expectGo(t, ifs(10000).slice(0, -'{{end}}'.length), 'template: validation:1: unexpected EOF')
  expectGo(t, `{{if .a}}${'{{else if .b}}'.repeat(10000)}{{end}}`, ['.a', '.b'])
  const blocks = `${'{{block "x" .}}'.repeat(1000)}{{.c}}${'{{end}}'.repeat(1000)}`
  expectGo(t, blocks, 'template: validation:1: template: multiple definition of template "x"')
})

t.test('a failure that is not a template error is not turned into one', async (t) => {
  const notAString = Symbol('name') as unknown as string
  t.throws(() => parseGoTemplate('{{.a}}', [], notAString), TypeError)
})
