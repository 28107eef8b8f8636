/**
 * docs/enforcement.md#never-a-fight-with-the-operator: a proxy Deployment written the way a current
 * ToolHive operator writes it is admitted with an empty patch on CREATE and UPDATE, for all three
 * kinds, whatever keys the operator computes itself (the pod volumes hash, the auth server CA
 * checksum, a restart stamp) and whatever the owner's overrides say about them.
 */

import t from 'tap'
import { createAdmission } from '../../src/admission/webhook.ts'
import type { ReviewOutcome } from '../../src/admission/webhook.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import { generationEnvEntry } from '../../src/policy/generation-env.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { WORKLOAD_KINDS } from '../../src/policy/kinds.ts'
import type { WorkloadKind } from '../../src/policy/kinds.ts'
import { patchOf, review } from '../helpers/objects.ts'
import { proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

type Any = Record<string, any>

const VOLUMES_HASH = 'toolhive.stacklok.io/podvolumes-hash'
const CA_CHECKSUM = 'toolhive.stacklok.dev/authserver-ca-checksum'
const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt'

function owner(kind: WorkloadKind): KubeObject {
  return workload(kind, 'demo', {
    generation: 6,
    spec: {
      ...(kind === 'MCPServer' ? { transport: 'streamable-http' } : {}),
      resourceOverrides: {
        proxyDeployment: {
          podTemplateMetadataOverrides: {
            annotations: { [CA_CHECKSUM]: 'user-value', 'team.example.com/owner': 'blue' },
            labels: { 'team.example.com/tier': 'gold' },
          },
        },
      },
    },
  })
}

/** What a current operator writes: every invariant, its own keys, the override applied under. */
function operatorWritten(kind: WorkloadKind, volumesHash: string): Any {
  const map = runConfigFor(kind, 'demo')
  const deployment = proxyDeployment(kind, 'demo', {
    podAnnotations: {
      'team.example.com/owner': 'blue',
      [CA_CHECKSUM]: 'operator-ca-checksum',
      [RESTARTED_AT]: '2026-11-25T10:00:00Z',
      [ANNOTATIONS.runConfigChecksum]: String(effectiveContentChecksum(map)),
      ...(kind === 'MCPServer' ? { [ANNOTATIONS.mcpServerGeneration]: '6' } : {}),
    },
    ...(kind === 'MCPServer' ? { env: [generationEnvEntry()] } : {}),
    volumes: [{ name: 'vmcp-config', configMap: { name: 'demo-vmcp-config' } }],
  }) as Any
  deployment.metadata.annotations = { [VOLUMES_HASH]: volumesHash }
  deployment.spec.template.spec.terminationGracePeriodSeconds = 30
  return deployment
}

function reviewed(outcome: ReviewOutcome) {
  if (!outcome.ok) throw new Error(`expected a review, got 400: ${outcome.message}`)
  return outcome.review.response
}

for (const kind of WORKLOAD_KINDS) {
  t.test(`${kind}: an operator-written proxy Deployment gets an empty patch`, async (t) => {
    const admission = createAdmission({
      view: new MemoryView([owner(kind), runConfigFor(kind, 'demo')]),
    })
    const created = operatorWritten(kind, 'e0badf61')
    const onCreate = reviewed(await admission.review(review(created), 'mutate'))
    t.equal(onCreate.allowed, true)
    t.same(patchOf(onCreate), [], 'CREATE: no patch')

    // The operator's hash changed with its desired volumes: the new value is its to write.
    const updated = operatorWritten(kind, '9792a0fe')
    const request = review(updated, { operation: 'UPDATE' }) as Any
    request.request.oldObject = created
    const onUpdate = reviewed(await admission.review(request, 'mutate'))
    t.equal(onUpdate.allowed, true)
    t.same(patchOf(onUpdate), [], 'UPDATE: no patch')
  })
}
