/** The product's route table: which policy answers which request (DESIGN §3–§5). */

import { mutateRunConfigMap } from '../policy/content-checksum.ts'
import { TOOLHIVE_KIND_TABLE } from '../policy/kinds.ts'
import type { ToolHiveKindEntry } from '../policy/kinds.ts'
import { mutateProxyDeployment } from '../policy/proxy-deployment.ts'
import { ratchet } from '../policy/ratchet.ts'
import { capStdioScale } from '../policy/stdio-scale.ts'
import { validateWebhookConfig } from '../policy/webhook-config.ts'
import { validateWebhookConfigDelete } from '../policy/webhook-config-delete.ts'
import { workloadWarnings } from '../policy/workload-warnings.ts'
import { mutatingHandler, pureMutator } from './mutating.ts'
import { gatherProxyDeploymentFacts, gatherScaleFacts } from './proxy-facts.ts'
import type { Route } from './router.ts'
import { pureValidator, validatingHandler } from './validating.ts'
import { gatherReferencingServers, gatherWorkloadFacts } from './validation-facts.ts'

export function productRoutes(): Route[] {
  return [
    {
      webhook: 'mutate',
      group: '',
      kind: 'ConfigMap',
      subResource: '',
      resource: 'configmaps',
      operations: ['CREATE', 'UPDATE'],
      rule: 'runconfig-content-checksum',
      handler: mutatingHandler(pureMutator(mutateRunConfigMap)),
    },
    {
      webhook: 'mutate',
      group: 'apps',
      kind: 'Deployment',
      subResource: '',
      resource: 'deployments',
      operations: ['CREATE', 'UPDATE'],
      rule: 'proxy-deployment',
      handler: mutatingHandler({
        gather: gatherProxyDeploymentFacts,
        mutate: mutateProxyDeployment,
      }),
    },
    {
      webhook: 'mutate',
      group: 'autoscaling',
      kind: 'Scale',
      subResource: 'scale',
      resource: 'deployments',
      operations: ['UPDATE'],
      rule: 'stdio-scale',
      handler: mutatingHandler({
        gather: gatherScaleFacts,
        mutate: capStdioScale,
      }),
    },
    ...TOOLHIVE_KIND_TABLE.flatMap(validationRoutes),
  ]
}

/** The validating routes of a ToolHive kind, by the rule its table entry names. */
function validationRoutes({ kind, group, validation }: ToolHiveKindEntry): Route[] {
  const route = (
    operations: Route['operations'],
    rule: string,
    handler: Route['handler'],
  ): Route => ({
    webhook: 'validate',
    group,
    kind,
    subResource: '',
    operations,
    rule,
    handler,
  })
  switch (validation) {
    case 'webhookConfig':
      return [
        route(
          ['CREATE', 'UPDATE'],
          'webhook-config',
          validatingHandler(
            pureValidator((input) =>
              ratchet(input, (object) => validateWebhookConfig({ ...input, object })),
            ),
          ),
        ),
        route(
          ['DELETE'],
          'webhook-config-in-use',
          validatingHandler({
            gather: gatherReferencingServers,
            validate: (input, deletion) =>
              validateWebhookConfigDelete(
                deletion.name,
                input.oldObject,
                deletion.referencingServers,
              ),
          }),
        ),
      ]
    case 'workload':
      // Warnings only, so nothing to ratchet: the CRDs state what these objects may hold.
      return [
        route(
          ['CREATE', 'UPDATE'],
          'workload',
          validatingHandler({
            gather: gatherWorkloadFacts,
            validate: (input, facts) => ({
              violations: [],
              warnings: workloadWarnings(input, facts),
            }),
          }),
        ),
      ]
  }
}
