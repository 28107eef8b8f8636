/** Builders for ToolHive workloads, their RunConfig ConfigMaps and proxy Deployments, as the operator writes them. */

import type { KubeObject } from '../../src/policy/kube/object.ts'
import { entryOf } from '../../src/policy/kinds.ts'
import type { ProxyFacts, WorkloadKind } from '../../src/policy/kinds.ts'

export const NAMESPACE = 'team'

const proxyOf = (kind: WorkloadKind) => entryOf(kind).proxy as ProxyFacts

export function workload(
  kind: WorkloadKind,
  name: string,
  options: { uid?: string; generation?: number; spec?: Record<string, unknown> } = {},
): KubeObject {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind,
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: options.uid ?? `${name}-uid`,
      generation: options.generation ?? 1,
    },
    spec: options.spec ?? {},
  }
}

export function runConfigFor(
  kind: WorkloadKind,
  name: string,
  content = `{"name":"${name}"}`,
): KubeObject {
  const vmcp = kind === 'VirtualMCPServer'
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `${name}${proxyOf(kind).runConfigSuffix}`,
      namespace: NAMESPACE,
      labels: { 'toolhive.stacklok.io/component': vmcp ? 'vmcp-config' : 'run-config' },
    },
    data: { [vmcp ? 'config.yaml' : 'runconfig.json']: content },
  }
}

/** A proxy Deployment as an operator would write it, before admission. */
export function proxyDeployment(
  kind: WorkloadKind,
  name: string,
  options: {
    uid?: string
    replicas?: number
    podAnnotations?: Record<string, string>
    env?: unknown[]
    volumes?: unknown[]
  } = {},
): KubeObject {
  const app = kind.toLowerCase()
  const labels = {
    app,
    'app.kubernetes.io/name': app,
    'app.kubernetes.io/instance': name,
    toolhive: 'true',
    'toolhive-name': name,
  }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels,
      ownerReferences: [
        {
          apiVersion: 'toolhive.stacklok.dev/v1beta1',
          kind,
          name,
          uid: options.uid ?? `${name}-uid`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      replicas: options.replicas ?? 1,
      selector: { matchLabels: labels },
      template: {
        metadata: {
          labels,
          ...(options.podAnnotations ? { annotations: options.podAnnotations } : {}),
        },
        spec: {
          containers: [
            {
              name: proxyOf(kind).container,
              image: 'ghcr.io/stacklok/toolhive/proxyrunner:latest',
              ...(options.env ? { env: options.env } : {}),
            },
          ],
          ...(options.volumes ? { volumes: options.volumes } : {}),
        },
      },
    },
  }
}
