// CRD input that evaluation cannot use is refused with the CRD, version and keyword or rule
// named: what is not a CRD when it is read, a version that does not compile when an object of it
// is first evaluated (and only then: a CRD no object uses costs no compiling and stops nothing).
import t from 'tap'
import { crdCatalog } from '../../../src/policy/crd/crd-catalog.ts'
import { CrdInputError, readCrd } from '../../../src/policy/crd/crd-definition.ts'
import type { KubeObject } from '../../../src/policy/kube/object.ts'

function crd(version: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.example.com' },
    spec: { group: 'example.com', names: { kind: 'Thing' }, versions: [version] },
  }
}
const withSpec = (spec: Record<string, unknown>) =>
  crd({
    name: 'v1',
    served: true,
    schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
  })
const withRule = (rule: Record<string, unknown>) =>
  withSpec({ type: 'object', 'x-kubernetes-validations': [rule] })

const readRefusals: [string, KubeObject, RegExp][] = [
  [
    'not a CRD',
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
    /^not a CustomResourceDefinition \(apiextensions\.k8s\.io\/v1\): v1 ConfigMap$/,
  ],
  [
    'a served version without a schema',
    crd({ name: 'v1', served: true }),
    /^CustomResourceDefinition things\.example\.com, version v1: no schema \(schema\.openAPIV3Schema\)$/,
  ],
]

for (const [name, object, message] of readRefusals) {
  t.test(name, async (t) => {
    t.throws(() => readCrd(object), CrdInputError)
    t.throws(() => readCrd(object), { message })
  })
}

const compileRefusals: [string, KubeObject, RegExp][] = [
  [
    'a rule that does not parse',
    withRule({ rule: 'self.a +' }),
    /^CustomResourceDefinition things\.example\.com, version v1: spec x-kubernetes-validations: rule "self\.a \+" does not compile: /,
  ],
  [
    'a messageExpression that does not parse',
    withRule({ rule: 'true', messageExpression: "'a' +" }),
    /version v1: spec x-kubernetes-validations: messageExpression "'a' \+" does not compile: /,
  ],
  [
    'a Kubernetes library function not provided offline',
    withRule({ rule: 'self.items.isSorted()' }),
    /rule "self\.items\.isSorted\(\)" does not compile: undeclared reference to 'isSorted'/,
  ],
  [
    'a pattern RE2 cannot read',
    withSpec({ type: 'object', properties: { id: { type: 'string', pattern: '(?<=x)y' } } }),
    /^CustomResourceDefinition things\.example\.com, version v1: schema\.openAPIV3Schema\.properties\[spec\]\.properties\[id\]\.pattern: Invalid value: "\(\?<=x\)y": must be a valid regular expression, but isn't: error parsing regexp: /,
  ],
  [
    'a pattern with a line break that RE2 cannot read: still one line',
    withSpec({ type: 'string', pattern: '(\nx' }),
    /\.properties\[spec\]\.pattern: Invalid value: "\(\\nx": must be a valid regular expression, but isn't: error parsing regexp: missing closing \): `\(\\nx`$/,
  ],
  [
    'a bound that is not an integer',
    withSpec({ type: 'array', items: { type: 'string', maxLength: 'ten' } }),
    /^CustomResourceDefinition things\.example\.com, version v1: schema\.openAPIV3Schema\.properties\[spec\]\.items\.maxLength: Invalid value: "ten": must be an integer$/,
  ],
  [
    'a fraction for a bound, under a hostile property name',
    withSpec({ type: 'object', properties: { 'a/b~c': { type: 'string', minLength: 1.5 } } }),
    /\.properties\[spec\]\.properties\[a\/b~c\]\.minLength: Invalid value: 1\.5: must be an integer$/,
  ],
  [
    'a type OpenAPI v3 does not have',
    withSpec({ type: 'object', additionalProperties: { type: 'text' } }),
    /\.properties\[spec\]\.additionalProperties\.type: Unsupported value: "text": supported values: "array", "boolean", "integer", "number", "object", "string"$/,
  ],
  [
    'type null',
    withSpec({ type: 'null' }),
    /\.properties\[spec\]\.type: Forbidden: type cannot be set to null, use nullable as an alternative$/,
  ],
  [
    'items as a list',
    withSpec({ type: 'array', items: [{ type: 'string' }] }),
    /\.properties\[spec\]\.items: Forbidden: items must be a schema object and not an array$/,
  ],
  [
    'uniqueItems',
    withSpec({ type: 'array', items: { type: 'string' }, uniqueItems: true }),
    /\.properties\[spec\]\.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic$/,
  ],
  [
    'an allOf item that is not a schema',
    withSpec({ type: 'object', allOf: [{ required: ['a'] }, 7] }),
    /\.properties\[spec\]\.allOf: Invalid value: \[\{"required":\["a"\]\},7\]: must be a list of schemas \(objects\)$/,
  ],
  [
    'an allOf schema with a bad keyword, at its index',
    withSpec({ type: 'object', allOf: [{ required: ['a'] }, { maxProperties: 'x' }] }),
    /\.properties\[spec\]\.allOf\[1\]\.maxProperties: Invalid value: "x": must be an integer$/,
  ],
  [
    'a rule whose message is not a string',
    withRule({ rule: 'true', message: 5 }),
    /\.properties\[spec\]\.x-kubernetes-validations: Invalid value: \[\{"rule":"true","message":5\}\]: must be a list of rules/,
  ],
]

const thing = { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't' }, spec: {} }

for (const [name, object, message] of compileRefusals) {
  t.test(name, async (t) => {
    const definition = readCrd(object)
    const catalog = crdCatalog([definition])
    t.ok(catalog.defines(thing), 'read, and nothing compiled until an object needs it')
    t.equal(
      catalog.evaluate({ operation: 'CREATE', object: { ...thing, kind: 'Other' } }),
      undefined,
    )
    const evaluate = () => catalog.evaluate({ operation: 'CREATE', object: thing })
    t.throws(evaluate, { name: 'CrdInputError', message, definition })
  })
}

t.test('unserved versions need no schema and are not evaluated', async (t) => {
  const definition = readCrd(crd({ name: 'v0', served: false }))
  t.equal(definition.versions.size, 0)
})
