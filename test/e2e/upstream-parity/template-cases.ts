/**
 * Go templates for the differential test of the text/template parser port with ToolHive's
 * functions (json, quote, fromJson) and of templates.ExtractReferences: hand-written valid and
 * invalid texts (fields, chains, variables, pipelines, if/range/with/else, define/template/block,
 * comments and trim markers, strings holding `}}`, undefined functions, unclosed actions), random
 * concatenations of the valid ones, and random truncations of them (mostly invalid).
 */

import { seeded } from './random.ts'

/** The functions ToolHive registers (pkg/templates FuncMap). */
export const TOOLHIVE_FUNCTIONS: readonly string[] = ['json', 'quote', 'fromJson']

const VALID = [
  ...['', 'plain text', '}}', 'a }} b', '{{ .a }}', '{{.a.b.c}}', '{{ . }}', '{{ $ }}'],
  ...['{{ .steps.fetch.output.result }}', '{{ .params.q | json }}', '{{ quote .a }}'],
  ...['{{ fromJson .a }}', '{{ (fromJson .a).b.c }}', '{{ (.a).b }}', '{{ (.a.b).c.d }}'],
  ...[
    '{{ (index .a 0).b }}',
    '{{ $.a.b }}',
    '{{ $x := .a }}{{ $x.b.c }}',
    '{{ $x := 1 }}{{ $x = 2 }}',
  ],
  ...[
    '{{ .a | printf "%v" }}',
    '{{ "abc" | len }}',
    '{{ .a | quote | json }}',
    '{{ printf "%s" .a | quote }}',
  ],
  ...[
    '{{ if .a }}x{{ end }}',
    '{{ if .a }}x{{ else }}y{{ end }}',
    '{{ if .a }}x{{ else if .b }}y{{ else }}z{{ end }}',
  ],
  ...['{{ range .a }}{{ . }}{{ end }}', '{{ range $i, $e := .a }}{{ $i }}{{ $e.f }}{{ end }}'],
  ...[
    '{{ range .a }}{{ else }}none{{ end }}',
    '{{ range .a }}{{ if .b }}{{ break }}{{ end }}{{ continue }}{{ end }}',
  ],
  ...['{{ with .a }}{{ .b }}{{ end }}', '{{ with .a }}{{ .b }}{{ else }}{{ .c }}{{ end }}'],
  ...['{{ with .a }}x{{ else with .b }}{{ .c }}{{ end }}', '{{ range $e := .a }}{{ $e }}{{ end }}'],
  ...[
    '{{ define "t" }}{{ .x }}{{ end }}',
    '{{ define "t" }}{{ .x }}{{ end }}{{ template "t" .y }}',
  ],
  ...['{{ template "missing" }}', '{{ template "t" .a.b }}', '{{ block "b" .c }}{{ .d }}{{ end }}'],
  ...['{{ define "a" }}{{ end }}{{ define "a" }}{{ end }}'],
  ...['{{/* comment */}}', '{{- /* comment */ -}}', '{{- .a -}}', 'x {{- .a }} y', '{{ .a -}} y'],
  ...['{{-3}}', '{{ -3 }}', '{{ 1.5e3 }}', '{{ 0x1F }}', "{{ 'a' }}", "{{ '\\n' }}", '{{ 1i }}'],
  ...['{{ "}}" }}', '{{ `}}` }}', '{{ "a\\"b" }}', '{{ `raw\nline` }}', '{{ true }}{{ false }}'],
  ...[
    '{{ and .a .b }}',
    '{{ or .a (not .b) }}',
    '{{ eq .a "x" 1 }}',
    '{{ len .a }}',
    '{{ index .a 1 2 }}',
  ],
  ...[
    '{{ slice .a 1 2 }}',
    '{{ print .a }}{{ println }}',
    '{{ html .a }}{{ js .b }}{{ urlquery .c }}',
  ],
  ...[
    '{{ call .f 1 }}',
    '{{ lt 1 2 }}{{ le 1 2 }}{{ gt 1 2 }}{{ ge 1 2 }}{{ ne 1 2 }}',
    '{{ nil | print }}',
  ],
  ...[
    '{{ .Ünïcode.ß }}',
    '{{ ._x._y }}',
    '{{ .a1.B2 }}',
    '{{ .a.b.c.d.e.f.g }}',
    '{{ .a }}{{ .a }}',
  ],
  ...['{{ if .a }}{{ range .b }}{{ with .c }}{{ .d }}{{ end }}{{ end }}{{ end }}', '{{ (.a) }}'],
  ...['{{ ($x := .a) }}', '{{ if $x := .a }}{{ $x.b }}{{ end }}', '{{ .a.b | index .c }}'],
  ...[
    '{{ ((.a).b).c }}',
    '{{ .steps.s1.output }}',
    '{{ template "t" (fromJson .a).b }}',
    '{{ .a  }}',
  ],
  ...['{{\t.a\n}}', '{{ .a\n| json }}', '{{ range .a }}{{ $.b }}{{ end }}', '{{ $.a.b.c }}'],
]

