/**
 * `npm run upstream` (test/e2e/toolhive/upstream.ts): which releases count, the newest of a list,
 * the line it prints, and the proxy conversation against a local stand-in for the Go module proxy
 * (answers, HTTP errors, no answer in time). Here, not under test/e2e/, because the unit run
 * leaves test/e2e/ out (.taprc) and nothing here needs a cluster or the network.
 */

import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import {
  DEFAULT_PROXY,
  compareReleases,
  failureLine,
  newestUpstream,
  proxyFrom,
  reasonOf,
  releaseOf,
  releasesOfList,
  upstreamLine,
} from '../e2e/toolhive/upstream.ts'

t.test('the proxy is GOPROXY’s first entry unless that is direct or off', async (t) => {
  t.equal(proxyFrom(undefined), DEFAULT_PROXY)
  t.equal(proxyFrom(''), DEFAULT_PROXY)
  t.equal(proxyFrom('https://proxy.golang.org,direct'), 'https://proxy.golang.org')
  t.equal(
    proxyFrom('https://goproxy.example.com/|https://b.example'),
    'https://goproxy.example.com',
  )
  t.equal(proxyFrom('direct'), DEFAULT_PROXY)
  t.equal(proxyFrom('off'), DEFAULT_PROXY)
})

t.test('only vX.Y.Z is a release, compared number by number', async (t) => {
  t.same(releaseOf('v0.63.0'), [0, 63, 0])
  for (const other of ['v0.64.0-rc.1', 'v2.0.0+incompatible', 'v0.0.0-20260101-abcdef', '0.1.0'])
    t.equal(releaseOf(other), undefined, other)
  t.ok(compareReleases('v0.9.0', 'v0.10.0') < 0, 'numeric, not lexical')
  t.ok(compareReleases('v1.0.0', 'v0.99.99') > 0)
  t.equal(compareReleases('v0.63.0', 'v0.63.0'), 0)
  t.throws(() => compareReleases('v1.0.0-rc.1', 'v1.0.0'), /not a release: v1.0.0-rc.1/)
})

t.test('the list, in no order, newest first and releases only', async (t) => {
  t.same(releasesOfList('v0.9.0\nv0.63.0\nv0.64.0-rc.1\n\nv0.10.2\n'), [
    'v0.63.0',
    'v0.10.2',
    'v0.9.0',
  ])
  t.same(releasesOfList(''), [])
})

t.test('the line says when upstream is newer than the suite tests', async (t) => {
  const pinned = ['v0.63.0', 'v0.33.0']
  t.equal(
    upstreamLine('v0.64.1', pinned),
    'upstream: newest github.com/stacklok/toolhive release v0.64.1; the e2e suite pins v0.63.0 (newest tested), v0.33.0 (oldest): v0.64.1 is newer than the suite tests: add it to OPERATOR_RELEASES (test/e2e/toolhive/releases.ts)',
  )
  t.equal(
    upstreamLine('v0.63.0', ['v0.33.0', 'v0.63.0']),
    'upstream: newest github.com/stacklok/toolhive release v0.63.0; the e2e suite pins v0.63.0 (newest tested), v0.33.0 (oldest): the suite tests the newest',
  )
  t.match(
    upstreamLine('v0.62.0', pinned),
    /: the suite tests a release newer than this proxy lists$/,
  )
  t.match(upstreamLine('v0.63.0', ['v0.63.0']), /pins v0\.63\.0 \(newest tested, oldest\)/)
  t.match(upstreamLine('v0.63.0', []), /the e2e suite pins no release/)
  t.equal(
    failureLine('https://proxy.example', 'no answer within 10 s'),
    "upstream: could not ask https://proxy.example for github.com/stacklok/toolhive's releases: no answer within 10 s",
  )
})

t.test('the proxy conversation', async (t) => {
  // A stand-in proxy: path → [status, body]; a path it does not know is never answered.
  let answers: Record<string, [number, string]> = {}
  const server = createServer((request, response) => {
    const answer = answers[request.url ?? '']
    if (answer === undefined) return
    response.writeHead(answer[0]).end(answer[1])
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const proxy = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const list = '/github.com/stacklok/toolhive/@v/list'
  const latest = '/github.com/stacklok/toolhive/@latest'

  answers = { [list]: [200, 'v0.62.0\nv0.64.1\nv0.65.0-rc.1\nv0.63.0\n'] }
  t.equal(await newestUpstream(proxy), 'v0.64.1', 'the newest release of the list')

  answers = { [list]: [200, ''], [latest]: [200, '{"Version":"v0.64.1","Time":"x"}'] }
  t.equal(await newestUpstream(proxy), 'v0.64.1', '@latest when the list holds no release')

  answers = { [list]: [200, 'v0.65.0-rc.1\n'], [latest]: [200, '{"Version":"v0.65.0-rc.1"}'] }
  await t.rejects(newestUpstream(proxy), /no release in @v\/list or @latest \(v0\.65\.0-rc\.1\)/)

  answers = { [list]: [200, ''], [latest]: [404, ''] }
  await t.rejects(
    newestUpstream(proxy),
    /no release in @v\/list, and @latest: GET @latest: HTTP 404/,
  )

  answers = { [list]: [410, 'gone'] }
  await t.rejects(newestUpstream(proxy), /GET @v\/list: HTTP 410/)

  answers = {}
  const silent = await newestUpstream(proxy, 200).catch((error: unknown) => error)
  t.equal(reasonOf(silent, 200), 'no answer within 0.2 s', 'bounded by the timeout')

  // A port nothing listens on: the one a closed server had.
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise((resolve) => closed.close(resolve))
  const refused = await newestUpstream(`http://127.0.0.1:${port}`).catch((error: unknown) => error)
  t.equal(reasonOf(refused, 10_000), 'fetch failed (ECONNREFUSED)', 'fetch’s cause is named')
  t.equal(reasonOf('odd', 10_000), 'odd')
})
