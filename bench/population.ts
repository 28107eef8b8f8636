/**
 * The cluster the benchmark's server holds in its in-memory view: MCPServers (stdio and
 * streamable-http, with uids and generations, some with pod-template overrides, each with three
 * references: its MCPGroup, its MCPToolConfig and one of five other configs), their RunConfig
 * ConfigMaps as the operator writes them (stamped with the content checksum, as they are once
 * admitted), and the configs they name: of each of the nine config kinds (CONFIG_KINDS) 1 % as
 * many as there are servers (1,000 with 100,000), at least one per namespace, spread over the
 * 100 namespaces. Deterministic: the same size always yields the same objects.
 */

import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { stampContentChecksum } from '../src/policy/content-checksum.ts'
import { entryOf } from '../src/policy/kinds.ts'
import type { ToolHiveKind } from '../src/policy/kinds.ts'
import type { JsonObject, KubeObject } from '../src/policy/kube/object.ts'

/** The MCPServer every scenario's Deployment belongs to; present in every population. */
export const TARGET = {
  name: 'fetch-bench',
  namespace: 'team-07',
  uid: '5b0f3a52-9c1e-4d7a-8e1f-0000000b3c4e',
  generation: 7,
} as const

/** Namespaces the population spreads over: team-00 … team-99. */
export const NAMESPACES = 100
/** Objects per written file: bounds the YAML parser's per-file AST while the server loads. */
const OBJECTS_PER_FILE = 2_000

/** A uid unique to (i, salt), the same in every run. */
export function uid(i: number, salt: number): string {
  const hex = (i * 2654435761 + salt).toString(16).padStart(12, '0').slice(-12)
  return `6f1d2c1e-${(salt & 0xffff).toString(16).padStart(4, '0')}-4c57-9d0e-${hex}`
}

/** A RunConfig of about 1-2 KB, shaped like the operator's runconfig.json. */
export function runConfigJson(name: string, i: number, stdio: boolean): string {
  const envVars: Record<string, string> = {}
  for (let e = 0; e < 4 + (i % 12); e++) envVars[`MCP_SETTING_${e}`] = `value-${name}-${e}`
  return JSON.stringify(
    {
      schema_version: 'v0.1.0',
      image: `ghcr.io/stackloklabs/${name}:1.${i % 20}.0`,
      name,
      transport: stdio ? 'stdio' : 'streamable-http',
      host: '0.0.0.0',
      port: 8080,
      target_port: stdio ? 0 : 8081,
      cmd_args: ['--log-level', 'info', '--allow', `https://api.example.com/${name}`],
      env_vars: envVars,
      container_labels: {
        'toolhive.stacklok.io/mcp-server': name,
        'toolhive.stacklok.io/managed-by': 'toolhive-operator',
      },
      permission_profile: {
        read: ['/etc/ssl/certs'],
        write: ['/tmp'],
        network: { outbound: { allow_host: [`api.${name}.example.com`], allow_port: [443] } },
      },
      tools_filter: i % 3 === 0 ? ['fetch', 'search', 'summarise'] : [],
      telemetry: { endpoint: 'otel-collector.observability:4317', sampling_rate: 0.05 },
      middleware_configs: [
        { type: 'auth', parameters: { oidc_issuer: 'https://sso.example.com/realms/mcp' } },
        { type: 'audit', parameters: { component: 'toolhive-proxy' } },
      ],
    },
    null,
    2,
  )
}

export function mcpServer(
  name: string,
  namespace: string,
  i: number,
  options: {
    uid: string
    generation: number
    stdio: boolean
    overrides: boolean
    references?: ServerReferences
  },
): KubeObject {
  const spec: Record<string, unknown> = {
    image: `ghcr.io/stackloklabs/${name}:1.${i % 20}.0`,
    transport: options.stdio ? 'stdio' : 'streamable-http',
    proxyPort: 8080,
    ...(options.stdio ? {} : { mcpPort: 8081 }),
    replicas: 1,
    resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '50m' } },
  }
  if (options.overrides)
    spec.resourceOverrides = {
      proxyDeployment: {
        podTemplateMetadataOverrides: {
          annotations: {
            'vault.hashicorp.com/agent-inject': 'true',
            'team.example.com/owner': name,
          },
          labels: { 'cost-center': `cc-${i % 40}` },
        },
      },
    }
  for (const [field, config] of Object.entries(options.references ?? {}))
    // An OIDC config is shared: each server names its own audience (upstream's example).
    spec[field] = field === 'oidcConfigRef' ? { name: config, audience: name } : { name: config }
  return {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPServer',
    metadata: { name, namespace, uid: options.uid, generation: options.generation },
    spec,
  }
}

