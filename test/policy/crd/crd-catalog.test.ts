// The CRD evaluation as a table: each case's words are what kube-apiserver v1.37.2 answered for
// the same object and CRD (probe-crd.ts), compared as a set, since the API server's order follows
// Go map iteration.
import t from 'tap'
import { crdCatalog } from '../../../src/policy/crd/crd-catalog.ts'
import type { CrdVerdict } from '../../../src/policy/crd/crd-catalog.ts'
import { readCrd } from '../../../src/policy/crd/crd-definition.ts'
import { formatViolation } from '../../../src/policy/messages/render.ts'
import { PROBE_CRD, probe } from './probe-crd.ts'

const catalog = crdCatalog([readCrd(PROBE_CRD)])
const SKIPPED =
  '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation'

function lines(verdict: CrdVerdict | undefined): string[] {
  if (verdict === undefined || verdict.allowed) return []
  if ('decodeError' in verdict) return [verdict.decodeError]
  return verdict.violations.map(formatViolation).sort()
}

const denials: [string, Record<string, unknown>, string[]][] = [
  ['fieldPath', { a: 'fp' }, ['spec.a: Invalid value: a must not be fp']],
  ['messageExpression', { a: 'me' }, ['spec: Invalid value: a is me']],
  ['reason Forbidden', { a: 'rs' }, ['spec: Forbidden: reason forbidden']],
  ['reason Required', { a: 'rq' }, ['spec: Required value: reason required']],
  ['reason Duplicate', { a: 'dup' }, ['spec: Duplicate value']],
  ['fieldPath into a map', { a: 'fpm' }, ['spec.m[x.y]: Invalid value: fp map']],
  [
    'a failing messageExpression: the message',
    { a: 'mee', list: ['q'] },
    ['spec: Invalid value: fallback msg'],
  ],
  [
    'a failing messageExpression, no message: the rule',
    { a: 'mee2', list: ['q'] },
    ["spec: Invalid value: failed rule: !has(self.a) || self.a != 'mee2'"],
  ],
  ['a scalar shows its value', { b: false }, ['spec.b: Invalid value: false: b must be true']],
  ['a list does not', { list: ['a', 'b', 'c'] }, ['spec.list: Invalid value: short list']],
  ['nor a map', { m: { a: '1', b: '2' } }, ['spec.m: Invalid value: small map']],
  [
    'duration rule',
    { timeout: '-1s' },
    ['spec.timeout: Invalid value: "-1s": timeout must be non-negative'],
  ],
  [
    'maximum of a number',
    { num: 5.5 },
    ['spec.num: Invalid value: 5.5: spec.num in body should be less than or equal to 5'],
  ],
  [
    'int-or-string of the wrong type',
    { ios: true },
    [
      'spec.ios: Invalid value: "boolean": spec.ios in body must be of type integer,string: "boolean"',
      SKIPPED,
    ],
  ],
  [
    'set: too many, and a duplicate',
    { set: ['a', 'a', 'b', 'c'] },
    [
      'spec.set: Too many: 4: must have at most 3 items',
      'spec.set[1]: Duplicate value: "a"',
      SKIPPED,
    ],
  ],
  [
    'map list: duplicate keys (not blocking: rules still run)',
    { env: [{ name: 'A' }, { name: 'A', value: '2' }], b: false },
    ['spec.b: Invalid value: false: b must be true', 'spec.env[1]: Duplicate value: {"name":"A"}'],
  ],
  [
    'maxProperties',
    { mp: { a: 1, b: 2 } },
    ['spec.mp: Too many: 2: must have at most 1 item', SKIPPED],
  ],
  [
    'embedded resource without apiVersion and kind',
    { emb: { foo: 1 } },
    ['spec.emb.apiVersion: Required value', 'spec.emb.kind: Required value', SKIPPED],
  ],
  [
    'types, enum, bounds and the first failing string check',
    { port: 70000, mode: 'c', name: 'ABCD', num: 'x', list: [1] },
    [
      'spec.list[0]: Invalid value: "integer": spec.list[0] in body must be of type string: "integer"',
      'spec.mode: Unsupported value: "c": supported values: "a", "b"',
      'spec.name: Too long: may not be more than 3 bytes',
      'spec.num: Invalid value: "string": spec.num in body must be of type number: "string"',
      'spec.port: Invalid value: 70000: spec.port in body should be less than or equal to 65535',
      SKIPPED,
    ],
  ],
  [
    'a fraction where an int32 is due',
    { port: 1.5 },
    [
      '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.port',
      'spec.port: Invalid value: "float64": spec.port in body must be of type int32: "float64"',
      SKIPPED,
    ],
  ],
  [
    'required, and a null where a string is due',
    { req: undefined, list: [null] },
    [
      'spec.list[0]: Invalid value: "null": spec.list[0] in body must be of type string: "null"',
      'spec.req: Required value',
      SKIPPED,
    ],
  ],
]

