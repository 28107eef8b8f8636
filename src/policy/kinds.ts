/**
 * What the service knows of each ToolHive kind, one entry per kind. The admission routes, the
 * cluster view and its RBAC, the proxy rules, the status reconciler and the CLI's `check` read
 * this table, and `src/` names a kind only through `KIND`: a new kind is one entry here plus the
 * rules it names (docs/architecture.md).
 */

import { WEBHOOK_CONFIG_FINALIZER } from './names.ts'

export const TOOLHIVE_GROUP = 'toolhive.stacklok.dev'

/**
 * A status condition the reconciler stamps (`status-conditions.ts`,
 * docs/enforcement.md#status-conditions).
 */
export type StatusRule = 'stdioReplicaCap' | 'sessionStorage' | 'valid'

/**
 * A rule that judges a whole object into `status.validationStatus` and `status.validationErrors`
 * (`composite-status.ts`): the reconciler writes `Invalid` with the errors, never `Valid`.
 */
export type ValidationStatusRule = 'compositeToolDefinition'

/** What a kind's proxy Deployment carries (docs/enforcement.md), for the kinds that own one. */
export interface ProxyFacts {
  /** The suffix of the RunConfig ConfigMap's name after the workload's. */
  readonly runConfigSuffix: string
  /** The proxy container's name. */
  readonly container: string
  /**
   * The owner's `metadata.generation` is stamped on the pod template, and read by the container
   * through the downward API.
   */
  readonly stampsGeneration: boolean
  /** The transport whose proxy runs one replica: more is capped at 1 (Deployment and Scale). */
  readonly transportCap?: {
    readonly transport: string
    /** An absent, null or empty `spec.transport` is this one (the CRD's default, Go's zero value). */
    readonly byDefault: boolean
  }
}

/**
 * A field that names another object in the same namespace (docs/architecture.md). `path` ends on
 * the name field; `[]` stands for every item of a list, `{}` for every value of a map.
 */
export interface Reference {
  readonly path: string
  /** The kind it names: fixed, or read from the field `kindFrom` beside the name (of `allowed`). */
  readonly target:
    { readonly kind: string } | { readonly kindFrom: string; readonly allowed: readonly string[] }
  /** A condition the target must meet (`spec.type` equals `embeddedAuthServer`). */
  readonly requires?: { readonly path: string; readonly equals: string }
  /** What the operator does while the target is missing: `the operator <whenMissing>`. */
  readonly whenMissing: string
  /** The operator's finalizer that holds the target while this path names it, and since when. */
  readonly protectedBy?: { readonly finalizer: string; readonly since: string }
}

export interface ToolHiveKindEntry {
  readonly kind: string
  readonly group: typeof TOOLHIVE_GROUP
  /**
   * Every version of the kind that upstream has served or may serve, the newest release's storage
   * version first. The webhook rules name them all, so an object at any of them reaches the same
   * rule; which one the service reads, watches and writes status at is the cluster's to say (API
   * discovery, `cluster/served-kinds.ts`); the first is assumed only without a cluster.
   */
  readonly versions: readonly string[]
  /** The REST resource name, which RBAC and request synthesis use. */
  readonly plural: string
  readonly namespaced: boolean
  /** For the kinds that own a proxy Deployment and a RunConfig ConfigMap (docs/enforcement.md). */
  readonly proxy?: ProxyFacts
  /**
   * Its references, by API version; a version not named here reads as the kind's first version
   * (a release that moves the kind is read as the newest known until the table names it).
   */
  readonly references?: Readonly<Record<string, readonly Reference[]>>
  readonly view: {
    /**
     * What the cluster view keeps of an object besides its identity and metadata
     * (`cluster/trim.ts`): the paths the rules and the reconciler read from it; its reference
     * paths are kept too.
     */
    readonly keep: readonly string[]
    /** Readiness waits for the kind's cache to have listed (docs/operations.md). */
    readonly readinessWaits: boolean
  }
  /**
   * Its operator refuses, when it reconciles, a `spec.remoteUrl` that ValidateRemoteURL refuses
   * (`remote-url.ts`): the workload rule warns at the write.
   */
  readonly remoteUrlGuard?: true
  /** What the rules do while the cluster does not serve the kind (logged when it goes). */
  readonly whenNotServed: string
  /** The conditions the reconciler stamps, in the order it writes them. */
  readonly conditions: readonly StatusRule[]
  /**
   * The rule whose violations the reconciler writes as `status.validationStatus: Invalid` (only
   * for a kind without conditions: one status write per change).
   */
  readonly validationStatus?: ValidationStatusRule
  /** `check` admits lower ranks first: a config before the workloads that reference it. */
  readonly checkRank: number
}

