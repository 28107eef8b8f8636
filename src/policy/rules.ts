/**
 * The rules, one entry each: the stable public name users see (audit annotations, reports,
 * metrics, settings), the webhook that serves it (`webhooks.ts`), what it matches, its severity
 * and its validation actions. The admission routes bind each name to its handler
 * (`admission/routes.ts`), and the chart's webhook rules are generated from here with the kind
 * table (docs/architecture.md, "Where each change goes").
 */

import { KIND, TOOLHIVE_KIND_TABLE } from './kinds.ts'
import { referringKinds } from './references.ts'
import type { ToolHiveKind } from './kinds.ts'
import type { WebhookId } from './webhooks.ts'

/** ValidatingAdmissionPolicy's actions on a violation: refuse, warn the client, audit-log it. */
export const VALIDATION_ACTIONS = ['Deny', 'Warn', 'Audit'] as const
export type ValidationAction = (typeof VALIDATION_ACTIONS)[number]

/** OpenReports' severities, most serious first. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const
export type Severity = (typeof SEVERITIES)[number]

/** The operations a rule can be sent (CONNECT: none of ours). */
export type RuleOperation = 'CREATE' | 'UPDATE' | 'DELETE'

/** A resource outside ToolHive's group, as the request names it and as the webhook rule does. */
export interface ResourceMatch {
  /** `request.kind`: what the object under review is. */
  readonly group: string
  readonly kind: string
  /** `request.resource` and `request.subResource` (`''` for the main resource). */
  readonly resourceGroup: string
  readonly version: string
  readonly resource: string
  readonly subResource: string
}

export interface RuleEntry {
  /** Kebab-case, stable: a rename is a breaking change for every report and setting. */
  readonly name: string
  readonly webhook: WebhookId
  readonly operations: readonly RuleOperation[]
  /** The ToolHive kinds it judges (from the kind table), or the other resources it matches. */
  readonly matches: readonly ToolHiveKind[] | readonly ResourceMatch[]
  readonly severity: Severity
  /** What its violations become unless a setting says otherwise, and what a setting may say. */
  readonly actions: {
    readonly default: readonly ValidationAction[]
    readonly allowed: readonly ValidationAction[]
  }
  /** One line for people: what the rule holds. */
  readonly summary: string
}

const ALL_ACTIONS = VALIDATION_ACTIONS
/** A rule that only warns: refusing with it would deny what no rule says is wrong. */
const WARNINGS_ONLY = { default: ['Warn'], allowed: ['Warn', 'Audit'] } as const
const DENY = { default: ['Deny'], allowed: ALL_ACTIONS } as const

const toolHiveKinds = (select: (entry: (typeof TOOLHIVE_KIND_TABLE)[number]) => boolean) =>
  TOOLHIVE_KIND_TABLE.filter(select).map((entry) => entry.kind)

export const RULE_TABLE = [
  {
    name: 'runconfig-content-checksum',
    webhook: 'runConfigs',
    operations: ['CREATE', 'UPDATE'],
    matches: [
      {
        group: '',
        kind: 'ConfigMap',
        resourceGroup: '',
        version: 'v1',
        resource: 'configmaps',
        subResource: '',
      },
    ],
    severity: 'high',
    actions: DENY,
    summary: 'a RunConfig ConfigMap carries the checksum of its content',
  },
  {
    name: 'proxy-deployment',
    webhook: 'deployments',
    operations: ['CREATE', 'UPDATE'],
    matches: [
      {
        group: 'apps',
        kind: 'Deployment',
        resourceGroup: 'apps',
        version: 'v1',
        resource: 'deployments',
        subResource: '',
      },
    ],
    severity: 'high',
    actions: DENY,
    summary:
      'a proxy Deployment carries the current RunConfig checksum and generation, the grace period and the stdio cap',
  },
  {
    name: 'stdio-scale',
    webhook: 'deploymentsScale',
    operations: ['UPDATE'],
    matches: [
      {
        group: 'autoscaling',
        kind: 'Scale',
        resourceGroup: 'apps',
        version: 'v1',
        resource: 'deployments',
        subResource: 'scale',
      },
    ],
    severity: 'medium',
    actions: DENY,
    summary: 'a stdio server is scaled to one replica at most',
  },
  {
    name: 'webhook-config',
    webhook: 'webhookConfigs',
    operations: ['CREATE', 'UPDATE'],
    matches: toolHiveKinds((entry) => entry.kind === KIND.MCPWebhookConfig),
    severity: 'high',
    actions: DENY,
    summary: 'an MCPWebhookConfig is valid as the operator will read it',
  },
  {
    name: 'webhook-config-in-use',
    webhook: 'deletes',
    operations: ['DELETE'],
    matches: toolHiveKinds((entry) => entry.kind === KIND.MCPWebhookConfig),
    severity: 'medium',
    actions: DENY,
    summary: 'an MCPWebhookConfig is not deleted from under the workloads that reference it',
  },
  {
    // Nothing else checks a workflow before a vmcp pod fails to start on it: its CRD holds no rule.
    name: 'composite-tool-definition',
    webhook: 'compositeTools',
    operations: ['CREATE', 'UPDATE'],
    matches: toolHiveKinds((entry) => entry.kind === KIND.VirtualMCPCompositeToolDefinition),
    severity: 'high',
    actions: DENY,
    summary: 'a VirtualMCPCompositeToolDefinition is a workflow the vmcp can load and run',
  },
  {
    // The delete guard of every other referenced kind: a new refusal of deletes users make
    // today, so it warns and audits until a team sets it to deny (docs/rollout.md).
    name: 'delete-guard',
    webhook: 'deletes',
    operations: ['DELETE'],
    matches: toolHiveKinds(
      (entry) => entry.kind !== KIND.MCPWebhookConfig && referringKinds(entry.kind).length > 0,
    ),
    severity: 'medium',
    actions: { default: ['Warn', 'Audit'], allowed: ALL_ACTIONS },
    summary: 'an object is not deleted from under the objects that reference it',
  },
  {
    name: 'workload',
    webhook: 'workloads',
    operations: ['CREATE', 'UPDATE'],
    matches: toolHiveKinds((entry) => 'proxy' in entry || 'references' in entry),
    severity: 'low',
    actions: WARNINGS_ONLY,
    summary:
      'a workload is warned about what its CRD cannot say: replicas, and references that name nothing',
  },
] as const satisfies readonly RuleEntry[]

export type RuleName = (typeof RULE_TABLE)[number]['name']

/** Whether `matches` names ToolHive kinds (by the kind table) rather than other resources. */
export function matchesToolHiveKinds(
  matches: RuleEntry['matches'],
): matches is readonly ToolHiveKind[] {
  return matches.every((match) => typeof match === 'string')
}