export function runConfigMap(name: string, namespace: string, content: string): KubeObject {
  const configMap: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `${name}-runconfig`,
      namespace,
      labels: {
        'toolhive.stacklok.io/component': 'run-config',
        'toolhive.stacklok.io/mcp-server': name,
        'toolhive.stacklok.io/managed-by': 'toolhive-operator',
      },
    },
    data: { 'runconfig.json': content },
  }
  // Stored RunConfigs went through this webhook, so they carry the checksum.
  stampContentChecksum(configMap)
  return configMap
}

export function webhookConfig(name: string, namespace: string, webhooks: number): KubeObject {
  const entry = (kind: string, w: number): Record<string, unknown> => ({
    name: `${kind}-${w}`,
    url: `https://${kind}-${w}.policy.example.com/${kind}`,
    timeout: `${1 + (w % 9)}s`,
    failurePolicy: w % 2 === 0 ? 'fail' : 'ignore',
    tlsConfig: {
      caSecretRef: { name: 'policy-ca', key: 'ca.crt' },
      clientCertSecretRef: { name: 'policy-client', key: 'tls.crt' },
      clientKeySecretRef: { name: 'policy-client', key: 'tls.key' },
    },
    hmacSecretRef: { name: 'policy-hmac', key: 'secret' },
  })
  const validating = Array.from({ length: Math.ceil(webhooks / 2) }, (_, w) => entry('check', w))
  const mutating = Array.from({ length: Math.floor(webhooks / 2) }, (_, w) => entry('enrich', w))
  return {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name, namespace },
    spec: { validating, mutating },
  }
}

export function namespaceOf(i: number): string {
  return `team-${String(i % NAMESPACES).padStart(2, '0')}`
}

/** A ToolHive config kind of the population: config c is `<prefix>-<c>` in namespace c % 100. */
export interface ConfigKind {
  readonly kind: ToolHiveKind
  readonly prefix: string
  /** Its small spec, as upstream's examples write one. */
  spec(c: number): JsonObject
}

const secretRef = (name: string, key: string) => ({ name, key })