/** A kind table: this module's, or one a test builds around it. */
export type KindTable = readonly ToolHiveKindEntry[]

/** What the status rules and the reconciler read of a workload (`status-conditions.ts`). */
const WORKLOAD_STATUS_READS = ['spec.replicas', 'spec.sessionStorage.provider', 'status.conditions']

const toKind = (kind: string) => ({ kind })

/**
 * The operator's finalizers that hold a referenced object while some referrers name it, each
 * counting only the paths its controller lists (read from upstream's controllers of v0.33.0 and
 * v0.63.0, which agree; a release between is taken to match them). MCPGroup's and
 * EmbeddingServer's finalizers hold nothing, and VirtualMCPCompositeToolDefinition has none.
 */
const held = (finalizer: string) => ({ protectedBy: { finalizer, since: 'v0.33.0' } })
const TOOL_CONFIG_HELD = held('toolhive.stacklok.dev/toolconfig-finalizer')
const EXTERNAL_AUTH_HELD = held('mcpexternalauthconfig.toolhive.stacklok.dev/finalizer')
const OIDC_HELD = held('mcpoidcconfig.toolhive.stacklok.dev/finalizer')
const AUTHZ_HELD = held('mcpauthzconfig.toolhive.stacklok.dev/finalizer')
const TELEMETRY_HELD = held('mcptelemetryconfig.toolhive.stacklok.dev/finalizer')

const GROUP_REF: Reference = {
  path: 'spec.groupRef.name',
  target: toKind('MCPGroup'),
  whenMissing: 'reports GroupRefNotFound',
}
const OIDC_REF: Reference = {
  path: 'spec.oidcConfigRef.name',
  target: toKind('MCPOIDCConfig'),
  whenMissing: 'reports OIDCConfigRefNotFound',
  ...OIDC_HELD,
}
const AUTHZ_REF: Reference = {
  path: 'spec.authzConfigRef.name',
  target: toKind('MCPAuthzConfig'),
  whenMissing: 'reports AuthzConfigRefNotFound',
  ...AUTHZ_HELD,
}
const TELEMETRY_REF: Reference = {
  path: 'spec.telemetryConfigRef.name',
  target: toKind('MCPTelemetryConfig'),
  whenMissing: 'reports TelemetryConfigRefNotFound',
  ...TELEMETRY_HELD,
}
/** Only an MCPExternalAuthConfig of type `embeddedAuthServer` configures an embedded server. */
const AUTH_SERVER_REF: Reference = {
  path: 'spec.authServerRef.name',
  target: { kindFrom: 'kind', allowed: ['MCPExternalAuthConfig'] },
  requires: { path: 'spec.type', equals: 'embeddedAuthServer' },
  whenMissing: 'reports AuthServerRefNotFound',
  ...EXTERNAL_AUTH_HELD,
}

/**
 * An MCPServer's references. Its tool, external auth and webhook configs have no condition of
 * their own when missing: the reconcile fails and Ready turns False (NotReady).
 */
const MCP_SERVER_REFERENCES: readonly Reference[] = [
  GROUP_REF,
  {
    path: 'spec.toolConfigRef.name',
    target: toKind('MCPToolConfig'),
    whenMissing: 'reports NotReady',
    ...TOOL_CONFIG_HELD,
  },
  {
    path: 'spec.externalAuthConfigRef.name',
    target: toKind('MCPExternalAuthConfig'),
    whenMissing: 'reports NotReady',
    ...EXTERNAL_AUTH_HELD,
  },
  AUTH_SERVER_REF,
  OIDC_REF,
  AUTHZ_REF,
  TELEMETRY_REF,
  {
    path: 'spec.webhookConfigRef.name',
    target: toKind('MCPWebhookConfig'),
    whenMissing: 'reports NotReady',
    protectedBy: { finalizer: WEBHOOK_CONFIG_FINALIZER, since: 'v0.33.0' },
  },
]

