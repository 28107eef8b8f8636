/**
 * Names and keys of the ToolHive objects (docs/enforcement.md#which-objects-it-recognises), in one
 * place; the kinds are in kinds.ts.
 */

export const ANNOTATIONS = {
  contentChecksum: 'toolhive.stacklok.dev/content-checksum',
  runConfigChecksum: 'toolhive.stacklok.dev/runconfig-checksum',
  mcpServerGeneration: 'toolhive.stacklok.dev/mcpserver-generation',
} as const

/**
 * The finalizer recent ToolHive operators put on an MCPWebhookConfig: it holds a deleted config
 * until no MCPServer references it (docs/enforcement.md#mcpwebhookconfig).
 */
export const WEBHOOK_CONFIG_FINALIZER = 'mcpwebhookconfig.toolhive.stacklok.dev/finalizer'

export const RUNCONFIG_COMPONENT_LABEL = 'toolhive.stacklok.io/component'
export const RUNCONFIG_COMPONENTS = ['run-config', 'vmcp-config'] as const