const INVALID = [
  ...['{{ foo }}', '{{ .a | foo }}', '{{ fromjson . }}', '{{ JSON . }}', '{{ Quote .a }}'],
  ...['{{ .a', '{{ .a }', '{{', 'x {{', '{{ if .a }}', '{{ end }}', '{{ else }}', '{{ range }}'],
  ...['{{ define "a" }}{{ define "b" }}{{ end }}{{ end }}'],
  ...['{{ break }}', '{{ continue }}', '{{ define }}', '{{ define "a" }}', '{{ template }}'],
  ...['{{ template .a }}', '{{ $x }}', '{{ $x := }}', '{{ .a.b. }}', '{{ "unterminated }}'],
  ...["{{ 'ab' }}", '{{ 1.2.3 }}', '{{ 0x }}', '{{ /* unterminated }}', '{{/* a */ .b }}'],
  ...['{{ ( .a }}', '{{ .a ) }}', '{{ with }}', '{{ if .a }}{{ else if }}{{ end }}'],
  ...[
    '{{ if .a }}{{ else }}{{ else }}{{ end }}',
    '{{ .a = 1 }}',
    '{{ range $i, $j, $k := . }}{{ end }}',
  ],
  ...['{{ block }}', '{{ | .a }}', '{{ .a | "x" }}'],
  ...[
    '{{ end }}{{ if }}',
    '{{-}}',
    '{{ {{ }} }}',
    '{{ `raw }}',
    '{{ .a }}{{ end }}',
    '{{ if }}{{ end }}',
  ],
  ...[
    '{{ define "a" }}x{{ end }}{{ define "a" }}y{{ end }}',
    '{{ else if .a }}',
    '{{ range .a }}{{ else }}{{ break }}{{ end }}',
  ],
  ...['{{ with .a }}{{ else with }}{{ end }}', '{{ .a.1 }}', '{{ $x := 1 := 2 }}'],
  ...['{{ .a b }}', '{{ ) }}', '{{ ( }}'],
  ...[
    '{{ if .a }}{{ define "x" }}{{ end }}{{ end }}',
    "{{ '' }}",
    '{{ 1e }}',
    '{{ @ }}',
    '{{ # }}',
  ],
  ...['{{ .a-b }}', '{{ $x.1 }}', '{{- 3}}x{{3 -}}{{ }}'],
]

/** Texts Go's parser accepts though executing them fails (or looks as if it should not parse). */
const PARSE_ONLY = [
  ...['{{ nil }}', '{{ $x = 1 }}', '{{ template "a" . . }}', '{{ .a | }}', '{{ $ := 1 }}'],
  ...['{{ (1) .a }}', '{{ 3 4 }}', '{{ "x" .a }}', '{{ .a . }}', '{{- /* a */}}', '{{/* a */ -}}'],
]

/** Splits at a code point (never inside a surrogate pair: Go would read U+FFFD). */
function prefix(text: string, length: number): string {
  return Array.from(text).slice(0, length).join('')
}

export function templateCases(): string[] {
  const random = seeded(0x7e3b1a7e)
  const texts = new Set<string>([...VALID, ...INVALID, ...PARSE_ONLY])
  for (let i = 0; i < 150; i++) {
    const parts = Array.from({ length: random.int(2, 4) }, () => random.pick(VALID))
    texts.add(parts.join(random.pick(['', ' ', '\n', 'text'])))
  }
  for (let i = 0; i < 120; i++) {
    const text = random.pick(VALID.filter((t) => t.length > 2))
    texts.add(prefix(text, random.int(1, Array.from(text).length - 1)))
  }
  return [...texts]
}