/** An MCPRemoteProxy's: MCPToolConfig's finalizer does not count it. */
const REMOTE_PROXY_REFERENCES: readonly Reference[] = [
  GROUP_REF,
  {
    path: 'spec.toolConfigRef.name',
    target: toKind('MCPToolConfig'),
    whenMissing: 'reports ToolConfigNotFound',
  },
  {
    path: 'spec.externalAuthConfigRef.name',
    target: toKind('MCPExternalAuthConfig'),
    whenMissing: 'reports ExternalAuthConfigFetchError',
    ...EXTERNAL_AUTH_HELD,
  },
  AUTH_SERVER_REF,
  OIDC_REF,
  AUTHZ_REF,
  TELEMETRY_REF,
]

/** An MCPServerEntry's: no finalizer counts it. */
const SERVER_ENTRY_REFERENCES: readonly Reference[] = [
  GROUP_REF,
  {
    path: 'spec.externalAuthConfigRef.name',
    target: toKind('MCPExternalAuthConfig'),
    whenMissing: 'reports AuthConfigNotFound',
  },
]

/**
 * A VirtualMCPServer's: the tools it aggregates and the auth of each backend it calls, which no
 * finalizer counts. (`spec.config.groupRef` is not one: the operator overwrites it with
 * `spec.groupRef.name`.)
 */
const VIRTUAL_SERVER_REFERENCES: readonly Reference[] = [
  GROUP_REF,
  {
    path: 'spec.config.compositeToolRefs[].name',
    target: toKind('VirtualMCPCompositeToolDefinition'),
    whenMissing: 'reports CompositeToolRefNotFound',
  },
  {
    path: 'spec.config.aggregation.tools[].toolConfigRef.name',
    target: toKind('MCPToolConfig'),
    whenMissing: 'fails to reconcile it',
  },
  {
    path: 'spec.embeddingServerRef.name',
    target: toKind('EmbeddingServer'),
    whenMissing: 'reports EmbeddingServerNotFound',
  },
  { ...AUTHZ_REF, path: 'spec.incomingAuth.authzConfigRef.name' },
  { ...OIDC_REF, path: 'spec.incomingAuth.oidcConfigRef.name' },
  {
    path: 'spec.outgoingAuth.default.externalAuthConfigRef.name',
    target: toKind('MCPExternalAuthConfig'),
    whenMissing: 'reports DefaultAuthConfig ConversionFailed',
  },
  {
    path: 'spec.outgoingAuth.backends{}.externalAuthConfigRef.name',
    target: toKind('MCPExternalAuthConfig'),
    whenMissing: 'reports BackendAuthConfig ConversionFailed',
  },
  TELEMETRY_REF,
]

/** The same references at both served versions. */
const atBothVersions = (references: readonly Reference[]) => ({
  v1beta1: references,
  v1alpha1: references,
})

/** `check` and `audit` order: configs, then groups, then workloads, then virtual servers. */
const RANK = { config: 0, group: 1, workload: 2, virtual: 3 } as const

/** A kind that only other objects name: nothing of it is read but its identity. */
const REFERENCED_ONLY = {
  group: TOOLHIVE_GROUP,
  versions: ['v1beta1', 'v1alpha1'],
  namespaced: true,
  view: { keep: [], readinessWaits: false },
  conditions: [],
} as const

/**
 * MCPServer, MCPRemoteProxy and VirtualMCPServer own a proxy Deployment; every kind but
 * MCPWebhookConfig (v1alpha1 only so far) is stored at v1beta1 and still served at v1alpha1.
 * Readiness waits only for the caches a `Fail` webhook reads: the proxy Deployment's owner.
 */
