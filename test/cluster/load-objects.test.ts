/** Reading object files: documents one at a time, Lists expanded, errors that say where. */

import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import {
  ObjectFileError,
  loadObjects,
  parseObjects,
  readObjects,
} from '../../src/cluster/load-objects.ts'

t.test('multi-document YAML, Lists and empty documents', async (t) => {
  const text = [
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}',
    '',
    'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}',
  ].join('\n---\n')
  const names = parseObjects(text, 'x.yaml').map((o) => o.metadata?.name)
  t.same(names, ['a', 'b', 'c'])
})

t.test('a syntax error names the file, the document, the line and the column', async (t) => {
  const text = 'kind: ConfigMap\n---\nkind: ConfigMap\nmetadata: {name: [}\n'
  t.throws(() => parseObjects(text, 'broken.yaml'), {
    name: 'ObjectFileError',
    message: /^broken\.yaml, document 2: .* at line 4, column \d+$/,
  })
})

t.test('an alias that contains itself is refused, not followed', async (t) => {
  const text = 'kind: ConfigMap\ndata: &loop\n  self: *loop\n'
  t.throws(() => parseObjects(text, 'loop.yaml'), {
    name: 'ObjectFileError',
    message: /^loop\.yaml, document 1: not a JSON document/,
  })
})

t.test('a directory is read file by file, in name order, JSON by the fast path', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'objects-'))
  await writeFile(join(dir, 'b.yaml'), 'kind: ConfigMap\nmetadata: {name: from-yaml}\n')
  await writeFile(
    join(dir, 'a.json'),
    JSON.stringify({
      kind: 'List',
      items: [{ kind: 'ConfigMap', metadata: { name: 'from-json' } }],
    }),
  )
  await writeFile(join(dir, 'notes.txt'), 'not an object file')
  const streamed: unknown[] = []
  for await (const object of readObjects([dir])) streamed.push(object.metadata?.name)
  t.same(streamed, ['from-json', 'from-yaml'])
  t.same(
    (await loadObjects([dir])).map((o) => o.metadata?.name),
    streamed,
  )
  await t.rejects(loadObjects([join(dir, 'missing.yaml')]), ObjectFileError)
})

t.test('values are plain JSON data with strings of their own', async (t) => {
  // Parsed strings are copied out of the file's text (a kept slice would pin the whole text);
  // what is observable is that the objects are plain JSON, identical to a JSON parse.
  const [object] = parseObjects(
    'kind: ConfigMap\ndata:\n  a: "1"\n  b: [1, true, null]\n',
    'x.yaml',
  )
  t.same(object, { kind: 'ConfigMap', data: { a: '1', b: [1, true, null] } })
  t.equal(Object.getPrototypeOf(object), Object.prototype)
})
