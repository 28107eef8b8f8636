/**
 * Which ToolHive kinds the cluster serves, and at which version: the pure half of discovery
 * (`kind-discovery.ts` does the reads). The kind table says what a kind may be; the API server
 * says whether and where it is served now (a partial CRD install, a release that moved a kind to
 * another version), and the service reads, watches and writes status only there.
 */

import { TOOLHIVE_GROUP, TOOLHIVE_KIND_TABLE, entryOf, isToolHiveKind } from '../policy/kinds.ts'
import type { ToolHiveKind } from '../policy/kinds.ts'
import { isRecord } from '../policy/kube/object.ts'
import type { ViewResource } from './resources.ts'

/** Where a served ToolHive kind is read, watched and has its status written. */
export type ServedResource = ViewResource & { readonly kind: ToolHiveKind }

/** kind → the resource the service reads it at; a kind absent from the map is not served. */
export type ServedKinds = ReadonlyMap<ToolHiveKind, ServedResource>

/** Fixed resources (a view given them: tests, benchmarks) as a served state; non-ToolHive ones dropped. */
export function servedKindsOf(resources: readonly ViewResource[]): ServedKinds {
  const served = new Map<ToolHiveKind, ServedResource>()
  for (const resource of resources) {
    const { kind } = resource
    if (isToolHiveKind(kind)) served.set(kind, { ...resource, kind })
  }
  return served
}

/**
 * The group's versions, best first: the API server's preferred version, then the rest in the
 * order it lists them (its version priority: GA, then beta, then alpha, newest first). Each kind
 * is read at the first of these that serves it: with the CRDs of the releases tested (v0.33.0,
 * v0.63.0), each kind's storage version.
 * `group` is the body of `GET /apis/<group>` (an APIGroup); anything else gives none.
 */
export function discoveryVersions(group: unknown): string[] {
  if (!isRecord(group) || !Array.isArray(group.versions)) return []
  const listed = group.versions.flatMap((entry: unknown) =>
    isRecord(entry) && typeof entry.version === 'string' ? [entry.version] : [],
  )
  const preferred = isRecord(group.preferredVersion) ? group.preferredVersion.version : undefined
  return typeof preferred === 'string' && listed.includes(preferred)
    ? [preferred, ...listed.filter((version) => version !== preferred)]
    : listed
}

/**
 * The kinds the group serves, each at the first of `versions` (best first) whose resource list
 * names it. `resourceLists` holds the body of `GET /apis/<group>/<version>` (an APIResourceList)
 * for each version; a version missing from it (gone between the two reads) serves nothing.
 * Subresources (`mcpservers/status`) and kinds outside the table are ignored.
 */
export function servedFromDiscovery(
  versions: readonly string[],
  resourceLists: ReadonlyMap<string, unknown>,
): ServedKinds {
  const served = new Map<ToolHiveKind, ServedResource>()
  for (const version of versions) {
    const list = resourceLists.get(version)
    const resources = isRecord(list) && Array.isArray(list.resources) ? list.resources : []
    for (const resource of resources as unknown[]) {
      if (!isRecord(resource) || typeof resource.name !== 'string') continue
      if (resource.name.includes('/')) continue
      const kind = resource.kind
      if (!isToolHiveKind(kind) || served.has(kind)) continue
      served.set(kind, {
        kind,
        group: TOOLHIVE_GROUP,
        version,
        plural: resource.name,
        namespaced: resource.namespaced === true,
      })
    }
  }
  return served
}

/** How one kind's serving changed: absent `before` is newly served, absent `after` gone. */
export interface ServedChange {
  readonly kind: ToolHiveKind
  readonly before?: ViewResource | undefined
  readonly after?: ViewResource | undefined
}

/** The kinds whose serving differs between two states (version, plural or scope), table order. */
export function servedChanges(before: ServedKinds, after: ServedKinds): ServedChange[] {
  const changes: ServedChange[] = []
  for (const { kind } of TOOLHIVE_KIND_TABLE) {
    const was = before.get(kind)
    const is = after.get(kind)
    if (was === undefined && is === undefined) continue
    if (was && is && sameResource(was, is)) continue
    changes.push({ kind, before: was, after: is })
  }
  return changes
}

/** The same version, plural and scope: nothing to relist. */
export function sameResource(a: ViewResource, b: ViewResource): boolean {
  return a.version === b.version && a.plural === b.plural && a.namespaced === b.namespaced
}

/**
 * One line for people: what is now on or off and why (`MCPWebhookConfig is not served by the
 * cluster (no CRD at any version): not watched; ...`). `what` names the consequences.
 */
export function describeServedChange(change: ServedChange): string {
  const { kind, before, after } = change
  const at = (resource: ViewResource) => `${resource.group}/${resource.version}`
  if (after === undefined) {
    const was = before === undefined ? '' : ` (was ${at(before)})`
    return `${kind} is not served by the cluster${was}: not listed or watched; ${entryOf(kind).whenNotServed}`
  }
  if (before === undefined)
    return `${kind} is served at ${at(after)}: listed and watched; its rules are on`
  return `${kind} moved from ${at(before)} to ${at(after)}: read and watched at ${after.version}`
}
