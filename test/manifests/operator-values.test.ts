/**
 * The chart's `operator` values against the service's `--operator-service-account`, without helm:
 * the chart's defaults are the service's default (so they render no flag and mean the same
 * account), and what values.schema.json accepts for them is what the service accepts, so a value
 * that passes `helm install` never stops the pods at start-up. test/e2e/chart.test.ts renders the
 * flag itself with a real helm.
 */

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import { DEFAULT_OPERATOR_SERVICE_ACCOUNT } from '../../src/admission/writer.ts'
import { serviceAccountReference } from '../../src/cli/setting-values.ts'

type Any = Record<string, any>

const MANIFESTS = fileURLToPath(new URL('../../manifests/', import.meta.url))
const read = (path: string) => readFileSync(`${MANIFESTS}${path}`, 'utf8')
const values = parse(read('charts/mcp-admission/values.yaml')) as Any
const schema = JSON.parse(read('charts/mcp-admission/values.schema.json')) as Any
const template = read('charts/mcp-admission/templates/deployment.yaml')

/** The flag's value for the chart's `operator` values, as templates/deployment.yaml composes it. */
const account = (namespace: string, serviceAccount: string) =>
  namespace === '' ? serviceAccount : `${namespace}/${serviceAccount}`

t.test("the chart's defaults are the service's default, and render no flag", async (t) => {
  t.same(values['operator'], { namespace: 'toolhive-system', serviceAccount: 'toolhive-operator' })
  t.equal(
    account(values['operator'].namespace, values['operator'].serviceAccount),
    DEFAULT_OPERATOR_SERVICE_ACCOUNT,
  )
  t.match(
    template,
    `{{- if ne $operatorAccount ${JSON.stringify(DEFAULT_OPERATOR_SERVICE_ACCOUNT)} }}`,
    'the template leaves out the flag for exactly that account',
  )
  const [deployment] = parseAllDocuments(read('base/deployment.yaml')).map(
    (document) => document.toJS() as Any,
  )
  const args = deployment?.['spec'].template.spec.containers[0].args as string[]
  t.same(
    args.filter((arg) => arg.startsWith('--operator-service-account')),
    [],
    'the kustomize base (the chart defaults) passes none',
  )
})

t.test('the schema accepts the operator values the service accepts, and no others', async (t) => {
  const operator = schema['properties']['operator'] as Any
  t.equal(operator['additionalProperties'], false)
  t.same(operator['required'], ['namespace', 'serviceAccount'])
  const pattern = (key: string) => {
    const property = operator['properties'][key] as Any
    const matches = new RegExp(property['pattern'] as string, 'u')
    return (value: string) =>
      value.length <= (property['maxLength'] as number) && matches.test(value)
  }
  const [namespaceOk, serviceAccountOk] = [pattern('namespace'), pattern('serviceAccount')]
  const namespaces = [
    '',
    'ops',
    'toolhive-system',
    'a'.repeat(63),
    'a'.repeat(64),
    'a.b',
    'Ops',
    '-a',
  ]
  const names = [
    'thv',
    'toolhive-operator',
    'a.b-c',
    'a'.repeat(253),
    'a'.repeat(254),
    '',
    'A',
    'a_b',
    'a.',
  ]
  for (const namespace of namespaces)
    for (const name of names) {
      const chart = namespaceOk(namespace) && serviceAccountOk(name)
      const service = serviceAccountReference.read(account(namespace, name)).problem === undefined
      t.equal(
        chart,
        service,
        `namespace ${JSON.stringify(namespace)}, name ${JSON.stringify(name.slice(0, 12))}…`,
      )
    }
  t.ok(
    namespaceOk('') && !serviceAccountOk(''),
    'an empty namespace is the name alone; an empty name is nothing',
  )
})

t.test(
  'the replaced operatorServiceAccount is in the schema only (the template refuses it)',
  async (t) => {
    t.ok(
      'operatorServiceAccount' in schema['properties'],
      'not "additional properties not allowed"',
    )
    t.notOk('operatorServiceAccount' in values, 'not a value any more')
  },
)
