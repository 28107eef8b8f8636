/** Copy and diff at declared write paths: what is shared, what is copied, which patch comes out. */

import t from 'tap'
import { applyPatch } from '../../src/admission/patch.ts'
import { copyForWrites, diffAtWrites } from '../../src/admission/regions.ts'
import type { WritePath } from '../../src/admission/regions.ts'
import type { JsonObject } from '../../src/policy/kube.ts'

const ENV: WritePath = ['spec', 'containers', { name: 'proxy' }, 'env']

function deployment(): JsonObject {
  return {
    metadata: { name: 'd', labels: { a: '1' } },
    spec: {
      replicas: 3,
      containers: [
        { name: 'proxy', image: 'p', env: [{ name: 'A', value: '1' }] },
        { name: 'side', image: 's', env: [{ name: 'B', value: '2' }] },
      ],
    },
  }
}

t.test('only the objects on the paths are copied; the rest is shared', async (t) => {
  const original = deployment()
  const copy = copyForWrites(original, [ENV, ['spec', 'replicas']])
  const [proxy, side] = (copy.spec as { containers: JsonObject[] }).containers
  const [originalProxy, originalSide] = (original.spec as { containers: JsonObject[] }).containers
  t.not(copy, original)
  t.not(copy.spec, original.spec)
  t.not(proxy, originalProxy, 'the selected container is copied')
  t.not(proxy!.env, originalProxy!.env, 'and the env at the end of the path')
  t.equal(side, originalSide, 'the other container is shared')
  t.equal(copy.metadata, original.metadata, 'metadata is shared')
  ;(proxy!.env as unknown[]).push({ name: 'C', value: '3' })
  ;(copy.spec as JsonObject).replicas = 1
  t.same(original, deployment(), 'writes on the paths never reach the original')
  t.same(diffAtWrites(original, copy, [ENV, ['spec', 'replicas']]), [
    { op: 'add', path: '/spec/containers/0/env/1', value: { name: 'C', value: '3' } },
    { op: 'replace', path: '/spec/replicas', value: 1 },
  ])
})

t.test('a parent created for two paths is added once, whole', async (t) => {
  const original: JsonObject = { kind: 'X' }
  const paths: WritePath[] = [
    ['metadata', 'annotations'],
    ['metadata', 'labels'],
  ]
  const copy = copyForWrites(original, paths)
  copy.metadata = { annotations: { a: '1' }, labels: { b: '2' } }
  const patch = diffAtWrites(original, copy, paths)
  t.same(patch, [{ op: 'add', path: '/metadata', value: copy.metadata }])
  t.same(applyPatch(original, patch), copy)
})

t.test('a value replaced on the way is replaced whole', async (t) => {
  const original: JsonObject = { metadata: 'not an object' }
  const paths: WritePath[] = [['metadata', 'annotations']]
  const copy = copyForWrites(original, paths)
  copy.metadata = { annotations: { a: '1' } }
  t.same(diffAtWrites(original, copy, paths), [
    { op: 'replace', path: '/metadata', value: { annotations: { a: '1' } } },
  ])
})

t.test('`*` selects every item; a list whose length changed is diffed whole', async (t) => {
  const original = deployment()
  const all: WritePath[] = [['spec', 'containers', '*', 'env']]
  const copy = copyForWrites(original, all)
  const containers = (copy.spec as { containers: JsonObject[] }).containers
  containers[1]!.env = []
  t.same(diffAtWrites(original, copy, all), [{ op: 'remove', path: '/spec/containers/1/env/0' }])
  containers.pop()
  const patch = diffAtWrites(original, copy, all)
  t.same(patch, [{ op: 'remove', path: '/spec/containers/1' }])
  t.same(applyPatch(original, patch), copy)
})

t.test('keys are escaped as JSON pointers', async (t) => {
  const original: JsonObject = { metadata: { annotations: {} } }
  const paths: WritePath[] = [['metadata', 'annotations']]
  const copy = copyForWrites(original, paths)
  ;(copy.metadata as { annotations: JsonObject }).annotations['example.com/a~b'] = 'x'
  t.same(diffAtWrites(original, copy, paths), [
    { op: 'add', path: '/metadata/annotations/example.com~1a~0b', value: 'x' },
  ])
})
