import t from 'tap'
import {
  keepPatterns,
  parsePathPattern,
  valuesAtPattern,
} from '../../../src/policy/kube/path-patterns.ts'
import type { JsonObject } from '../../../src/policy/kube/object.ts'

const vmcp: JsonObject = {
  spec: {
    config: {
      compositeToolRefs: [{ name: 'a' }, 'not an object', { name: 'b', extra: 1 }],
      other: 'x',
    },
    outgoingAuth: {
      backends: {
        github: { externalAuthConfigRef: { name: 'gh' } },
        jira: { type: 'discovered' },
      },
    },
  },
  status: { conditions: [], phase: 'Ready' },
}

t.test('parsePathPattern: names, list and map wildcards', async (t) => {
  t.same(parsePathPattern('spec.a[].b{}.c'), [
    { key: 'spec' },
    { key: 'a' },
    '[]',
    { key: 'b' },
    '{}',
    { key: 'c' },
  ])
  t.same(parsePathPattern('a[][]'), [{ key: 'a' }, '[]', '[]'])
  t.same(parsePathPattern(''), [], 'the whole object')
  for (const malformed of ['spec.', '.spec', 'spec..a', 'a[0]', 'a[', '[]', 'a{}b'])
    t.throws(() => parsePathPattern(malformed), /malformed path pattern/, malformed)
})

t.test('valuesAtPattern: every match, with its field path', async (t) => {
  t.same(valuesAtPattern(vmcp, 'spec.config.compositeToolRefs[].name'), [
    { path: 'spec.config.compositeToolRefs[0].name', value: 'a' },
    { path: 'spec.config.compositeToolRefs[2].name', value: 'b' },
  ])
  t.same(valuesAtPattern(vmcp, 'spec.outgoingAuth.backends{}.externalAuthConfigRef.name'), [
    { path: 'spec.outgoingAuth.backends[github].externalAuthConfigRef.name', value: 'gh' },
  ])
  t.same(valuesAtPattern(vmcp, 'status.phase'), [{ path: 'status.phase', value: 'Ready' }])
  t.same(valuesAtPattern(vmcp, ''), [{ path: '', value: vmcp }])
  t.same(valuesAtPattern(vmcp, 'spec.missing.name'), [])
  t.same(valuesAtPattern(vmcp, 'spec.config.other[]'), [], 'a list step on a string')
  t.same(valuesAtPattern(vmcp, 'spec.config{}.x'), [], 'map values of the wrong type')
  t.same(valuesAtPattern(null, 'spec'), [])
  const hostile = JSON.parse('{"spec": {"__proto__": {"name": "p"}}}') as unknown
  t.same(valuesAtPattern(hostile, 'spec.__proto__.name'), [
    { path: 'spec.__proto__.name', value: 'p' },
  ])
  t.same(valuesAtPattern({ spec: {} }, 'spec.constructor'), [], 'own keys only')
})

t.test('keepPatterns: only what matches, and the lists and maps on the way', async (t) => {
  const before = structuredClone(vmcp)
  const kept = keepPatterns(vmcp, [
    'spec.config.compositeToolRefs[].name',
    'spec.outgoingAuth.backends{}.externalAuthConfigRef.name',
    'status.conditions',
    'spec.absent.name',
  ])
  t.same(kept, {
    spec: {
      config: { compositeToolRefs: [{ name: 'a' }, null, { name: 'b' }] },
      outgoingAuth: {
        backends: { github: { externalAuthConfigRef: { name: 'gh' } }, jira: {} },
      },
    },
    status: { conditions: [] },
  })
  t.same(vmcp, before, 'the input is not changed')
  t.equal((kept.status as JsonObject).conditions, (vmcp.status as JsonObject).conditions, 'shared')
  // Field paths in the copy are those of the original.
  t.same(
    valuesAtPattern(kept, 'spec.config.compositeToolRefs[].name'),
    valuesAtPattern(vmcp, 'spec.config.compositeToolRefs[].name'),
  )
  t.same(keepPatterns(kept, ['spec.config.compositeToolRefs[].name']), {
    spec: { config: { compositeToolRefs: [{ name: 'a' }, null, { name: 'b' }] } },
  })
})

t.test('keepPatterns: a whole value kept once is never written into', async (t) => {
  for (const patterns of [
    ['spec', 'spec.config.other'],
    ['spec.config.other', 'spec'],
    ['spec.config.compositeToolRefs', 'spec.config.compositeToolRefs[].name'],
    ['spec.outgoingAuth.backends', 'spec.outgoingAuth.backends{}.type'],
  ]) {
    const before = structuredClone(vmcp)
    const kept = keepPatterns(vmcp, patterns)
    t.same(vmcp, before, `${patterns.join(', ')}: the input is not changed`)
    t.same(keepPatterns(kept, patterns), kept, 'keeping again changes nothing')
  }
  t.equal(keepPatterns(vmcp, ['spec', 'spec.config.other']).spec, vmcp.spec)
})

t.test('keepPatterns: untrusted input', async (t) => {
  const hostile = JSON.parse(
    '{"spec": {"__proto__": {"name": "p", "x": 1}, "list": [[{"name": "n"}], 3]}}',
  ) as JsonObject
  const kept = keepPatterns(hostile, ['spec.__proto__.name', 'spec.list[][].name', 'spec{}.name'])
  t.equal(Object.getPrototypeOf(kept.spec), Object.prototype, 'no prototype is replaced')
  t.same(Object.keys(kept.spec as JsonObject), ['__proto__', 'list'])
  t.same(JSON.stringify(kept), '{"spec":{"__proto__":{"name":"p"},"list":[[{"name":"n"}],null]}}')
  t.same(({} as JsonObject).name, undefined, 'Object.prototype untouched')
  t.same(keepPatterns({ spec: 'text' }, ['spec.name']), {}, 'the wrong type keeps nothing')
  t.same(keepPatterns({ spec: null }, ['spec']), { spec: null }, 'a whole null is kept')
})
