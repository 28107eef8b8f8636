/**
 * A CRD's schema keywords, taken or refused as the real kube-apiserver takes or refuses them. For
 * each case a CRD whose `spec` schema holds one keyword goes to `kubectl create --dry-run=server`
 * and, with an object of its kind, to `check --crds`. When the API server refuses the CRD, `check`
 * is exit 2 with one line naming the same place; where the API server words the refusal as a
 * field error, `check` says the same words. When the API server takes it, `check` gives its
 * verdict (exit 0 or 1), never a usage error.
 */

import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../helpers/cli.ts'
import { startEnvironment } from './harness/environment.ts'

interface KeywordCase {
  readonly name: string
  readonly spec: Record<string, unknown>
  /** Refused: the words both must say after `….openAPIV3Schema.properties[spec].`. */
  readonly refused?: string
  /** Refused by Go's JSON decoding (no field error to compare): the keyword `check` names. */
  readonly undecodable?: string
}

const CASES: readonly KeywordCase[] = [
  {
    name: 'uniqueItems: true',
    spec: { type: 'array', items: { type: 'string' }, uniqueItems: true },
    refused:
      'uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
  },
  {
    name: 'a type OpenAPI v3 does not have',
    spec: { type: 'text' },
    refused:
      'type: Unsupported value: "text": supported values: "array", "boolean", "integer", "number", "object", "string"',
  },
  {
    name: 'type null',
    spec: { type: 'null' },
    refused: 'type: Forbidden: type cannot be set to null, use nullable as an alternative',
  },
  {
    name: 'a pattern that is not RE2',
    spec: { type: 'string', pattern: '+' },
    refused:
      'pattern: Invalid value: "+": must be a valid regular expression, but isn\'t: error parsing regexp: missing argument to repetition operator: `+`',
  },
  {
    name: 'a bound that is not an integer',
    spec: { type: 'string', maxLength: 'ten' },
    undecodable: 'maxLength: Invalid value: "ten": must be an integer',
  },
  {
    name: 'a rule that is not a string',
    spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 5 }] },
    undecodable: 'x-kubernetes-validations: Invalid value: [{"rule":5}]: must be a list of rules',
  },
  { name: 'an empty enum and a null bound', spec: { type: 'string', enum: [], maxLength: null } },
  { name: 'a negative bound', spec: { type: 'string', maxLength: -1 } },
  {
    name: 'an enum of objects',
    spec: { type: 'object', enum: [{ a: 'x' }], properties: { a: { type: 'string' } } },
  },
]

function crdWith(spec: Record<string, unknown>, plural: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.keywords.example.com` },
    spec: {
      group: 'keywords.example.com',
      scope: 'Namespaced',
      names: { kind: 'Thing', plural, singular: plural.slice(0, -1), listKind: 'ThingList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
        },
      ],
    },
  }
}

const THING = {
  apiVersion: 'keywords.example.com/v1',
  kind: 'Thing',
  metadata: { name: 't', namespace: 'ns' },
  spec: 'text',
}

t.test(
  'CRD schema keywords: kube-apiserver and check --crds take and refuse the same',
  async (t) => {
    const { kubectl } = await startEnvironment(t, { crds: [], identity: false, service: false })
    const work = await mkdtemp(join(tmpdir(), 'mcp-admission-keywords-'))
    t.teardown(() => rm(work, { recursive: true, force: true }))
    const objectFile = join(work, 'thing.json')
    await writeFile(objectFile, JSON.stringify(THING))

    for (const [i, each] of CASES.entries()) {
      await t.test(each.name, async (t) => {
        const crd = crdWith(each.spec, `things${i}s`)
        const crdFile = join(work, `crd-${i}.json`)
        await writeFile(crdFile, JSON.stringify(crd))
        const server = await kubectl(['create', '--dry-run=server', '-f', crdFile])
        const check = await runCli(['check', '--crds', crdFile, objectFile])
        const expected = each.refused ?? each.undecodable
        if (expected === undefined) {
          t.equal(server.code, 0, `the API server takes it: ${server.stderr}`)
          t.not(check.code, 2, `check gives a verdict: ${check.stderr}`)
          return
        }
        t.not(server.code, 0, 'the API server refuses it')
        if (each.refused !== undefined) {
          t.match(server.stderr, `openAPIV3Schema.properties[spec].${each.refused}`)
        }
        t.equal(check.code, 2)
        t.equal(check.stdout, '')
        t.match(
          check.stderr,
          `, document 1: CustomResourceDefinition things${i}s.keywords.example.com, version v1: schema.openAPIV3Schema.properties[spec].${expected}`,
        )
        t.equal(check.stderr.split('\n').length, 2, 'one line')
      })
    }
  },
)
