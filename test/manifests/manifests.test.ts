/**
 * Safety properties of what is shipped, checked on the manifests as kustomize renders them (the
 * end-to-end suite proves the API server accepts them): webhooks that cannot take the cluster
 * down, a hardened pod, disruption budget and replicas, least-privilege RBAC, and the webhook
 * rules and RBAC against the kind table. The chart is their source, but rendering it takes helm;
 * the kustomize files are the chart's defaults rendered by `npm run manifests`, and
 * generated.test.ts proves them generated from the chart as it is now, so these checks hold for
 * the chart's defaults too.
 */

import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { TOOLHIVE_GROUP, TOOLHIVE_KIND_TABLE, writesStatus } from '../../src/policy/kinds.ts'
import type { ToolHiveKindEntry } from '../../src/policy/kinds.ts'
import { RULE_TABLE } from '../../src/policy/rules.ts'
import { WEBHOOK_TABLE } from '../../src/policy/webhooks.ts'

type Any = Record<string, any>

/**
 * What each validating rule of the table is sent, and by which webhook (the chart's two, whose
 * failure policies differ): an MCPWebhookConfig's DELETE too, refused while it is referenced
 * (docs/enforcement.md#references-and-deletes).
 */
/** The rules of the rule table that judge `entry`'s kind: the operations and webhook it is sent. */
function sentFor(entry: ToolHiveKindEntry): { operations: string[]; webhooks: string[] } {
  const rules = RULE_TABLE.filter((rule) =>
    (rule.matches as readonly string[]).includes(entry.kind),
  )
  const operations = new Set<string>(rules.flatMap((rule) => rule.operations))
  return {
    operations: ['CREATE', 'UPDATE', 'DELETE'].filter((operation) => operations.has(operation)),
    webhooks: [...new Set(rules.map((rule) => rule.webhook))].map(
      (id) => WEBHOOK_TABLE.find((webhook) => webhook.id === id)?.name ?? id,
    ),
  }
}
const scopeOf = (entry: ToolHiveKindEntry) => (entry.namespaced ? 'Namespaced' : 'Cluster')
const MANIFESTS = fileURLToPath(new URL('../../manifests/', import.meta.url))