export const TOOLHIVE_KIND_TABLE = [
  {
    kind: 'MCPServer',
    group: TOOLHIVE_GROUP,
    versions: ['v1beta1', 'v1alpha1'],
    plural: 'mcpservers',
    namespaced: true,
    proxy: {
      runConfigSuffix: '-runconfig',
      container: 'toolhive',
      stampsGeneration: true,
      transportCap: { transport: 'stdio', byDefault: true },
    },
    references: atBothVersions(MCP_SERVER_REFERENCES),
    view: { keep: ['spec.transport', ...WORKLOAD_STATUS_READS], readinessWaits: true },
    whenNotServed:
      'a proxy Deployment naming one as its owner gets no stamp (with a warning), no Scale is capped, no delete finds it a referrer, no conditions are stamped',
    conditions: ['stdioReplicaCap', 'sessionStorage'],
    checkRank: RANK.workload,
  },
  {
    kind: 'MCPRemoteProxy',
    group: TOOLHIVE_GROUP,
    versions: ['v1beta1', 'v1alpha1'],
    plural: 'mcpremoteproxies',
    namespaced: true,
    proxy: { runConfigSuffix: '-runconfig', container: 'toolhive', stampsGeneration: false },
    references: atBothVersions(REMOTE_PROXY_REFERENCES),
    remoteUrlGuard: true,
    view: { keep: WORKLOAD_STATUS_READS, readinessWaits: true },
    whenNotServed: 'no delete finds it a referrer, and no status conditions are stamped for it',
    conditions: ['sessionStorage'],
    checkRank: RANK.workload,
  },
  {
    kind: 'VirtualMCPServer',
    group: TOOLHIVE_GROUP,
    versions: ['v1beta1', 'v1alpha1'],
    plural: 'virtualmcpservers',
    namespaced: true,
    proxy: { runConfigSuffix: '-vmcp-config', container: 'vmcp', stampsGeneration: false },
    references: atBothVersions(VIRTUAL_SERVER_REFERENCES),
    view: { keep: WORKLOAD_STATUS_READS, readinessWaits: true },
    whenNotServed: 'no delete finds it a referrer, and no status conditions are stamped for it',
    conditions: ['sessionStorage'],
    checkRank: RANK.virtual,
  },
  {
    kind: 'MCPWebhookConfig',
    group: TOOLHIVE_GROUP,
    // Upstream serves v1alpha1 only so far; v1beta1 is named so that a release that moves the
    // kind (as MCPServer moved) is matched without a new chart.
    versions: ['v1alpha1', 'v1beta1'],
    plural: 'mcpwebhookconfigs',
    namespaced: true,
    // The Valid condition judges the whole spec.
    view: { keep: ['spec', 'status.conditions'], readinessWaits: false },
    whenNotServed: 'no webhookConfigRef warnings, and no Valid condition is stamped',
    conditions: ['valid'],
    checkRank: RANK.config,
  },
  {
    ...REFERENCED_ONLY,
    kind: 'MCPServerEntry',
    plural: 'mcpserverentries',
    references: atBothVersions(SERVER_ENTRY_REFERENCES),
    remoteUrlGuard: true,
    whenNotServed: 'no delete finds it a referrer',
    checkRank: RANK.workload,
  },
  {
    ...REFERENCED_ONLY,
    kind: 'MCPGroup',
    plural: 'mcpgroups',
    whenNotServed: 'no groupRef warnings',
    checkRank: RANK.group,
  },
  {
    ...REFERENCED_ONLY,
    kind: 'MCPToolConfig',
    plural: 'mcptoolconfigs',
    whenNotServed: 'no toolConfigRef warnings',
    checkRank: RANK.config,
  },
  {
    ...REFERENCED_ONLY,
    kind: 'MCPExternalAuthConfig',
    plural: 'mcpexternalauthconfigs',
    // `authServerRef` requires a config of type embeddedAuthServer (references.ts keeps it).
    whenNotServed: 'no externalAuthConfigRef or authServerRef warnings',
    checkRank: RANK.config,
  },
  {
    ...REFERENCED_ONLY,
    kind: 'MCPOIDCConfig',
    plural: 'mcpoidcconfigs',
    whenNotServed: 'no oidcConfigRef warnings',
    checkRank: RANK.config,
  },
  {
    ...REFERENCED_ONLY,
    kind: 'MCPAuthzConfig',
    plural: 'mcpauthzconfigs',
    whenNotServed: 'no authzConfigRef warnings',
    checkRank: RANK.config,
  },
  {
    ...REFERENCED_ONLY,
    kind: 'MCPTelemetryConfig',
    plural: 'mcptelemetryconfigs',
    whenNotServed: 'no telemetryConfigRef warnings',
    checkRank: RANK.config,
  },
  {
    ...REFERENCED_ONLY,
    kind: 'EmbeddingServer',
    plural: 'embeddingservers',
    whenNotServed: 'no embeddingServerRef warnings',
    checkRank: RANK.workload,
  },
  {
    ...REFERENCED_ONLY,
    kind: 'VirtualMCPCompositeToolDefinition',
    plural: 'virtualmcpcompositetooldefinitions',
    // The whole spec is judged (its name too: a VirtualMCPServer's inline and referenced tools
    // share one name space), and the reconciler compares what it would write with what is stored.
    view: {
      keep: ['spec', 'status.validationStatus', 'status.validationErrors'],
      readinessWaits: false,
    },
    whenNotServed: 'no compositeToolRefs warnings, and no validationStatus is written',
    validationStatus: 'compositeToolDefinition',
    checkRank: RANK.config,
  },
  {
    ...REFERENCED_ONLY,
    kind: 'MCPRegistry',
    plural: 'mcpregistries',
    // Nothing names a registry, and a registry names nothing the service checks.
    whenNotServed: 'nothing: no rule reads it',
    checkRank: RANK.config,
  },
] as const satisfies KindTable

