/** releaseFreeHeap gives the pages of a load's garbage back, with no Node flag set. */

import t from 'tap'
import { releaseFreeHeap } from '../../src/cli/heap.ts'

/** Builds and drops ~30 MB of objects, returning the heap size while they were alive. */
function makeGarbage(): number {
  const garbage = Array.from({ length: 300_000 }, (_, i) => ({ i, text: `item ${i}` }))
  return garbage.length > 0 ? process.memoryUsage().heapTotal : 0
}

t.test('the heap shrinks after garbage is released', async (t) => {
  const grown = makeGarbage()
  t.equal(releaseFreeHeap(), true)
  const after = process.memoryUsage().heapTotal
  t.ok(after < grown * 0.8, `heap total ${grown} → ${after} bytes`)
})
