/**
 * Composite definitions the CRD schema admits where Go's reading of them matters: values its types
 * cannot hold (a duration past Go's range; in the schemaless parts — a forEach's inner `step`,
 * nested output `properties`, `defaultResults` — a wrong type), which the operator cannot decode
 * and ours must refuse; keys in those schemaless parts that encoding/json matches without regard
 * to case, the last one winning; and templates on which upstream's validation panics (a
 * `{{template}}` call without an argument, walked by the defaultResults rule when a step may be
 * skipped), which Go cannot judge at all.
 */

import type { CompositeCase } from './composite-cases.ts'
import type { Obj } from './composite-valid.ts'

function spec(extra: Obj, step: Obj = {}): Obj {
  return {
    name: 'decoding',
    description: 'd',
    ...extra,
    steps: [{ id: 'a', tool: 'fetch', ...step }],
  }
}

function forEach(inner: Obj): Obj {
  return spec(
    {},
    { tool: undefined, type: 'forEach', collection: '{{ json .params.items }}', step: inner },
  )
}

const CASES: readonly (readonly [CompositeCase['defects'], string, Obj])[] = [
  ['decode', 'workflow timeout past Go range', spec({ timeout: '99999999999h' })],
  ['decode', 'step timeout past Go range', spec({}, { timeout: '2562048h' })],
  [
    'decode',
    'retryDelay past Go range',
    spec({}, { onError: { action: 'retry', retryCount: 1, retryDelay: '9999999999h' } }),
  ],
  ['decode', 'defaultResults a string', spec({}, { condition: '{{ true }}', defaultResults: 'x' })],
  ['decode', 'defaultResults a list', spec({}, { condition: '{{ true }}', defaultResults: [1] })],
  ['decode', 'inner step tool a number', forEach({ tool: 5 })],
  ['decode', 'inner step timeout not a duration', forEach({ tool: 'x', timeout: 'soon' })],
  ['decode', 'inner step dependsOn a string', forEach({ tool: 'x', dependsOn: 'a' })],
  ['decode', 'inner step arguments a list', forEach({ tool: 'x', arguments: [1] })],
  ['decode', 'inner step maxParallel a string', forEach({ tool: 'x', maxParallel: '5' })],
  [
    'decode',
    'nested output property type a number',
    spec({
      output: {
        properties: { outer: { type: 'object', properties: { inner: { type: 5, value: 'v' } } } },
      },
    }),
  ],
  ['none', 'inner step key in another case', forEach({ Tool: 'fetch' })],
  [
    'none',
    'inner step keys in two cases, the last valid',
    forEach({ tool: 'not a tool', TOOL: 'fetch' }),
  ],
  [
    'one',
    'inner step keys in two cases, the last invalid',
    forEach({ TOOL: 'fetch', tool: 'not a tool' }),
  ],
  [
    'one',
    'inner step type in two cases',
    forEach({ type: 'tool', Type: 'elicitation', tool: 'x' }),
  ],
  [
    'panic',
    'template call without argument in a condition',
    spec({}, { condition: '{{ template "t" }}' }),
  ],
  [
    'panic',
    'template call without argument in arguments',
    spec({}, { arguments: { a: 'x{{ template "t" }}' }, onError: { action: 'continue' } }),
  ],
  [
    'panic',
    'template call without argument in an output value',
    spec(
      { output: { properties: { p: { type: 'string', value: '{{ template "t" }}' } } } },
      { condition: '{{ .params.flag }}' },
    ),
  ],
  // The defaultResults rule walks no template when no step may be skipped: no panic.
  [
    'none',
    'template call without argument, no step skippable',
    spec({}, { arguments: { a: '{{ template "t" }}' } }),
  ],
]

export function decodingCases(): CompositeCase[] {
  return CASES.map(([defects, name, value]) => ({
    name,
    defects,
    spec: JSON.parse(JSON.stringify(value)) as Obj,
  }))
}
