import t from 'tap'
import { cloneJson } from '../../src/admission/clone.ts'

t.test('a deep, independent copy of JSON data', async (t) => {
  const original = JSON.parse('{"a":[1,{"b":null,"c":"x"},[true]],"d":{"e":{}},"n":1.5}') as Record<
    string,
    any
  >
  const copy = cloneJson(original)
  t.same(copy, original)
  copy.a[1].c = 'changed'
  copy.d.e.f = 1
  t.equal(original.a[1].c, 'x', 'the original is untouched')
  t.same(original.d.e, {})
  t.equal(cloneJson(null), null)
  t.equal(cloneJson('s'), 's')
})

t.test('a key named __proto__ is copied as an own property', async (t) => {
  const copy = cloneJson(JSON.parse('{"labels":{"__proto__":"x","a":"b"}}') as { labels: object })
  t.ok(Object.hasOwn(copy.labels, '__proto__'))
  t.equal(Object.getPrototypeOf(copy.labels), Object.prototype)
  t.same(Object.keys(copy.labels), ['__proto__', 'a'])
})

t.test('nesting deeper than the stack allows for recursion', async (t) => {
  const depth = 200_000
  const text = '['.repeat(depth) + ']'.repeat(depth)
  const copy = cloneJson(JSON.parse(text) as unknown[])
  let level = 0
  for (let node: unknown = copy; Array.isArray(node) && node.length > 0; node = node[0]) level++
  t.equal(level, depth - 1)
})
