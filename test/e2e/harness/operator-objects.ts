/**
 * What the operator suite reads and writes beside the operator: its proxy Deployments, the
 * invariants of docs/enforcement.md#proxy-deployments-field-by-field on one of them, and the small
 * objects the suite applies.
 */

import type { Test } from 'tap'
import { effectiveContentChecksum } from '../../../src/policy/content-checksum.ts'
import type { Kubectl } from './kubectl.ts'
import { mustKubectl } from './kubectl.ts'
import type { Any } from './operator.ts'

export const GROUP = 'toolhive.stacklok.dev'
export const CHECKSUM = `${GROUP}/runconfig-checksum`
export const GENERATION = `${GROUP}/mcpserver-generation`
export const GENERATION_ENV = 'THV_MCPSERVER_GENERATION'
export const WORKLOADS: Record<string, { plural: string; container: string }> = {
  MCPServer: { plural: 'mcpservers', container: 'toolhive' },
  MCPRemoteProxy: { plural: 'mcpremoteproxies', container: 'toolhive' },
  VirtualMCPServer: { plural: 'virtualmcpservers', container: 'vmcp' },
}

/** Every Deployment whose controller owner is a ToolHive workload. */
export async function proxyDeployments(kubectl: Kubectl): Promise<Any[]> {
  const list = JSON.parse(
    await mustKubectl(kubectl, ['get', 'deployments', '-A', '-o', 'json']),
  ) as Any
  return (list['items'] as Any[]).filter((deployment) => controllerOwner(deployment) !== undefined)
}

export function controllerOwner(deployment: Any): Any | undefined {
  return ((deployment['metadata'].ownerReferences ?? []) as Any[]).find(
    (ref) =>
      ref['controller'] === true &&
      String(ref['apiVersion']).startsWith(`${GROUP}/`) &&
      ref['kind'] in WORKLOADS,
  )
}

/**
 * docs/enforcement.md#proxy-deployments-field-by-field on one Deployment, against its owner and
 * RunConfig ConfigMap as they are now.
 */
export async function checkInvariants(t: Test, kubectl: Kubectl, deployment: Any): Promise<void> {
  const { name, namespace } = deployment['metadata']
  const owner = controllerOwner(deployment)!
  const kind = String(owner['kind'])
  const what = `${kind} ${namespace}/${name}`
  const template = deployment['spec'].template
  const annotations = template.metadata.annotations ?? {}
  const configMapName =
    kind === 'VirtualMCPServer' ? `${owner['name']}-vmcp-config` : `${owner['name']}-runconfig`
  const configMap = await getObject(kubectl, 'configmap', configMapName, namespace)
  if (configMap)
    t.equal(annotations[CHECKSUM], effectiveContentChecksum(configMap), `${what}: checksum`)
  else t.comment(`${what}: no RunConfig ConfigMap ${configMapName} (yet)`)
  t.equal(template.spec.terminationGracePeriodSeconds, 30, `${what}: grace period`)
  if (kind !== 'MCPServer') return
  const server = await getObject(kubectl, 'mcpserver', String(owner['name']), namespace)
  t.equal(annotations[GENERATION], String(server?.['metadata'].generation), `${what}: generation`)
  const container = (template.spec.containers as Any[]).find((c) => c['name'] === 'toolhive')
  const env = ((container?.['env'] ?? []) as Any[]).filter((e) => e['name'] === GENERATION_ENV)
  t.same(env, [generationEnvEntry()], `${what}: downward-API env entry`)
  const transport = server?.['spec'].transport ?? 'stdio'
  if (transport === 'stdio') t.ok(deployment['spec'].replicas <= 1, `${what}: stdio at one replica`)
}

export function generationEnvEntry(): Any {
  return {
    name: GENERATION_ENV,
    valueFrom: {
      fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${GENERATION}']` },
    },
  }
}

/** An MCPWebhookConfig (served at v1alpha1 by every release) or MCPServer (v1beta1), as written. */
export function toolHiveObject(
  kind: 'MCPWebhookConfig' | 'MCPServer',
  namespace: string,
  name: string,
  spec: unknown,
): {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: { readonly name: string; readonly namespace: string }
  readonly spec: unknown
} {
  const version = kind === 'MCPWebhookConfig' ? 'v1alpha1' : 'v1beta1'
  return { apiVersion: `${GROUP}/${version}`, kind, metadata: { name, namespace }, spec }
}

export function mcpServer(name: string, namespace: string, spec: Any): Any {
  return {
    apiVersion: `${GROUP}/v1beta1`,
    kind: 'MCPServer',
    metadata: { name, namespace },
    spec: { image: 'ghcr.io/example/mcp:1.0', ...spec },
  }
}

/** A config and a server that references it, in file order: config first. */
export function webhookBundle(namespace: string): string {
  const config = {
    apiVersion: `${GROUP}/v1alpha1`,
    kind: 'MCPWebhookConfig',
    metadata: { name: 'hooks', namespace },
    spec: { validating: [{ name: 'policy', url: 'https://policy.example.com/check' }] },
  }
  const server = mcpServer('uses-hooks', namespace, {
    transport: 'streamable-http',
    webhookConfigRef: { name: 'hooks' },
  })
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [config, server] })
}

export async function getObject(
  kubectl: Kubectl,
  kind: string,
  name: string,
  namespace: string,
): Promise<Any | undefined> {
  const result = await kubectl([
    'get',
    kind,
    name,
    '-n',
    namespace,
    '-o',
    'json',
    '--ignore-not-found',
  ])
  return result.code === 0 && result.stdout.trim() !== ''
    ? (JSON.parse(result.stdout) as Any)
    : undefined
}

/** `vX.Y.Z` at or after `minimum`. */
export function releaseAtLeast(release: string, minimum: string): boolean {
  const parts = (version: string) => version.replace(/^v/, '').split('.').map(Number)
  const [a, b] = [parts(release), parts(minimum)]
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0)
  }
  return true
}
