import t from 'tap'
import {
  contentChecksum,
  effectiveContentChecksum,
  isRunConfigMap,
  mutateRunConfigMap,
  sortedByUtf8,
} from '../../src/policy/content-checksum.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { isRefused } from '../../src/policy/result.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import {
  RUNCONFIG_LABELS as VECTOR_LABELS,
  VECTOR_CHECKSUM,
  runConfigMap as configMap,
} from '../helpers/objects.ts'

function checksumOf(object: KubeObject): string {
  const result = contentChecksum(object)
  if (!('checksum' in result)) throw new Error(JSON.stringify(result.violations))
  return result.checksum
}

t.test('the test vector of docs/enforcement.md#the-runconfig-checksum', async (t) => {
  t.equal(checksumOf(configMap()), VECTOR_CHECKSUM)
})

t.test('what the checksum covers', async (t) => {
  const base = checksumOf(configMap())
  const cases: [string, KubeObject, boolean][] = [
    [
      'the checksum annotation itself is excluded',
      configMap({ annotations: { [ANNOTATIONS.contentChecksum]: 'stale' } }),
      true,
    ],
    ['binaryData is not hashed', configMap({ binaryData: { blob: 'AAAA' } }), true],
    [
      'key order in the object does not matter',
      configMap({ labels: Object.fromEntries(Object.entries(VECTOR_LABELS).reverse()) }),
      true,
    ],
    ['a data value change', configMap({ data: { 'runconfig.json': '{}' } }), false],
    ['another annotation', configMap({ annotations: { note: 'x' } }), false],
    ['a label change', configMap({ labels: { ...VECTOR_LABELS, extra: '' } }), false],
  ]
  for (const [name, object, same] of cases) {
    if (same) t.equal(checksumOf(object), base, name)
    else t.not(checksumOf(object), base, name)
  }
})

t.test('no separators: key and value bytes are simply concatenated', async (t) => {
  const a = checksumOf(configMap({ data: { ab: 'c' }, labels: {} }))
  const b = checksumOf(configMap({ data: { a: 'bc' }, labels: {} }))
  t.equal(a, b, 'the spec hashes without separators, so these collide by design')
})

t.test('keys sort by UTF-8 bytes, not UTF-16 code units', async (t) => {
  // U+FF61 is one UTF-16 unit above the surrogates, but its UTF-8 bytes sort before U+1F600's.
  t.same(sortedByUtf8(['\u{1F600}', '\uFF61', 'a']), ['a', '\uFF61', '\u{1F600}'])
  t.same(sortedByUtf8(['b', 'a', 'ab', '']), ['', 'a', 'ab', 'b'])
})

t.test('non-string map values are violations with their field', async (t) => {
  const result = contentChecksum(configMap({ data: { port: 8080 } }))
  t.ok('violations' in result)
  if ('violations' in result) t.equal(result.violations[0]?.field, 'data[port]')
})

t.test('mutation stamps only RunConfig ConfigMaps and keeps every other key', async (t) => {
  const stamped = mutateRunConfigMap(configMap({ annotations: { keep: 'me' } }))
  t.notOk(isRefused(stamped))
  if (!isRefused(stamped)) {
    t.same(stamped.object.metadata?.annotations, {
      keep: 'me',
      [ANNOTATIONS.contentChecksum]: checksumOf(configMap({ annotations: { keep: 'me' } })),
    })
  }
  const plain = configMap({ labels: { app: 'x' } })
  const before = structuredClone(plain)
  const untouched = mutateRunConfigMap(plain)
  t.same(!isRefused(untouched) && untouched.object, before)
  t.ok(isRunConfigMap(configMap({ labels: { 'toolhive.stacklok.io/component': 'vmcp-config' } })))
  t.notOk(isRunConfigMap({ ...configMap(), kind: 'Secret' }))
})

t.test('a data key named __proto__ is hashed as data, not as a prototype', async (t) => {
  const object = JSON.parse(
    '{"kind":"ConfigMap","metadata":{"labels":{"toolhive.stacklok.io/component":"run-config"}},"data":{"__proto__":"x"}}',
  ) as KubeObject
  const result = mutateRunConfigMap(object)
  t.notOk(isRefused(result))
  t.equal(Object.getPrototypeOf(object.data), Object.prototype)
  t.match(effectiveContentChecksum(object), /^[0-9a-f]{64}$/)
  t.not(checksumOf(object), checksumOf({ ...object, data: {} }))
})
