/**
 * The template texts the composite generators put in conditions, arguments, messages and output
 * values: each either references a step's output field the way ToolHive's defaultResults rule
 * counts (`.steps.<id>.output.<field>` as a field or chain of the template's parse tree, also
 * inside if/range/with/define/template), or mentions it in a way the rule must not count (a
 * variable, a comment, a string, `index`, a `with` dot, a parenthesised chain). All parse with
 * ToolHive's functions: template parity is another family's business.
 */

export interface ReferenceForm {
  readonly name: string
  /** Whether the defaultResults rule counts it as a reference to `id`'s `field`. */
  readonly counted: boolean
  readonly text: (id: string, field: string) => string
}

export const REFERENCE_FORMS: readonly ReferenceForm[] = [
  { name: 'field', counted: true, text: (id, f) => `{{ .steps.${id}.output.${f} }}` },
  { name: 'trimmed', counted: true, text: (id, f) => `{{- .steps.${id}.output.${f} -}}` },
  {
    name: 'if',
    counted: true,
    text: (id, f) => `{{ if .steps.${id}.output.${f} }}yes{{ else }}no{{ end }}`,
  },
  { name: 'pipeline', counted: true, text: (id, f) => `{{ .steps.${id}.output.${f} | json }}` },
  { name: 'argument', counted: true, text: (id, f) => `{{ quote .steps.${id}.output.${f} }}` },
  {
    name: 'chain-base',
    counted: true,
    text: (id, f) => `{{ (fromJson .steps.${id}.output.${f}).k }}`,
  },
  {
    name: 'declaration',
    counted: true,
    text: (id, f) => `{{ $v := .steps.${id}.output.${f} }}{{ $v }}`,
  },
  {
    name: 'define',
    counted: true,
    text: (id, f) => `{{ define "part" }}{{ .steps.${id}.output.${f} }}{{ end }}x`,
  },
  {
    name: 'template-argument',
    counted: true,
    text: (id, f) => `{{ template "elsewhere" .steps.${id}.output.${f} }}`,
  },
  {
    name: 'range-else',
    counted: true,
    text: (id, f) => `{{ range .steps.${id}.output.${f} }}{{ .name }}{{ else }}none{{ end }}`,
  },
  { name: 'deeper', counted: true, text: (id, f) => `{{ .steps.${id}.output.${f}.inner.most }}` },
  {
    name: 'else-with',
    counted: true,
    text: (id, f) =>
      `{{ with .params.q }}{{ . }}{{ else with .steps.${id}.output.${f} }}{{ . }}{{ end }}`,
  },
  {
    name: 'else-if',
    counted: true,
    text: (id, f) => `{{ if .params.a }}a{{ else if eq .steps.${id}.output.${f} "x" }}b{{ end }}`,
  },
  {
    name: 'and',
    counted: true,
    text: (id, f) => `{{ if and .params.q (ne .steps.${id}.output.${f} 0) }}go{{ end }}`,
  },
  { name: 'variable', counted: false, text: (id, f) => `{{ $.steps.${id}.output.${f} }}` },
  { name: 'comment', counted: false, text: (id, f) => `{{/* .steps.${id}.output.${f} */}}` },
  { name: 'string', counted: false, text: (id, f) => `{{ ".steps.${id}.output.${f}" }}` },
  { name: 'index', counted: false, text: (id, f) => `{{ index .steps.${id}.output "${f}" }}` },
  {
    name: 'with-dot',
    counted: false,
    text: (id, f) => `{{ with .steps.${id}.output }}{{ .${f} }}{{ end }}`,
  },
  { name: 'chain', counted: false, text: (id, f) => `{{ (.steps.${id}).output.${f} }}` },
  { name: 'plain-text', counted: false, text: (id, f) => `see .steps.${id}.output.${f}` },
  { name: 'status', counted: false, text: (id) => `{{ .steps.${id}.status }}` },
  { name: 'whole-output', counted: false, text: (id) => `{{ .steps.${id}.output | json }}` },
]

/** Templates that reference no step. */
export const PLAIN_TEMPLATES: readonly string[] = [
  '{{ .params.q }}',
  'static text',
  '{{ .params.count | json }}',
  '{{ if .params.flag }}on{{ else }}off{{ end }}',
  '{{ range $i, $e := .params.items }}{{ $i }}={{ $e }};{{ end }}',
  '{{ quote .params.name }}',
  '{{- /* nothing */ -}}',
  '{{ "}}" }}',
  '{{ printf "%s-%d" .params.q 3 }}',
  '{{ true }}',
  '{{ eq .params.mode "fast" }}',
  '{{ (fromJson .params.blob).field }}',
  '{{ .workflow.id }}',
]

/** Step output field names a reference may use. */
export const FIELDS: readonly string[] = ['result', 'count', 'items', 'data_1', 'ok', 'Ünïcode']
