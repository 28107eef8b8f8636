/**
 * API discovery as kube-apiserver answers it, for fake API servers (unit tests, benchmarks):
 * `GET /apis/<group>` (an APIGroup: its versions, the first preferred) and
 * `GET /apis/<group>/<version>` (an APIResourceList: each resource and its status subresource).
 */

import type { ViewResource } from '../../src/cluster/resources.ts'

/** The answer to a discovery `path` for a cluster serving `resources`; undefined for any other path. */
export function discoveryAnswer(
  resources: readonly ViewResource[],
  path: string,
): { readonly status: number; readonly body: unknown } | undefined {
  const [, apis, group, version, ...rest] = path.split('/')
  if (apis !== 'apis' || group === undefined || group === '' || rest.length > 0) return undefined
  const inGroup = resources.filter((resource) => resource.group === group)
  const versions = [...new Set(inGroup.map((resource) => resource.version))]
  if (versions.length === 0 || (version !== undefined && !versions.includes(version))) {
    return {
      status: 404,
      body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 },
    }
  }
  if (version === undefined) {
    const entries = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }))
    return {
      status: 200,
      body: {
        kind: 'APIGroup',
        apiVersion: 'v1',
        name: group,
        versions: entries,
        preferredVersion: entries[0],
      },
    }
  }
  const listed = inGroup
    .filter((resource) => resource.version === version)
    .flatMap(({ plural, kind, namespaced }) => [
      { name: plural, kind, namespaced, verbs: ['get', 'list', 'watch'] },
      { name: `${plural}/status`, kind, namespaced, verbs: ['get', 'patch'] },
    ])
  return {
    status: 200,
    body: {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: `${group}/${version}`,
      resources: listed,
    },
  }
}