function render(dir: string): Any[] | undefined {
  try {
    const text = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' })
    return parseAllDocuments(text).map((document) => document.toJS() as Any)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/**
 * Whether these checks must run rather than skip without kubectl: in CI, where a skip would pass
 * unseen. As in test/e2e/run.ts, MCP_ADMISSION_E2E=required (set by .ci/run) makes them
 * mandatory; any other value of it is an explicit choice and wins over a `CI` variable.
 */
function kubectlRequired(env: NodeJS.ProcessEnv): boolean {
  const mode = env['MCP_ADMISSION_E2E']
  if (mode !== undefined && mode !== '') return mode === 'required'
  const ci = env['CI']
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false'
}

const full = render(MANIFESTS)
if (!full) {
  if (kubectlRequired(process.env)) {
    t.fail(
      'kubectl is required (MCP_ADMISSION_E2E=required or CI is set) but is not installed, ' +
        'so kustomize cannot render manifests/',
    )
  } else {
    t.comment('SKIPPED: kubectl is not installed, so kustomize cannot render manifests/')
    t.pass('nothing to check without kubectl')
  }
} else {
  const base = render(`${MANIFESTS}base`)!
  const one = (objects: Any[], kind: string) => {
    const found = objects.filter((o) => o['kind'] === kind)
    if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`)
    return found[0]!
  }

  for (const [name, objects] of [
    ['manifests/', full],
    ['manifests/base', base],
  ] as const) {
    t.test(`${name}: every webhook is safe to have in the admission chain`, async (t) => {
      const configurations = objects.filter((o) => /WebhookConfiguration$/.test(o['kind']))
      t.equal(configurations.length, 2)
      const webhooks = configurations.flatMap((c) => c['webhooks'] as Any[])
      t.ok(webhooks.length >= 5)
      for (const webhook of webhooks) {
        const label = webhook['name']
        t.equal(webhook['sideEffects'], 'None', `${label}: sideEffects None`)
        t.ok(webhook['timeoutSeconds'] <= 10, `${label}: timeout ≤ 10 s`)
        t.same(webhook['admissionReviewVersions'], ['v1'], `${label}: v1 reviews`)
        t.equal(webhook['matchPolicy'], 'Equivalent', `${label}: matchPolicy`)
        t.match(webhook['failurePolicy'], /^(Fail|Ignore)$/, `${label}: explicit failurePolicy`)
        const excluded = (webhook['namespaceSelector']?.matchExpressions ?? []).find(
          (e: Any) => e['key'] === 'kubernetes.io/metadata.name' && e['operator'] === 'NotIn',
        )
        t.ok(excluded, `${label}: namespaces excluded by name`)
        t.ok(excluded?.values.includes('kube-system'), `${label}: not kube-system`)
        t.ok(excluded?.values.includes('mcp-admission'), `${label}: not its own namespace`)
        t.match(webhook['clientConfig'], {
          service: { name: 'mcp-admission', namespace: 'mcp-admission', port: 443 },
        })
        t.match(webhook['clientConfig'].service.path, /^\/(mutate|validate)$/)
        // Failing closed must block only ToolHive's own writes: its kinds, or objects narrowed
        // by a selector or a match condition (test/e2e/blast-radius proves the narrowing).
        const toolhiveKinds = (webhook['rules'] as Any[]).every((rule) =>
          (rule['apiGroups'] as string[]).every((group) => group === 'toolhive.stacklok.dev'),
        )
        const narrowed =
          webhook['objectSelector'] !== undefined || (webhook['matchConditions'] ?? []).length > 0
        if (webhook['failurePolicy'] === 'Fail')
          t.ok(toolhiveKinds || narrowed, `${label}: fails closed for ToolHive objects only`)
      }
    })

    t.test(
      `${name}: the validating webhook sends every kind of the table, at every version`,
      async (t) => {
        // A kind or version added to the table but missing here would pass every other unit test:
        // the routes answer it, yet the API server would never send it.
        const webhooks = one(objects, 'ValidatingWebhookConfiguration')['webhooks'] as Any[]
        const rules = webhooks.flatMap((webhook) =>
          (webhook['rules'] as Any[])
            .filter((rule) => (rule['apiGroups'] as string[]).includes(TOOLHIVE_GROUP))
            .map((rule): Any => ({ ...rule, webhook: webhook['name'] as string })),
        )
        const sent = TOOLHIVE_KIND_TABLE.filter((entry) => sentFor(entry).webhooks.length > 0)
        t.same(
          [...new Set(rules.flatMap((rule) => rule['resources'] as string[]))].sort(),
          sent.map((entry) => entry.plural).sort(),
          'every kind a rule matches, and nothing else of the group',
        )
        for (const entry of sent) {
          const its = rules.filter((rule) => (rule['resources'] as string[]).includes(entry.plural))
          for (const rule of its) {
            t.same(rule['apiGroups'], [TOOLHIVE_GROUP], `${entry.kind}: its group only`)
            t.same(
              [...rule['apiVersions']].sort(),
              [...entry.versions].sort(),
              `${entry.kind}: exactly its versions`,
            )
            t.equal(rule['scope'], scopeOf(entry), `${entry.kind}: its scope`)
          }
          t.same(
            ['CREATE', 'UPDATE', 'DELETE'].filter((operation) =>
              its.some((rule) => (rule['operations'] as string[]).includes(operation)),
            ),
            sentFor(entry).operations,
            `${entry.kind}: the operations its rules answer`,
          )
          t.same(
            its.map((rule) => rule['webhook']).sort(),
            [...sentFor(entry).webhooks].sort(),
            `${entry.kind}: once to each webhook of its rules`,
          )
        }
      },
    )

    t.test(`${name}: the pod is hardened, replicated and protected from disruption`, async (t) => {
      const deployment = one(objects, 'Deployment')
      const pod = deployment['spec'].template
      t.ok(deployment['spec'].replicas >= 2, 'at least 2 replicas')
      t.ok(
        pod.spec.topologySpreadConstraints.some(
          (c: Any) => c['topologyKey'] === 'kubernetes.io/hostname',
        ),
        'spread across nodes',
      )
      t.match(pod.spec.securityContext, {
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      })
      t.ok(
        Number.isInteger(pod.spec.securityContext.runAsUser) &&
          pod.spec.securityContext.runAsUser > 0,
        'numeric non-root user',
      )
      const [container, ...others] = pod.spec.containers as Any[]
      t.equal(others.length, 0)
      t.match(container!['securityContext'], {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      })
      t.ok(
        container!['resources'].requests.cpu && container!['resources'].requests.memory,
        'requests',
      )
      t.ok(container!['resources'].limits.memory, 'memory limit')
      t.match(container!['readinessProbe'], { httpGet: { path: '/readyz', port: 'probes' } })
      t.match(container!['livenessProbe'], { httpGet: { path: '/healthz', port: 'probes' } })
      t.ok(container!['lifecycle'].preStop, 'a pre-stop delay')
      t.ok(pod.spec.terminationGracePeriodSeconds >= 30)

      const pdb = one(objects, 'PodDisruptionBudget')
      t.same(
        pdb['spec'].selector.matchLabels,
        deployment['spec'].selector.matchLabels,
        'the PDB selects the pods',
      )
      t.ok(pdb['spec'].minAvailable >= 1)
      const service = one(objects, 'Service')
      t.same(
        service['spec'].selector,
        deployment['spec'].selector.matchLabels,
        'the Service selects the pods',
      )
      const portNames = (container!['ports'] as Any[]).map((p) => p['name'])
      for (const port of service['spec'].ports as Any[])
        t.ok(portNames.includes(port['targetPort']), `${port['name']} targets a container port`)
      t.equal(
        one(objects, 'Namespace')['metadata'].labels['pod-security.kubernetes.io/enforce'],
        'restricted',
      )
    })

    t.test(`${name}: RBAC is least privilege`, async (t) => {
      const rules = objects
        .filter((o) => o['kind'] === 'ClusterRole' || o['kind'] === 'Role')
        .flatMap((role) => role['rules'] as Any[])
      for (const rule of rules) {
        t.notOk(
          (rule['resources'] as string[]).some((r) => r === 'secrets' || r === '*'),
          'no secrets, no wildcards',
        )
        t.notOk((rule['verbs'] as string[]).includes('*'), 'no wildcard verbs')
        const writes = (rule['verbs'] as string[]).filter(
          (v) => !['get', 'list', 'watch'].includes(v),
        )
        if (writes.length === 0) continue
        const allowed = (rule['resources'] as string[]).every(
          (r) => r.endsWith('/status') || r === 'leases',
        )
        t.ok(allowed, `writes only status and leases: ${JSON.stringify(rule)}`)
      }
    })

    t.test(`${name}: RBAC covers exactly the kind table's ToolHive resources`, async (t) => {
      // Every resource and verb granted in the group, against what the view reads (every kind) and
      // the reconciler writes (the status subresource of every kind it writes); nothing else.
      const granted = objects
        .filter((o) => o['kind'] === 'ClusterRole' || o['kind'] === 'Role')
        .flatMap((role) => role['rules'] as Any[])
        .filter((rule) => (rule['apiGroups'] as string[]).includes(TOOLHIVE_GROUP))
        .flatMap((rule) =>
          (rule['resources'] as string[]).flatMap((resource) =>
            (rule['verbs'] as string[]).map((verb) => `${resource} ${verb}`),
          ),
        )
        .sort()
      const expected = TOOLHIVE_KIND_TABLE.flatMap((entry) => [
        ...['get', 'list', 'watch'].map((verb) => `${entry.plural} ${verb}`),
        ...(writesStatus(entry)
          ? ['get', 'patch'].map((verb) => `${entry.plural}/status ${verb}`)
          : []),
      ]).sort()
      t.same(granted, expected, 'read every kind, get and patch the status of every stamped kind')
    })

    t.test(
      `${name}: RBAC outside ToolHive and its Lease: namespaces, and single reads`,
      async (t) => {
        // Namespaces are listed and watched (whether each is terminating, for the delete guard);
        // a RunConfig ConfigMap and a Deployment are only ever read one at a time.
        const granted = objects
          .filter((o) => o['kind'] === 'ClusterRole' || o['kind'] === 'Role')
          .flatMap((role) => role['rules'] as Any[])
          .filter((rule) =>
            (rule['apiGroups'] as string[]).every(
              (group) => group !== TOOLHIVE_GROUP && group !== 'coordination.k8s.io',
            ),
          )
          .flatMap((rule) =>
            (rule['apiGroups'] as string[]).flatMap((group) =>
              (rule['resources'] as string[]).flatMap((resource) =>
                (rule['verbs'] as string[]).map((verb) => `${group}/${resource} ${verb}`),
              ),
            ),
          )
          .sort()
        t.same(granted, [
          '/configmaps get',
          '/namespaces get',
          '/namespaces list',
          '/namespaces watch',
          'apps/deployments get',
        ])
      },
    )
  }

  t.test(
    'the cert-manager component injects the CA into both webhook configurations',
    async (t) => {
      for (const configuration of full.filter((o) => /WebhookConfiguration$/.test(o['kind']))) {
        t.equal(
          configuration['metadata'].annotations['cert-manager.io/inject-ca-from'],
          'mcp-admission/mcp-admission-serving',
        )
      }
      const serving = full.find(
        (o) => o['kind'] === 'Certificate' && o['metadata'].name === 'mcp-admission-serving',
      )!
      t.same(serving['spec'].dnsNames, [
        'mcp-admission.mcp-admission.svc',
        'mcp-admission.mcp-admission.svc.cluster.local',
      ])
      t.equal(
        serving['spec'].secretName,
        one(full, 'Deployment')['spec'].template.spec.volumes[0].secret.secretName,
      )
      t.notOk(
        base.some((o) => o['kind'] === 'Certificate'),
        'the base provisions no certificates',
      )
    },
  )

  t.test("the README's image override reaches the Deployment", async (t) => {
    // What `kustomize edit set image ghcr.io/stacklok/mcp-admission=…` writes, in an overlay.
    const overlay = mkdtempSync(join(tmpdir(), 'mcp-admission-overlay-'))
    t.teardown(() => {
      rmSync(overlay, { recursive: true, force: true })
    })
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      JSON.stringify({
        resources: [relative(overlay, MANIFESTS)],
        images: [
          {
            name: 'ghcr.io/stacklok/mcp-admission',
            newName: 'registry.example.com/mcp-admission',
            newTag: '0.1.0',
          },
        ],
      }),
    )
    const text = execFileSync(
      'kubectl',
      ['kustomize', '--load-restrictor=LoadRestrictionsNone', overlay],
      { encoding: 'utf8' },
    )
    const objects = parseAllDocuments(text).map((document) => document.toJS() as Any)
    t.equal(
      one(objects, 'Deployment')['spec'].template.spec.containers[0].image,
      'registry.example.com/mcp-admission:0.1.0',
    )
  })
}
