/**
 * `mcp-admission release-status`: removes the status the reconciler wrote that outlives it. Its
 * conditions say what the object is and are harmless once it is gone, but a
 * `validationStatus: Invalid` keeps failing every VirtualMCPServer that references the definition
 * after the service that judged it is uninstalled. For every object of a kind whose status is a
 * validation verdict (the kind table's `validationStatus`), in every namespace, whose
 * managedFields show the reconciler's field manager owning `status.validationStatus`, it removes
 * `validationStatus` and `validationErrors` (a merge patch conditional on the resourceVersion it
 * listed, as the reconciler removes its own `Invalid`: reconciler/status-client.ts). Idempotent: a
 * second run finds nothing of ours.
 *
 * Exit 0 when every object of ours was released (or there were none), 1 when a write failed, 2
 * when the cluster cannot be used (no credentials, discovery or a list failed).
 */

import { KubeApi } from '../cluster/kube-api.ts'
import { discoverServedKinds } from '../cluster/kind-discovery.ts'
import type { ViewResource } from '../cluster/resources.ts'
import { VALIDATION_STATUS_KINDS } from '../policy/kinds.ts'
import { statusFieldManagers } from '../policy/kube/field-ownership.ts'
import { VALIDATION_STATUS_FIELDS } from '../policy/composite-status.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { renderText, terminalText } from '../policy/messages/render.ts'
import { FIELD_MANAGER, removeStatusFields } from '../reconciler/status-client.ts'
import { clusterCredentials, eachPage, unreachable } from './cluster-command.ts'
import { EXIT } from './io.ts'
import type { CliIo } from './io.ts'

interface ReleaseStatusOptions {
  readonly kubeconfig?: string | undefined
}

/** A page of definitions with their managedFields over a slow link: as long as audit allows. */
const REQUEST_TIMEOUT_MS = 60_000

export async function releaseStatusCommand(
  options: ReleaseStatusOptions,
  io: CliIo,
): Promise<number> {
  const credentials = await clusterCredentials('release-status', options.kubeconfig, io)
  const api = new KubeApi(credentials, {
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    proxyStepTimeoutMs: io.proxyStepTimeoutMs,
  })
  try {
    const served = await discoverServedKinds(api).catch((error: unknown) => {
      throw unreachable(credentials, 'read API discovery', error)
    })
    const counts: Counts = { checked: 0, released: 0, failed: 0 }
    for (const kind of VALIDATION_STATUS_KINDS) {
      const resource = served.get(kind)
      if (!resource) continue
      await eachPage(api, credentials, resource, undefined, async ({ objects, malformed }) => {
        // An item without a name (or not an object) holds no verdict a write could address.
        counts.checked += malformed.length
        for (const object of objects) {
          counts.checked++
          const result = await release(api, resource, object)
          if (result === 'released') {
            counts.released++
            io.stdout.write(`released ${subject(object)}\n`)
          } else if (result !== 'not ours') {
            counts.failed++
            io.stderr.write(`mcp-admission: cannot release ${subject(object)}: ${result.failed}\n`)
          }
        }
      })
    }
    io.stdout.write(`${summary(counts)}\n`)
    return counts.failed > 0 ? EXIT.denied : EXIT.ok
  } finally {
    api.close()
  }
}

type Released = 'released' | 'not ours' | { readonly failed: string }

/** Removes the verdict from `object` when the reconciler owns its `validationStatus`. */
async function release(
  api: KubeApi,
  resource: ViewResource,
  object: KubeObject,
): Promise<Released> {
  // A listed object always has a name and a namespace (listPages hands over no other).
  const { name, namespace, managedFields, resourceVersion } = object.metadata ?? {}
  if (!ownedAlone(managedFields)) return 'not ours'
  const outcome = await removeStatusFields(
    api,
    resource,
    {
      name: String(name),
      namespace: String(namespace),
      resourceVersion: typeof resourceVersion === 'string' ? resourceVersion : '',
    },
    VALIDATION_STATUS_FIELDS,
  )
  switch (outcome.result) {
    case 'written':
      return 'released'
    // Deleted since the list: nothing of ours is left on it.
    case 'gone':
      return 'not ours'
    case 'conflict':
      return { failed: renderText(`conflict on ${outcome.fields.join(', ')}`) }
    case 'retry':
    case 'refused':
      return { failed: renderText(outcome.reason) }
  }
}

function subject(object: KubeObject): string {
  const { name, namespace } = object.metadata ?? {}
  return `${String(object.kind)} ${terminalText(String(namespace))}/${terminalText(String(name))}`
}

interface Counts {
  checked: number
  released: number
  failed: number
}

function summary({ checked, released, failed }: Counts): string {
  const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`
  if (released === 0 && failed === 0)
    return `nothing to release: no validationStatus written by ${FIELD_MANAGER} (${plural(checked, 'object')} checked)`
  const failures = failed > 0 ? `, ${failed} failed` : ''
  return `released ${plural(released, 'object')}${failures} (${checked} checked)`
}

/**
 * Whether the verdict is the reconciler's alone: it owns `validationStatus`, and no other manager
 * owns either field (one that set the same verdict keeps it standing, as the reconciler leaves it).
 */
function ownedAlone(managedFields: unknown): boolean {
  const owners = VALIDATION_STATUS_FIELDS.map((field) => statusFieldManagers(managedFields, field))
  return (
    owners[0]?.has(FIELD_MANAGER) === true &&
    owners.every((managers) => [...managers].every((manager) => manager === FIELD_MANAGER))
  )
}
