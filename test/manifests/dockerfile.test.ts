/**
 * What the built image cannot show. The end-to-end suite builds the Dockerfile and checks the
 * image (test/e2e/image.test.ts, chart-pod.test.ts), but here, with the public registries out of
 * reach, on bases passed as build arguments: the defaults, which users build on, are read here.
 */

import { readFileSync } from 'node:fs'
import t from 'tap'
import { globalArgs } from '../e2e/image/build.ts'

const root = new URL('../../', import.meta.url)
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8')
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  engines: { node: string }
}
const args = globalArgs(dockerfile)

t.test('the default bases are the Node major package.json requires', async (t) => {
  const major = /(\d+)/.exec(pkg.engines.node)?.[1]
  t.equal(args['NODE_MAJOR'], major)
  t.equal(args['BUILD_BASE'], `docker.io/library/node:${major}-bookworm-slim`)
  t.equal(
    args['RUNTIME_BASE'],
    `gcr.io/distroless/nodejs${major}-debian12:nonroot`,
    'no shell at run time',
  )
})

t.test('every stage is built on one of the two bases', async (t) => {
  const froms = [...dockerfile.matchAll(/^FROM\s+(\S+)/gim)].map((match) => match[1])
  t.same(froms, ['${BUILD_BASE}', '${BUILD_BASE}', '${RUNTIME_BASE}'])
  t.notMatch(dockerfile, /^# syntax=/m, 'no frontend image to pull before the build')
})
