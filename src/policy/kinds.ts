/**
 * What the service knows of each ToolHive kind, one entry per kind. The admission routes, the
 * cluster view and its RBAC, the proxy rules, the status reconciler and the CLI's `check` read
 * this table, and `src/` names a kind only through `KIND`: a new kind is one entry here plus the
 * rules it names (docs/architecture.md).
 */

import { WEBHOOK_CONFIG_FINALIZER } from './names.ts'

export const TOOLHIVE_GROUP = 'toolhive.stacklok.dev'

/** A status condition the reconciler stamps (`status-conditions.ts`, DESIGN §6). */
export type StatusRule = 'stdioReplicaCap' | 'sessionStorage' | 'valid'

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
  /** What the rules do while the cluster does not serve the kind (logged when it goes). */
  readonly whenNotServed: string
  /** The conditions the reconciler stamps, in the order it writes them. */
  readonly conditions: readonly StatusRule[]
  /** `check` admits lower ranks first: a config before the workloads that reference it. */
  readonly checkRank: number
}

/** A kind table: this module's, or one a test builds around it. */
export type KindTable = readonly ToolHiveKindEntry[]

/** What the status rules and the reconciler read of a workload (`status-conditions.ts`). */
const WORKLOAD_STATUS_READS = ['spec.replicas', 'spec.sessionStorage.provider', 'status.conditions']

/**
 * Only MCPServer has `spec.webhookConfigRef` (the CRDs of v0.63.0), and the operator's finalizer
 * counts MCPServers only. `since` is the oldest supported release, which already has it (the e2e
 * suite proves it beside v0.33.0 and v0.63.0, docs/e2e.md); no older one is servable to look at.
 */
const WEBHOOK_CONFIG_REF: Reference = {
  path: 'spec.webhookConfigRef.name',
  target: { kind: 'MCPWebhookConfig' },
  protectedBy: { finalizer: WEBHOOK_CONFIG_FINALIZER, since: 'v0.33.0' },
}

/**
 * MCPServer, MCPRemoteProxy and VirtualMCPServer are stored at v1beta1 and still served at
 * v1alpha1; MCPWebhookConfig exists only as v1alpha1 so far.
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
    references: { v1beta1: [WEBHOOK_CONFIG_REF], v1alpha1: [WEBHOOK_CONFIG_REF] },
    view: { keep: ['spec.transport', ...WORKLOAD_STATUS_READS], readinessWaits: true },
    whenNotServed:
      'a proxy Deployment naming one as its owner gets no stamp (with a warning), no Scale is capped, no MCPWebhookConfig DELETE finds a reference, no conditions are stamped',
    conditions: ['stdioReplicaCap', 'sessionStorage'],
    checkRank: 1,
  },
  {
    kind: 'MCPRemoteProxy',
    group: TOOLHIVE_GROUP,
    versions: ['v1beta1', 'v1alpha1'],
    plural: 'mcpremoteproxies',
    namespaced: true,
    proxy: { runConfigSuffix: '-runconfig', container: 'toolhive', stampsGeneration: false },
    view: { keep: WORKLOAD_STATUS_READS, readinessWaits: true },
    whenNotServed: 'no status conditions are stamped for it',
    conditions: ['sessionStorage'],
    checkRank: 1,
  },
  {
    kind: 'VirtualMCPServer',
    group: TOOLHIVE_GROUP,
    versions: ['v1beta1', 'v1alpha1'],
    plural: 'virtualmcpservers',
    namespaced: true,
    proxy: { runConfigSuffix: '-vmcp-config', container: 'vmcp', stampsGeneration: false },
    view: { keep: WORKLOAD_STATUS_READS, readinessWaits: true },
    whenNotServed: 'no status conditions are stamped for it',
    conditions: ['sessionStorage'],
    checkRank: 1,
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
    view: { keep: ['spec', 'status.conditions'], readinessWaits: true },
    whenNotServed: 'no webhookConfigRef warnings, and no Valid condition is stamped',
    conditions: ['valid'],
    checkRank: 0,
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

/** The kinds whose proxy has a transport cap: only their proxies' Scales are capped. */
export const TRANSPORT_CAPPED_KINDS: readonly WorkloadKind[] = TOOLHIVE_KIND_TABLE.flatMap(
  (entry) => ('proxy' in entry && 'transportCap' in entry.proxy ? [entry.kind] : []),
)

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
