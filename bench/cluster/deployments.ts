/**
 * Real ToolHive proxy Deployments for the population's MCPServers: the in-process benchmark's
 * scenario 1 object (about 7 KB: three containers, probes, projected volumes, 2 replicas), owned
 * by a stored MCPServer (its uid), labelled `toolhive=true`, and named like its owner so the
 * mutating webhook reads that owner and its RunConfig ConfigMap live, as it does for the operator.
 * Each carries a revision annotation in its pod template: an UPDATE changes it, so every write is
 * a real change that reaches etcd, with or without the webhook.
 */

import { TARGET } from '../population.ts'
import { SCENARIO_1_BYTES, deploymentReview } from '../scenarios.ts'
import { TOKEN, tokenValue } from '../token.ts'
import { namespaceOf, serverName } from './population.ts'

export const REVISION_ANNOTATION = 'bench.mcp-admission.toolhive.stacklok.dev/revision'
const REVISION = '__revision__'

/** The scenario 1 Deployment as a string with the target's name, namespace and uid to replace. */
function template(): string {
  const { request } = deploymentReview(SCENARIO_1_BYTES) as {
    request: { object: { spec: { template: { metadata: Record<string, unknown> } } } }
  }
  const object = request.object
  object.spec.template.metadata['annotations'] = { [REVISION_ANNOTATION]: REVISION }
  const text = JSON.stringify(object)
  // The replacements below must reach every occurrence and nothing else.
  if (text.split(`"${TARGET.namespace}"`).length !== 2)
    throw new Error('the Deployment template names its namespace more than once')
  return text
}

export interface ProxyDeployments {
  /** Collection path of server i's namespace. */
  collection(i: number): string
  /** Server i's Deployment, serialised, at `revision`. */
  body(i: number, uid: string, revision: number): string
}

export function proxyDeployments(): ProxyDeployments {
  const text = template()
  return {
    collection: (i) => `/apis/apps/v1/namespaces/${namespaceOf(i)}/deployments`,
    body: (i, uid, revision) =>
      text
        .replaceAll(TARGET.name, serverName(i))
        .replace(`"${TARGET.namespace}"`, `"${namespaceOf(i)}"`)
        .replaceAll(TARGET.uid, uid)
        .replaceAll(TOKEN, tokenValue(i))
        .replace(REVISION, String(revision)),
  }
}
