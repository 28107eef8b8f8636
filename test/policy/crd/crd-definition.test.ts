// CRD input that evaluation cannot use is refused with the CRD, version and rule named.
import t from 'tap'
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
const withRule = (rule: Record<string, unknown>) =>
  crd({
    name: 'v1',
    served: true,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: { spec: { type: 'object', 'x-kubernetes-validations': [rule] } },
      },
    },
  })

const refusals: [string, KubeObject, RegExp][] = [
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
]

for (const [name, object, message] of refusals) {
  t.test(name, async (t) => {
    t.throws(() => readCrd(object), CrdInputError)
    t.throws(() => readCrd(object), { message })
  })
}

t.test('unserved versions need no schema and are not evaluated', async (t) => {
  const definition = readCrd(crd({ name: 'v0', served: false }))
  t.equal(definition.versions.size, 0)
})