/** The nine kinds that only other objects name, each with a spec of its own shape (v0.63.0 CRDs). */
export const CONFIG_KINDS: readonly ConfigKind[] = [
  {
    kind: 'MCPGroup',
    prefix: 'group',
    spec: (c) => ({ description: `MCP servers of ${namespaceOf(c)}, set ${c}` }),
  },
  {
    kind: 'MCPToolConfig',
    prefix: 'tools',
    spec: (c) => ({
      toolsFilter: ['fetch', 'search', 'summarise'].slice(0, 1 + (c % 3)),
      ...(c % 2 === 0
        ? { toolsOverride: { fetch: { name: 'fetch_url', description: 'Fetch a URL' } } }
        : {}),
    }),
  },
  {
    kind: 'MCPExternalAuthConfig',
    prefix: 'auth',
    spec: (c) =>
      c % 2 === 0
        ? {
            type: 'tokenExchange',
            tokenExchange: {
              tokenUrl: 'https://sso.example.com/realms/mcp/protocol/openid-connect/token',
              clientId: `mcp-${c}`,
              clientSecretRef: secretRef('oauth-client', 'client-secret'),
              audience: 'backend-api',
              scopes: ['read', 'write'],
            },
          }
        : {
            type: 'headerInjection',
            headerInjection: {
              headerName: 'X-API-Key',
              valueSecretRef: secretRef('backend-api-key', 'key'),
            },
          },
  },
  {
    kind: 'MCPOIDCConfig',
    prefix: 'oidc',
    spec: (c) =>
      c % 2 === 0
        ? {
            type: 'inline',
            inline: {
              issuer: 'https://sso.example.com/realms/mcp',
              jwksUrl: 'https://sso.example.com/realms/mcp/protocol/openid-connect/certs',
              clientId: `toolhive-${c}`,
              clientSecretRef: secretRef('oidc-client', 'client-secret'),
            },
          }
        : { type: 'kubernetesServiceAccount', kubernetesServiceAccount: {} },
  },
  {
    kind: 'MCPAuthzConfig',
    prefix: 'authz',
    spec: (c) => ({
      type: 'cedarv1',
      config: {
        policies: [
          'permit(principal, action == Action::"call_tool", resource == Tool::"fetch");',
          `permit(principal in Group::"team-${c % NAMESPACES}", action, resource);`,
        ],
        entities_json: '[]',
      },
    }),
  },
  {
    kind: 'MCPTelemetryConfig',
    prefix: 'telemetry',
    spec: () => ({
      openTelemetry: {
        enabled: true,
        endpoint: 'otel-collector.observability.svc.cluster.local:4318',
        insecure: true,
        tracing: { enabled: true, samplingRate: '0.05' },
        metrics: { enabled: true },
      },
      prometheus: { enabled: true },
    }),
  },
  {
    kind: 'MCPWebhookConfig',
    prefix: 'hooks',
    spec: (c) => webhookConfig('', '', 2 + (c % 4)).spec as JsonObject,
  },
  {
    kind: 'EmbeddingServer',
    prefix: 'embedding',
    spec: () => ({
      model: 'sentence-transformers/all-MiniLM-L6-v2',
      image: 'ghcr.io/huggingface/text-embeddings-inference:cpu-1.8',
      port: 8080,
      replicas: 1,
    }),
  },
  {
    kind: 'VirtualMCPCompositeToolDefinition',
    prefix: 'composite',
    spec: (c) => ({
      name: `fetch_and_summarise_${c}`,
      description: 'Fetches a URL and summarises it',
      timeout: '3m',
      parameters: {
        type: 'object',
        properties: { url: { type: 'string' } },
        required: ['url'],
      },
      steps: [
        { id: 'fetch', type: 'tool', tool: 'fetch', arguments: { url: '{{.params.url}}' } },
        {
          id: 'summarise',
          type: 'tool',
          tool: 'summarise',
          arguments: { text: '{{.steps.fetch.output.text}}' },
          dependsOn: ['fetch'],
        },
      ],
    }),
  },
]

/** Config c of `kind`, as the user writes it (no uid or generation: the API server's). */
export function configObject(kind: ConfigKind, c: number): KubeObject {
  const name = `${kind.prefix}-${c}`
  if (kind.kind === 'MCPWebhookConfig') return webhookConfig(name, namespaceOf(c), 2 + (c % 4))
  const { group, versions } = entryOf(kind.kind)
  return {
    apiVersion: `${group}/${versions[0]}`,
    kind: kind.kind,
    metadata: { name, namespace: namespaceOf(c) },
    spec: kind.spec(c),
  }
}

/** Configs of each kind per namespace: 1 % of the servers over 100 namespaces, at least one. */
export function configsPerNamespace(servers: number): number {
  return Math.max(1, Math.round(servers / 100 / NAMESPACES))
}

/** Configs of each kind in a population of `servers`: 1,000 with 100,000, 100 up to 15,000. */
export function configCount(servers: number): number {
  return configsPerNamespace(servers) * NAMESPACES
}

/** An MCPServer's references: `spec.<field>.name` → the config it names. */
export type ServerReferences = Readonly<Record<string, string>>

/** The third reference, in turn: a config kind by its field in the MCPServer's spec. */
const THIRD_REFERENCE = [
  ['webhookConfigRef', 'hooks'],
  ['telemetryConfigRef', 'telemetry'],
  ['oidcConfigRef', 'oidc'],
  ['authzConfigRef', 'authz'],
  ['externalAuthConfigRef', 'auth'],
] as const

/**
 * The references of server i (the i-th of namespace i % 100 is number ⌊i / 100⌋ there) when its
 * namespace has `perNamespace` configs of each kind: its group, its tool config and one of the
 * five configs above, each among the configs of its own namespace, spread evenly over them.
 */
export function serverReferences(i: number, perNamespace: number): ServerReferences {
  const n = i % NAMESPACES
  const j = Math.floor(i / NAMESPACES)
  const named = (prefix: string, k: number) => `${prefix}-${n + NAMESPACES * (k % perNamespace)}`
  const [field, prefix] = THIRD_REFERENCE[(j + n) % THIRD_REFERENCE.length]!
  return {
    groupRef: named('group', j),
    toolConfigRef: named('tools', j + n),
    [field]: named(prefix, Math.floor(j / THIRD_REFERENCE.length)),
  }
}