for (const [name, spec, expected] of denials) {
  t.test(name, async (t) => {
    const object = probe(spec)
    if ('req' in spec && spec.req === undefined) delete (object.spec as Record<string, unknown>).req
    t.same(lines(catalog.evaluate({ operation: 'CREATE', object })), [...expected].sort())
  })
}

t.test(
  'a runtime error names the schema type and the message (the error in CEL-ES words)',
  async (t) => {
    // kube-apiserver (cel-go): `index out of bounds: 5 evaluating rule: runtime error`.
    const [line] = lines(
      catalog.evaluate({ operation: 'CREATE', object: probe({ a: 'err', list: ['q'] }) }),
    )
    t.match(
      line,
      /^spec: Invalid value: "object": index 5 out of bounds .* evaluating rule: runtime error$/,
    )
  },
)

t.test(
  'an object that passes is returned pruned and defaulted, unknown fields warned',
  async (t) => {
    const verdict = catalog.evaluate({
      operation: 'CREATE',
      object: probe(
        { replica: 3, nul: null, free: { any: 1 }, env: [{ name: 'A', x: 1 }] },
        {
          status: { phase: 'x' },
          metadata: { name: 'p', namespace: 'ns', bogus: 1 },
        },
      ),
    })
    t.ok(verdict?.allowed)
    if (!verdict?.allowed) return
    t.same(verdict.warnings, [
      'unknown field "metadata.bogus"',
      'unknown field "spec.replica"',
      'unknown field "spec.env[0].x"',
    ])
    t.same(verdict.object.spec, {
      req: 'x',
      nul: null,
      free: { any: 1 },
      env: [{ name: 'A' }],
      mode: 'a',
    })
    t.notOk('status' in verdict.object, 'status is a subresource: a CREATE does not set it')
  },
)

t.test('--strict: unknown fields refuse the object as the API server words it', async (t) => {
  const verdict = catalog.evaluate({
    operation: 'CREATE',
    object: probe({ replica: 3 }),
    strict: true,
  })
  t.same(lines(verdict), [
    'Probe in version "v1" cannot be handled as a Probe: strict decoding error: unknown field "spec.replica"',
  ])
})

t.test('a transition rule runs only on UPDATE, against the old value', async (t) => {
  const object = probe({ imm: 'b' })
  t.same(lines(catalog.evaluate({ operation: 'CREATE', object })), [])
  t.same(lines(catalog.evaluate({ operation: 'UPDATE', object, oldObject: probe({}) })), [])
  t.same(lines(catalog.evaluate({ operation: 'UPDATE', object, oldObject: probe({ imm: 'a' }) })), [
    'spec.imm: Invalid value: "b": immutable',
  ])
})

t.test('kinds the CRDs do not define are not judged; unserved versions are refused', async (t) => {
  t.equal(
    catalog.evaluate({ operation: 'CREATE', object: { apiVersion: 'v1', kind: 'ConfigMap' } }),
    undefined,
  )
  t.same(
    lines(
      catalog.evaluate({
        operation: 'CREATE',
        object: { ...probe({}), apiVersion: 'example.com/v2' },
      }),
    ),
    ['no matches for kind "Probe" in version "example.com/v2"'],
  )
})

/** A catalog of one CRD, kind Thing, whose `spec` has the given schema. */
function thingCatalog(spec: Record<string, unknown>) {
  return crdCatalog([
    readCrd({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Thing' },
        versions: [
          {
            name: 'v1',
            served: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
          },
        ],
      },
    }),
  ])
}
const thing = (spec: unknown) => ({
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata: { name: 't', namespace: 'ns' },
  spec,
})

t.test('null and empty-list keywords are unset, as Go decodes them (omitempty)', async (t) => {
  const unset = thingCatalog({
    type: 'object',
    enum: [],
    allOf: [],
    anyOf: [],
    required: [],
    maxProperties: null,
    properties: { a: { type: 'string', pattern: null, maxLength: null } },
  })
  const verdict = unset.evaluate({ operation: 'CREATE', object: thing({ a: 'any text' }) })
  t.same(lines(verdict), [])
  t.equal(verdict?.allowed, true)
})

t.test(
  'an enum of objects is compared as JSON, whatever keys the value holds (toString, valueOf)',
  async (t) => {
    const objects = thingCatalog({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      enum: [{ toString: 1 }, { a: [1, 2] }],
    })
    const evaluate = (spec: unknown) =>
      lines(objects.evaluate({ operation: 'CREATE', object: thing(spec) }))
    t.same(evaluate({ toString: 1 }), [])
    t.same(evaluate({ a: [1, 2] }), [])
    t.same(evaluate({ valueOf: 0, toString: 'x' }), [
      SKIPPED,
      'spec: Unsupported value: {"valueOf":0,"toString":"x"}: supported values: "{\\"toString\\":1}", "{\\"a\\":[1,2]}"',
    ])
  },
)
