/**
 * What the service knows of each ToolHive kind (DESIGN §3–§6), one entry per kind. The admission
 * routes, the cluster view and its RBAC, the status reconciler and the CLI's `check` read this
 * table: a new kind is one entry here plus the rules it names (docs/architecture.md).
 */

export const TOOLHIVE_GROUP = 'toolhive.stacklok.dev'

/** The validating rule that answers a kind's CREATE and UPDATE (`admission/routes.ts`). */
export type ValidationRule = 'workload' | 'webhookConfig'

/** A status condition the reconciler stamps (`status-conditions.ts`, DESIGN §6). */
export type StatusRule = 'stdioReplicaCap' | 'sessionStorage' | 'valid'

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
  /**
   * For the kinds that own a proxy Deployment and a RunConfig ConfigMap (DESIGN §3): the suffix
   * of that ConfigMap's name after the workload's.
   */
  readonly runConfigSuffix?: string
  readonly validation: ValidationRule
  /** The conditions the reconciler stamps, in the order it writes them. */
  readonly conditions: readonly StatusRule[]
  /** `check` admits lower ranks first: a config before the workloads that reference it. */
  readonly checkRank: number
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
    runConfigSuffix: '-runconfig',
    validation: 'workload',
    conditions: ['stdioReplicaCap', 'sessionStorage'],
    checkRank: 1,
  },
  {
    kind: 'MCPRemoteProxy',
    group: TOOLHIVE_GROUP,
    versions: ['v1beta1', 'v1alpha1'],
    plural: 'mcpremoteproxies',
    namespaced: true,
    runConfigSuffix: '-runconfig',
    validation: 'workload',
    conditions: ['sessionStorage'],
    checkRank: 1,
  },
  {
    kind: 'VirtualMCPServer',
    group: TOOLHIVE_GROUP,
    versions: ['v1beta1', 'v1alpha1'],
    plural: 'virtualmcpservers',
    namespaced: true,
    runConfigSuffix: '-vmcp-config',
    validation: 'workload',
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
    validation: 'webhookConfig',
    conditions: ['valid'],
    checkRank: 0,
  },
] as const satisfies readonly ToolHiveKindEntry[]

type Table = typeof TOOLHIVE_KIND_TABLE
export type ToolHiveKind = Table[number]['kind']
/** The kinds that own a proxy Deployment and a RunConfig ConfigMap. */
export type WorkloadKind = Extract<Table[number], { runConfigSuffix: string }>['kind']

const TOOLHIVE_KINDS: readonly ToolHiveKind[] = TOOLHIVE_KIND_TABLE.map((entry) => entry.kind)

export const WORKLOAD_KINDS: readonly WorkloadKind[] = TOOLHIVE_KIND_TABLE.flatMap((entry) =>
  'runConfigSuffix' in entry ? [entry.kind] : [],
)

export function isToolHiveKind(kind: unknown): kind is ToolHiveKind {
  return (TOOLHIVE_KINDS as readonly unknown[]).includes(kind)
}

/** The table's entry for `kind`, or undefined when it is not a ToolHive kind. */
export function toolHiveKind(kind: unknown): ToolHiveKindEntry | undefined {
  return TOOLHIVE_KIND_TABLE.find((entry) => entry.kind === kind)
}
