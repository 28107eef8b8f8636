import t from 'tap'
import { diff } from '../../src/admission/patch.ts'
import { applyPatch } from '../helpers/apply-patch.ts'

t.test('diff then applyPatch reproduces the mutated document', async (t) => {
  const original = { a: { b: [1, 2, 3], 'x/y~z': 'v' }, gone: true }
  const mutated = { a: { b: [1, 4], 'x/y~z': 'w', added: { deep: [] } } }
  const patched = applyPatch(original, diff(original, mutated))
  t.same(patched, mutated)
  t.same(original, { a: { b: [1, 2, 3], 'x/y~z': 'v' }, gone: true }, 'the input is not modified')
})

t.test('a map key named __proto__ is stored as a key, as the API server would', async (t) => {
  // Regression: fast-json-patch's applyPatch refused (or, unguarded, reassigned the prototype).
  const original = JSON.parse('{"labels": {"a": "1"}}') as object
  const mutated = JSON.parse('{"labels": {"a": "1", "__proto__": "x"}}') as object
  const patch = diff(original, mutated)
  t.same(patch, [{ op: 'add', path: '/labels/__proto__', value: 'x' }])
  const patched = applyPatch(original, patch) as { labels: Record<string, unknown> }
  t.ok(Object.hasOwn(patched.labels, '__proto__'))
  t.equal(patched.labels['__proto__'], 'x')
  t.equal(Object.getPrototypeOf(patched.labels), Object.prototype)
})

t.test('a patch on a missing parent fails loudly', async (t) => {
  t.throws(() => applyPatch({}, [{ op: 'add', path: '/no/such', value: 1 }]), /no such parent/)
})
