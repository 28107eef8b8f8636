/**
 * ToolHive objects as the operator creates them, through the API server: an MCPServer, its
 * RunConfig ConfigMap and its proxy Deployment (owned by the stored server, so its uid matches).
 */

import { proxyDeployment, runConfigFor } from '../../helpers/proxy.ts'
import { mustKubectl } from './kubectl.ts'
import type { Kubectl } from './kubectl.ts'

type Any = Record<string, any>

async function create(kubectl: Kubectl, object: Any, namespace: string): Promise<void> {
  const placed = { ...object, metadata: { ...object['metadata'], namespace } }
  await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(placed))
}

async function get(kubectl: Kubectl, kind: string, name: string, namespace: string) {
  return JSON.parse(
    await mustKubectl(kubectl, ['get', kind, name, '-n', namespace, '-o', 'json']),
  ) as Any
}

/** Creates the three objects and returns the stored (admitted) Deployment. */
export async function createServerWithProxy(
  kubectl: Kubectl,
  namespace: string,
  name: string,
  spec: Any,
): Promise<Any> {
  const server = {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPServer',
    metadata: { name },
    spec,
  }
  await create(kubectl, server, namespace)
  await create(kubectl, runConfigFor('MCPServer', name, '{}'), namespace)
  const owner = await get(kubectl, 'mcpserver.toolhive.stacklok.dev', name, namespace)
  const uid = owner['metadata'].uid as string
  await create(kubectl, proxyDeployment('MCPServer', name, { uid }), namespace)
  return get(kubectl, 'deployment', name, namespace)
}
