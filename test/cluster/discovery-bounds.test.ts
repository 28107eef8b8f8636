/**
 * API discovery read within bounds: a group's versions are read a few at a time however many it
 * lists, and past a cap not at all; each name the API server sent reaches a request path as one
 * escaped segment, so `v1/../../x` or `a?b` cannot change which path is asked for. The same goes
 * for every resource path built from names (resourcePath).
 */

import t from 'tap'
import type { Test } from 'tap'
import {
  DISCOVERY_CONCURRENCY,
  MAX_DISCOVERY_VERSIONS,
  discoverServedKinds,
} from '../../src/cluster/kind-discovery.ts'
import type { KubeApi } from '../../src/cluster/kube-api.ts'
import { pathSegment, resourcePath } from '../../src/cluster/resources.ts'
import { loopbackKubeApi } from '../helpers/fake-kube-api.ts'
import { loopbackServer } from '../helpers/loopback-server.ts'

const GROUP = '/apis/toolhive.stacklok.dev'

interface Seen {
  /** Each request's path as sent, undecoded. */
  readonly paths: string[]
  maxInFlight: number
}

/** A group listing `versions`; each version's list answered after 20 ms, with nothing in it. */
async function discoveryServer(t: Test, versions: readonly string[]): Promise<[KubeApi, Seen]> {
  const seen: Seen = { paths: [], maxInFlight: 0 }
  let inFlight = 0
  const port = await loopbackServer(t, (request, response) => {
    request.resume()
    const path = request.url ?? ''
    seen.paths.push(path)
    response.setHeader('content-type', 'application/json')
    if (path === GROUP) {
      const entries = versions.map((version) => ({ version }))
      response.end(JSON.stringify({ kind: 'APIGroup', versions: entries }))
      return
    }
    inFlight++
    seen.maxInFlight = Math.max(seen.maxInFlight, inFlight)
    setTimeout(() => {
      inFlight--
      response.end(JSON.stringify({ kind: 'APIResourceList', resources: [] }))
    }, 20)
  })
  const api = loopbackKubeApi(port)
  t.teardown(() => {
    api.close()
  })
  return [api, seen]
}

t.test('a group of many versions is read a few versions at a time', async (t) => {
  const versions = Array.from({ length: MAX_DISCOVERY_VERSIONS }, (_, i) => `v${i}`)
  const [api, seen] = await discoveryServer(t, versions)
  t.same(await discoverServedKinds(api), new Map())
  t.equal(seen.paths.length, 1 + MAX_DISCOVERY_VERSIONS, 'every version read')
  t.equal(seen.maxInFlight, DISCOVERY_CONCURRENCY, `at most ${DISCOVERY_CONCURRENCY} at once`)
  t.equal(DISCOVERY_CONCURRENCY, 4)
})

t.test('past the cap, no version is read: an error saying why', async (t) => {
  const versions = Array.from({ length: 5_000 }, (_, i) => `v${i}`)
  const [api, seen] = await discoveryServer(t, versions)
  await t.rejects(discoverServedKinds(api), {
    message: `${GROUP} lists 5000 versions, more than the ${MAX_DISCOVERY_VERSIONS} read`,
  })
  t.same(seen.paths, [GROUP])
})

t.test('a version from the API server is one escaped segment of the path', async (t) => {
  const [api, seen] = await discoveryServer(t, ['v1/../../x', 'a?b', 'c#d', 'e%2Ff'])
  await discoverServedKinds(api)
  t.same(seen.paths.slice(1).sort(), [
    `${GROUP}/a%3Fb`,
    `${GROUP}/c%23d`,
    `${GROUP}/e%252Ff`,
    `${GROUP}/v1%2F..%2F..%2Fx`,
  ])
})

t.test('a version that cannot be a segment is an error, not another path', async (t) => {
  for (const version of ['..', '.', '']) {
    const [api, seen] = await discoveryServer(t, [version])
    await t.rejects(discoverServedKinds(api), {
      message: `${JSON.stringify(version)} cannot be a segment of a request path`,
    })
    t.same(seen.paths, [GROUP], `${JSON.stringify(version)}: nothing else asked for`)
  }
})

t.test('resourcePath escapes every name in it', async (t) => {
  const hostile = {
    kind: 'MCPServer',
    group: 'toolhive.stacklok.dev',
    version: 'v1?watch=true',
    plural: 'mcpservers/../../../api/v1/secrets',
    namespaced: true,
  }
  t.equal(
    resourcePath(hostile),
    '/apis/toolhive.stacklok.dev/v1%3Fwatch%3Dtrue/mcpservers%2F..%2F..%2F..%2Fapi%2Fv1%2Fsecrets',
  )
  t.equal(
    resourcePath(
      { ...hostile, version: 'v1', plural: 'mcpservers' },
      { namespace: 'a/b', name: 'c?d' },
    ),
    '/apis/toolhive.stacklok.dev/v1/namespaces/a%2Fb/mcpservers/c%3Fd',
  )
  t.equal(
    resourcePath({ ...hostile, group: '', version: 'v1/..', plural: 'configmaps' }),
    '/api/v1%2F../configmaps',
  )
  t.throws(
    () =>
      resourcePath(
        { ...hostile, version: 'v1', plural: 'mcpservers' },
        { namespace: 'ns', name: '..' },
      ),
    {
      message: '".." cannot be a segment of a request path',
    },
  )
  t.equal(pathSegment('%'), '%25')
})
