/** Names, keys and kinds of the ToolHive objects (DESIGN §3–§4), in one place. */

export const TOOLHIVE_GROUP = 'toolhive.stacklok.dev'

export const TOOLHIVE_KINDS = [
  'MCPServer',
  'MCPRemoteProxy',
  'VirtualMCPServer',
  'MCPWebhookConfig',
] as const
export type ToolHiveKind = (typeof TOOLHIVE_KINDS)[number]

/** Kinds that own a proxy Deployment and a RunConfig ConfigMap. */
export const WORKLOAD_KINDS = ['MCPServer', 'MCPRemoteProxy', 'VirtualMCPServer'] as const
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number]

export const ANNOTATIONS = {
  contentChecksum: 'toolhive.stacklok.dev/content-checksum',
  runConfigChecksum: 'toolhive.stacklok.dev/runconfig-checksum',
  mcpServerGeneration: 'toolhive.stacklok.dev/mcpserver-generation',
  podVolumesHash: 'toolhive.stacklok.io/podvolumes-hash',
} as const

/**
 * The finalizer recent ToolHive operators put on an MCPWebhookConfig: it holds a deleted config
 * until no MCPServer references it (DESIGN §5.1).
 */
export const WEBHOOK_CONFIG_FINALIZER = 'mcpwebhookconfig.toolhive.stacklok.dev/finalizer'

export const RUNCONFIG_COMPONENT_LABEL = 'toolhive.stacklok.io/component'
export const RUNCONFIG_COMPONENTS = ['run-config', 'vmcp-config'] as const

/** The RunConfig ConfigMap name of a workload (DESIGN §3). */
export function runConfigMapName(kind: WorkloadKind, workloadName: string): string {
  return kind === 'VirtualMCPServer' ? `${workloadName}-vmcp-config` : `${workloadName}-runconfig`
}

export function isToolHiveKind(kind: unknown): kind is ToolHiveKind {
  return (TOOLHIVE_KINDS as readonly unknown[]).includes(kind)
}
