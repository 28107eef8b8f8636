/** DESIGN §5.1 DELETE: an MCPWebhookConfig cannot be deleted while an MCPServer references it. */

import { violation } from './field-errors.ts'
import type { ValidationResult } from './result.ts'

/**
 * Denies deleting `configName` while `referencingServers` (MCPServer names in its namespace whose
 * `spec.webhookConfigRef.name` is `configName`) is non-empty. The violation is on the whole object
 * (field `''`): nothing in the deleted object is wrong, its references elsewhere are.
 */
export function validateWebhookConfigDelete(
  configName: string,
  referencingServers: readonly string[],
): ValidationResult {
  if (referencingServers.length === 0) return { violations: [], warnings: [] }
  // Sorted and de-duplicated so the message is stable whatever order the cache lists them in.
  const names = [...new Set(referencingServers)].sort()
  const workloads = names.map((name) => `MCPServer ${name}`).join(', ')
  const pronoun = names.length === 1 ? 'it' : 'them'
  return {
    violations: [
      violation.forbidden(
        '',
        `MCPWebhookConfig ${JSON.stringify(configName)} is still referenced by ${workloads}; ` +
          `remove spec.webhookConfigRef from ${pronoun} first`,
      ),
    ],
    warnings: [],
  }
}
