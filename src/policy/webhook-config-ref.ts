/** Which MCPWebhookConfig an MCPServer names (DESIGN §5.1, §5.2). */

import { isRecord } from './kube/object.ts'
import type { KubeObject } from './kube/object.ts'

/** `spec.webhookConfigRef.name` when it is a non-empty string, else undefined. */
export function webhookConfigRefName(object: KubeObject): string | undefined {
  const ref = isRecord(object.spec) ? object.spec.webhookConfigRef : undefined
  return isRecord(ref) && typeof ref.name === 'string' && ref.name !== '' ? ref.name : undefined
}
