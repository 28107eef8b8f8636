/**
 * Objects of every ToolHive kind (src/policy/kinds.ts) with every reference of the kind table in
 * place, as v0.33.0's and v0.63.0's CRDs both accept them: the object graph the delete guard
 * follows (test/e2e/object-graph.test.ts). Specs are cut down from the releases' own examples
 * (`examples/operator`); nothing here runs (no kubelet), so images and URLs are placeholders.
 */

import { GROUP } from './operator-objects.ts'
import type { Any } from './operator.ts'

/** Every kind at v1beta1, but MCPWebhookConfig (v1alpha1 only in both releases). */
export function toolHive(kind: string, namespace: string, name: string, spec: Any): Any {
  const version = kind === 'MCPWebhookConfig' ? 'v1alpha1' : 'v1beta1'
  return { apiVersion: `${GROUP}/${version}`, kind, metadata: { name, namespace }, spec }
}

/** The names the graph's objects use: one object of each kind, each named after its role. */
export const NAMES = {
  group: 'group',
  tools: 'tools',
  /** An `unauthenticated` MCPExternalAuthConfig, for the `externalAuthConfigRef` paths. */
  auth: 'outgoing',
  /** An `embeddedAuthServer` one, for `authServerRef` (the kind table's `requires`). */
  authServer: 'auth-server',
  oidc: 'oidc',
  authz: 'authz',
  telemetry: 'telemetry',
  hooks: 'hooks',
  embedding: 'embedding',
  composite: 'composite',
  registry: 'registry',
  server: 'server',
  proxy: 'proxy',
  entry: 'entry',
  vmcp: 'vmcp',
} as const

export const IMAGE = 'ghcr.io/example/mcp:1.0'
const REMOTE_URL = 'https://mcp.example.com/mcp'
const RESOURCE_URL = 'https://mcp.e2e.example.com'

export const mcpGroup = (namespace: string, name: string = NAMES.group): Any =>
  toolHive('MCPGroup', namespace, name, { description: 'e2e object graph' })

export const mcpToolConfig = (namespace: string, name: string = NAMES.tools): Any =>
  toolHive('MCPToolConfig', namespace, name, { toolsFilter: ['fetch'] })

export const embeddingServer = (namespace: string, name: string = NAMES.embedding): Any =>
  toolHive('EmbeddingServer', namespace, name, {
    model: 'sentence-transformers/all-MiniLM-L6-v2',
    image: 'ghcr.io/example/text-embeddings-inference:1.0',
  })

export const compositeTool = (namespace: string, name: string = NAMES.composite): Any =>
  toolHive('VirtualMCPCompositeToolDefinition', namespace, name, {
    name: 'fetch_twice',
    description: 'Fetches a URL twice',
    steps: [
      { id: 'first', type: 'tool', tool: 'fetch', arguments: { url: '{{.params.url}}' } },
      { id: 'second', type: 'tool', tool: 'fetch', arguments: { url: '{{.params.url}}' } },
    ],
  })

/** An MCPRemoteProxy naming `toolConfig` (and nothing else). */
export const remoteProxy = (namespace: string, name: string, toolConfig: string): Any =>
  toolHive('MCPRemoteProxy', namespace, name, {
    remoteUrl: REMOTE_URL,
    transport: 'streamable-http',
    toolConfigRef: { name: toolConfig },
  })

/** An MCPServer naming `toolConfig` (and nothing else). */
export const serverWithTools = (namespace: string, name: string, toolConfig: string): Any =>
  toolHive('MCPServer', namespace, name, {
    image: IMAGE,
    transport: 'streamable-http',
    toolConfigRef: { name: toolConfig },
  })

/** A VirtualMCPServer of `group` (and nothing else it names). */
export const virtualServer = (namespace: string, name: string, group: string): Any =>
  toolHive('VirtualMCPServer', namespace, name, {
    groupRef: { name: group },
    incomingAuth: { type: 'anonymous' },
  })

/**
 * One object of each of the 14 kinds, every reference path of the kind table naming one of them:
 * the targets first, then their referrers (the order `kubectl apply` should create them in).
 */
