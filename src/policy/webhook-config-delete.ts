/**
 * DESIGN §5.1 DELETE of an MCPWebhookConfig that MCPServers in its namespace still reference.
 * Recent operators protect such a config with a finalizer: the delete is accepted and the object
 * stays until the last reference is gone, so a bundle deletes in any order (`kubectl delete -f`,
 * Helm uninstall, GitOps pruning). Only where nothing protects it (an older operator) is it denied.
 */

import { violation } from './messages/field-errors.ts'
import { isRecord } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'
import { WEBHOOK_CONFIG_FINALIZER } from './names.ts'
import type { Referrer } from './references.ts'
import type { ValidationResult } from './result.ts'

/**
 * Allows deleting the config `name` (stored as `config`) with a warning naming its `referrers`
 * (the objects in its namespace whose references name it: the kind table's) when the operator's
 * finalizer holds it; denies otherwise. The name is the request's: a review may carry no old
 * object. The violation is on the whole object (field `''`): nothing in the deleted object is
 * wrong, its references elsewhere are.
 */
export function validateWebhookConfigDelete(
  name: string,
  config: KubeObject | undefined,
  referrers: readonly Referrer[],
): ValidationResult {
  if (referrers.length === 0) return { violations: [], warnings: [] }
  // Sorted and de-duplicated (one per object, whatever its fields) so the message is stable
  // whatever order the list came in.
  const names = [...new Set(referrers.map(({ kind, name }) => `${kind} ${name}`))].sort()
  const workloads = names.join(', ')
  if (hasFinalizer(config, WEBHOOK_CONFIG_FINALIZER)) {
    return { violations: [], warnings: [`deletion waits for ${workloads}`] }
  }
  const pronoun = names.length === 1 ? 'it' : 'them'
  return {
    violations: [
      violation.forbidden(
        '',
        `MCPWebhookConfig ${JSON.stringify(name)} is still referenced by ${workloads}; ` +
          `remove spec.webhookConfigRef from ${pronoun} first`,
      ),
    ],
    warnings: [],
  }
}

function hasFinalizer(object: KubeObject | undefined, finalizer: string): boolean {
  const metadata: unknown = object?.metadata
  const finalizers = isRecord(metadata) ? metadata.finalizers : undefined
  return Array.isArray(finalizers) && finalizers.includes(finalizer)
}