/** The target's references: those of the first server of its namespace, whatever the size. */
export const TARGET_REFERENCES = serverReferences(Number(TARGET.namespace.slice(-2)), 1)

/** Every object of a population of `servers` MCPServers (the target among them). */
export function* populationObjects(servers: number): Generator<KubeObject> {
  const perNamespace = configsPerNamespace(servers)
  for (const kind of CONFIG_KINDS)
    for (let c = 0; c < configCount(servers); c++) yield configObject(kind, c)
  yield mcpServer(TARGET.name, TARGET.namespace, 0, {
    uid: TARGET.uid,
    generation: TARGET.generation,
    stdio: true,
    overrides: true,
    references: TARGET_REFERENCES,
  })
  yield runConfigMap(TARGET.name, TARGET.namespace, runConfigJson(TARGET.name, 0, true))
  for (let i = 1; i < servers; i++) {
    const name = `mcp-${String(i).padStart(6, '0')}`
    const namespace = namespaceOf(i)
    const stdio = i % 5 < 3
    yield mcpServer(name, namespace, i, {
      uid: uid(i, servers),
      generation: 1 + (i % 9),
      stdio,
      overrides: i % 4 === 0,
      references: serverReferences(i, perNamespace),
    })
    yield runConfigMap(name, namespace, runConfigJson(name, i, stdio))
  }
}

/** Writes the population as multi-document YAML files, as `kubectl get -o yaml` users keep them. */
export async function writePopulation(
  dir: string,
  servers: number,
): Promise<{ objects: number; bytes: number; files: number }> {
  await mkdir(dir, { recursive: true })
  let batch: string[] = []
  let objects = 0
  let bytes = 0
  let files = 0
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return
    const text = batch.join('---\n')
    await writeFile(join(dir, `population-${String(files).padStart(4, '0')}.yaml`), text)
    bytes += text.length
    files++
    batch = []
  }
  for (const object of populationObjects(servers)) {
    batch.push(toYaml(object))
    objects++
    if (batch.length >= OBJECTS_PER_FILE) await flush()
  }
  await flush()
  return { objects, bytes, files }
}

/**
 * A small YAML emitter for plain Kubernetes objects: block maps and sequences, multi-line strings
 * as literal blocks (the way kubectl prints a RunConfig), other strings double-quoted. The `yaml`
 * package's stringify is ~50x slower, which matters for a 100,000-server view.
 */
export function toYaml(object: Record<string, unknown>): string {
  return mapLines(object, '').join('\n') + '\n'
}

function mapLines(map: Record<string, unknown>, indent: string): string[] {
  const lines: string[] = []
  for (const [key, value] of Object.entries(map)) {
    const head = `${indent}${/^[A-Za-z][\w./-]*$/.test(key) ? key : JSON.stringify(key)}:`
    lines.push(...valueLines(head, value, indent))
  }
  return lines
}

function valueLines(head: string, value: unknown, indent: string): string[] {
  if (typeof value === 'string' && value.includes('\n'))
    return [
      `${head} |-`,
      ...value.split('\n').map((line) => (line === '' ? '' : `${indent}  ${line}`)),
    ]
  if (Array.isArray(value) && value.length > 0) {
    const lines = [head]
    for (const item of value) {
      if (isPlainMap(item) && Object.keys(item).length > 0) {
        const itemLines = mapLines(item, `${indent}  `)
        itemLines[0] = `${indent}- ${itemLines[0]!.slice(indent.length + 2)}`
        lines.push(...itemLines)
      } else lines.push(`${indent}- ${scalar(item)}`)
    }
    return lines
  }
  if (isPlainMap(value) && Object.keys(value).length > 0)
    return [head, ...mapLines(value, `${indent}  `)]
  return [`${head} ${scalar(value)}`]
}

/** Plain style where YAML reads it back as the same string (kubectl's style), else JSON. */
function scalar(value: unknown): string {
  if (typeof value === 'string' && PLAIN.test(value) && !RESERVED.test(value)) return value
  // Numbers, booleans, odd strings, and empty maps and lists, in flow style (JSON is YAML).
  return JSON.stringify(value)
}

const PLAIN = /^[A-Za-z_/][\w./@-]*(:[\w./@-]+)*$/
const RESERVED = /^(y|n|yes|no|on|off|true|false|null)$/i

function isPlainMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
