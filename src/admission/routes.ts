/**
 * The product's routes: each rule of the rule table (`policy/rules.ts`) bound to its handler, on
 * every kind or resource the table says it matches, at the webhook that serves it. The binding is
 * typed over every rule name, so a rule added to the table without a handler does not compile.
 */

import { mutateRunConfigMap } from '../policy/content-checksum.ts'
import { TOOLHIVE_KIND_TABLE } from '../policy/kinds.ts'
import type { ToolHiveKindEntry } from '../policy/kinds.ts'
import { mutateProxyDeployment } from '../policy/proxy-deployment.ts'
import { ratchet } from '../policy/ratchet.ts'
import { RULE_TABLE, matchesToolHiveKinds } from '../policy/rules.ts'
import type { RuleEntry, RuleName } from '../policy/rules.ts'
import { capStdioScale } from '../policy/stdio-scale.ts'
import { validateCompositeToolDefinition } from '../policy/composite-tool.ts'
import { guardDelete } from '../policy/delete-guard.ts'
import { validateWebhookConfig } from '../policy/webhook-config.ts'
import { WEBHOOK_TABLE } from '../policy/webhooks.ts'
import { workloadWarnings } from '../policy/workload-warnings.ts'
import type { Handler } from './handler.ts'
import { mutatingHandler, pureMutator } from './mutating.ts'
import { gatherProxyDeploymentFacts, gatherScaleFacts } from './proxy-facts.ts'
import type { Route } from './router.ts'
import { pureValidator, validatingHandler } from './validating.ts'
import { gatherDeleteFacts, gatherWorkloadFacts } from './validation-facts.ts'

/** Every referenced kind's delete guard; MCPWebhookConfig's is its own rule by name and default. */
const DELETE_GUARD = validatingHandler({
  gather: gatherDeleteFacts,
  validate: (input, facts) => guardDelete(input.oldObject, facts),
})

/** What answers each rule: its facts from the cluster view, then the pure rule. */
const HANDLERS: { readonly [Rule in RuleName]: Handler } = {
  'runconfig-content-checksum': mutatingHandler(pureMutator(mutateRunConfigMap)),
  'proxy-deployment': mutatingHandler({
    gather: gatherProxyDeploymentFacts,
    mutate: mutateProxyDeployment,
  }),
  'stdio-scale': mutatingHandler({ gather: gatherScaleFacts, mutate: capStdioScale }),
  'webhook-config': validatingHandler(
    pureValidator((input) =>
      ratchet(input, (object) => validateWebhookConfig({ ...input, object })),
    ),
  ),
  'webhook-config-in-use': DELETE_GUARD,
  // Ratcheted inside the rule, which also lets every update through that leaves the spec alone.
  'composite-tool-definition': validatingHandler(pureValidator(validateCompositeToolDefinition)),
  'delete-guard': DELETE_GUARD,
  // Warnings only, so nothing to ratchet: the CRDs state what these objects may hold.
  workload: validatingHandler({
    gather: gatherWorkloadFacts,
    validate: (input, facts) => ({ violations: [], warnings: workloadWarnings(input, facts) }),
  }),
}

/** The routes of `rules` over the kinds of `kinds` (tests pass tables of their own). */
export function productRoutes(
  rules: readonly RuleEntry[] = RULE_TABLE,
  kinds: readonly ToolHiveKindEntry[] = TOOLHIVE_KIND_TABLE,
): Route[] {
  return rules.flatMap((rule) => routesOf(rule, kinds))
}

function routesOf(rule: RuleEntry, kinds: readonly ToolHiveKindEntry[]): Route[] {
  const webhook = WEBHOOK_TABLE.find((entry) => entry.id === rule.webhook)
  if (webhook === undefined) throw new Error(`rule ${rule.name}: no webhook ${rule.webhook}`)
  if (!Object.hasOwn(HANDLERS, rule.name)) throw new Error(`rule ${rule.name}: no handler`)
  const name = rule.name as RuleName
  const common = {
    webhook: webhook.path,
    operations: rule.operations,
    rule: name,
    handler: HANDLERS[name],
  }
  const { matches } = rule
  if (!matchesToolHiveKinds(matches))
    return matches.map(({ group, kind, resource, subResource }) => ({
      ...common,
      group,
      kind,
      subResource,
      resource,
    }))
  return kinds
    .filter((entry) => (matches as readonly string[]).includes(entry.kind))
    .map(({ group, kind }) => ({ ...common, group, kind, subResource: '' }))
}