type Table = typeof TOOLHIVE_KIND_TABLE
export type ToolHiveKind = Table[number]['kind']
/** The kinds that own a proxy Deployment and a RunConfig ConfigMap. */
export type WorkloadKind = Extract<Table[number], { proxy: object }>['kind']

/** Each kind by name (`KIND.MCPServer`): how `src/` names a kind (test/policy/kind-literals.test.ts). */
export const KIND = Object.fromEntries(TOOLHIVE_KIND_TABLE.map(({ kind }) => [kind, kind])) as {
  readonly [Kind in ToolHiveKind]: Kind
}

const TOOLHIVE_KINDS: readonly ToolHiveKind[] = TOOLHIVE_KIND_TABLE.map((entry) => entry.kind)

export const WORKLOAD_KINDS: readonly WorkloadKind[] = TOOLHIVE_KIND_TABLE.flatMap((entry) =>
  'proxy' in entry ? [entry.kind] : [],
)

/** The kinds whose status is a validation verdict the reconciler writes (`validationStatus`). */
export const VALIDATION_STATUS_KINDS: readonly ToolHiveKind[] = TOOLHIVE_KIND_TABLE.flatMap(
  (entry) => ('validationStatus' in entry ? [entry.kind] : []),
)

/** The kinds whose proxy has a transport cap: only their proxies' Scales are capped. */
export const TRANSPORT_CAPPED_KINDS: readonly WorkloadKind[] = TOOLHIVE_KIND_TABLE.flatMap(
  (entry) => ('proxy' in entry && 'transportCap' in entry.proxy ? [entry.kind] : []),
)

/**
 * Whether the reconciler writes any status of the kind (conditions or `validationStatus`): its
 * status subresource is what the chart lets the service patch.
 */
export function writesStatus(entry: ToolHiveKindEntry): boolean {
  return entry.conditions.length > 0 || entry.validationStatus !== undefined
}

export function isToolHiveKind(kind: unknown): kind is ToolHiveKind {
  return (TOOLHIVE_KINDS as readonly unknown[]).includes(kind)
}

const ENTRIES = Object.fromEntries(
  TOOLHIVE_KIND_TABLE.map((entry): [string, ToolHiveKindEntry] => [entry.kind, entry]),
) as { readonly [Kind in ToolHiveKind]: ToolHiveKindEntry }

/** The entry of a kind of the table. */
export function entryOf(kind: ToolHiveKind): ToolHiveKindEntry {
  return ENTRIES[kind]
}

/** The entry for `kind` in `kinds`, or undefined when it is not one of them. */
export function toolHiveKind(
  kind: unknown,
  kinds: KindTable = TOOLHIVE_KIND_TABLE,
): ToolHiveKindEntry | undefined {
  return kinds.find((entry) => entry.kind === kind)
}
