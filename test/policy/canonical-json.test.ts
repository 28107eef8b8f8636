import t from 'tap'
import { MAX_DEPTH, canonicalJson } from '../../src/policy/canonical-json.ts'

t.test('the canonical form', async (t) => {
  const cases: [name: string, value: unknown, expected: string][] = [
    ['scalars', [null, true, false, 0, -0, 1.5, 1e21, 'x'], '[null,true,false,0,0,1.5,1e+21,"x"]'],
    ['keys sorted, no whitespace', { b: 1, a: { d: [], c: {} } }, '{"a":{"c":{},"d":[]},"b":1}'],
    ['arrays keep their order', [3, 1, 2], '[3,1,2]'],
    // U+FF61 is above the surrogates in UTF-16, but below U+1F600 in code points.
    [
      'keys by code point',
      { '\u{1F600}': 1, '\uFF61': 2, a: 3 },
      '{"a":3,"\uFF61":2,"\u{1F600}":1}',
    ],
    ['escapes as JSON.stringify', { 'q"': 'a\nb\u0001' }, '{"q\\"":"a\\nb\\u0001"}'],
    ['a lone surrogate is escaped', '\uD800', '"\\ud800"'],
    [
      '__proto__ is an ordinary key',
      JSON.parse('{"__proto__":{"x":1},"a":0}'),
      '{"__proto__":{"x":1},"a":0}',
    ],
    ['unrepresentable members', { a: undefined, b: () => 0, c: [undefined] }, '{"c":[null]}'],
    ['non-finite numbers', [Number.NaN, Infinity], '[null,null]'],
    ['a bigint', 10n ** 20n, '100000000000000000000'],
    ['nothing at all', undefined, 'null'],
    ['empty containers', [{}, []], '[{},[]]'],
  ]
  for (const [name, value, expected] of cases) t.equal(canonicalJson(value), expected, name)
})

t.test('matches JSON.stringify on plain JSON with sorted keys', async (t) => {
  const value = { z: [1, { y: 'é', x: null }], a: { b: true } }
  t.equal(canonicalJson(value), JSON.stringify({ a: { b: true }, z: [1, { x: null, y: 'é' }] }))
})

t.test('nesting deeper than MAX_DEPTH is a marker, not a stack overflow', async (t) => {
  let deep: unknown = 0
  for (let i = 0; i < 200_000; i++) deep = i % 2 === 0 ? [deep] : { k: deep }
  const text = canonicalJson(deep)
  // Levels alternate {"k": …} (6 characters) and […] (2) from the outside in, down to the marker.
  const levels = MAX_DEPTH / 2
  t.equal(text, `${'{"k":['.repeat(levels)}"[Object]"${']}'.repeat(levels)}`)
  let fits: unknown = 0
  for (let i = 0; i < MAX_DEPTH; i++) fits = [fits]
  t.equal(
    canonicalJson(fits),
    `${'['.repeat(MAX_DEPTH)}0${']'.repeat(MAX_DEPTH)}`,
    'MAX_DEPTH fits',
  )
})

t.test('a cycle (impossible in JSON) ends rather than hanging', async (t) => {
  const cyclic: Record<string, unknown> = { a: 1 }
  cyclic['self'] = cyclic
  const shared = { v: 1 }
  t.equal(canonicalJson(cyclic), '{"a":1,"self":null}')
  t.equal(canonicalJson([shared, shared]), '[{"v":1},{"v":1}]', 'shared, not cyclic, is kept')
})