export function objectGraph(namespace: string): Any[] {
  const n = NAMES
  const at = (kind: string, name: string, spec: Any) => toolHive(kind, namespace, name, spec)
  const targets = [
    mcpGroup(namespace),
    mcpToolConfig(namespace),
    at('MCPExternalAuthConfig', n.auth, { type: 'unauthenticated' }),
    at('MCPExternalAuthConfig', n.authServer, {
      type: 'embeddedAuthServer',
      embeddedAuthServer: {
        issuer: 'https://auth.example.com',
        upstreamProviders: [
          {
            name: 'idp',
            type: 'oidc',
            oidcConfig: { issuerUrl: 'https://idp.example.com', clientId: 'client' },
          },
        ],
      },
    }),
    at('MCPOIDCConfig', n.oidc, { type: 'kubernetesServiceAccount', kubernetesServiceAccount: {} }),
    at('MCPAuthzConfig', n.authz, {
      type: 'cedarv1',
      config: { policies: ['permit(principal, action, resource);'], entities_json: '[]' },
    }),
    at('MCPTelemetryConfig', n.telemetry, {
      openTelemetry: {
        enabled: true,
        endpoint: 'otel-collector.monitoring.svc.cluster.local:4318',
        insecure: true,
        tracing: { enabled: true },
      },
    }),
    at('MCPWebhookConfig', n.hooks, {
      validating: [{ name: 'policy', url: 'https://policy.example.com/check' }],
    }),
    embeddingServer(namespace),
    compositeTool(namespace),
    at('MCPRegistry', n.registry, {
      configYAML: [
        'sources:',
        '  - name: k8s',
        '    kubernetes: {}',
        'registries:',
        '  - name: default',
        '    sources: ["k8s"]',
        'database:',
        '  host: postgres',
        '  port: 5432',
        '  user: db_app',
        '  database: registry',
        'auth:',
        '  mode: anonymous',
        '',
      ].join('\n'),
    }),
  ]
  const workloadRefs = {
    groupRef: { name: n.group },
    toolConfigRef: { name: n.tools },
    externalAuthConfigRef: { name: n.auth },
    authServerRef: { kind: 'MCPExternalAuthConfig', name: n.authServer },
    // With an embedded auth server the audience must be the resource URL (v0.63.0 checks).
    oidcConfigRef: { name: n.oidc, audience: RESOURCE_URL, resourceUrl: RESOURCE_URL },
    authzConfigRef: { name: n.authz },
    telemetryConfigRef: { name: n.telemetry },
  }
  const referrers = [
    at('MCPServer', n.server, {
      image: IMAGE,
      transport: 'streamable-http',
      ...workloadRefs,
      webhookConfigRef: { name: n.hooks },
    }),
    at('MCPRemoteProxy', n.proxy, {
      remoteUrl: REMOTE_URL,
      transport: 'streamable-http',
      ...workloadRefs,
    }),
    at('MCPServerEntry', n.entry, {
      remoteUrl: REMOTE_URL,
      transport: 'streamable-http',
      groupRef: { name: n.group },
      externalAuthConfigRef: { name: n.auth },
    }),
    at('VirtualMCPServer', n.vmcp, {
      groupRef: { name: n.group },
      embeddingServerRef: { name: n.embedding },
      incomingAuth: {
        type: 'oidc',
        oidcConfigRef: { name: n.oidc, audience: 'e2e' },
        authzConfigRef: { name: n.authz },
      },
      outgoingAuth: {
        source: 'inline',
        default: { type: 'externalAuthConfigRef', externalAuthConfigRef: { name: n.auth } },
        backends: {
          [n.server]: { type: 'externalAuthConfigRef', externalAuthConfigRef: { name: n.auth } },
        },
      },
      telemetryConfigRef: { name: n.telemetry },
      config: {
        compositeToolRefs: [{ name: n.composite }],
        aggregation: { tools: [{ workload: n.server, toolConfigRef: { name: n.tools } }] },
      },
    }),
  ]
  return [...targets, ...referrers]
}

/** A `kubectl` List of `items`. */
export function list(items: readonly Any[]): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items })
}
