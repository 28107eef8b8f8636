/**
 * The AdmissionReviews the benchmark sends: a proxy Deployment CREATE needing the full mutation
 * (any size), the same Deployment already holding every invariant, an MCPWebhookConfig CREATE and
 * a RunConfig ConfigMap CREATE. Scenario 2 is scenario 1's object with the webhook's own patch
 * applied, computed in-process by the same pipeline the server runs.
 */

import { applyPatch } from '../test/helpers/apply-patch.ts'
import type { PatchOperation } from '../src/admission/patch.ts'
import type { AdmissionReviewResponse, WebhookName } from '../src/admission/review.ts'
import { createAdmission } from '../src/admission/webhook.ts'
import { MemoryView } from '../src/cluster/memory-view.ts'
import type { KubeObject } from '../src/policy/kube/object.ts'
import {
  CONFIG_KINDS,
  TARGET,
  TARGET_REFERENCES,
  configObject,
  mcpServer,
  runConfigJson,
  runConfigMap,
  webhookConfig,
} from './population.ts'
import { TOKEN, withToken } from './token.ts'

export type ScenarioId = 's1' | 's2' | 's3' | 's4'

export interface Scenario {
  readonly id: ScenarioId
  readonly title: string
  readonly webhook: WebhookName
  /** Serialised AdmissionReviews, sent in turn, each with its placeholders filled (token.ts). */
  readonly bodies: readonly string[]
  /** What the product must answer; returns a problem, or undefined when the answer is right. */
  readonly check: (review: AdmissionReviewResponse) => string | undefined
}

/** The bytes of scenario 1's review (the issue's "realistic ~8 KB review"). */
export const SCENARIO_1_BYTES = 8 * 1024

/**
 * Distinct precomputed objects of scenario 2, enough that a content-keyed cache in the policy
 * would not answer from memory, as for a stream of new Deployments.
 */
export const SCENARIO_2_VARIANTS = 2048

/** A uid with the per-request placeholder. */
function uid(scenario: number): string {
  return `b3a3f1a2-0000-4000-8000-000${scenario}${TOKEN}`
}

/**
 * The target MCPServer, its RunConfig ConfigMap and the configs it names, exactly as every
 * population holds them.
 */
export function targetObjects(): KubeObject[] {
  const named = new Set(Object.values(TARGET_REFERENCES))
  const configs = CONFIG_KINDS.flatMap((kind) => {
    const c = Number(TARGET.namespace.slice(-2))
    return named.has(`${kind.prefix}-${c}`) ? [configObject(kind, c)] : []
  })
  return [
    ...configs,
    mcpServer(TARGET.name, TARGET.namespace, 0, {
      uid: TARGET.uid,
      generation: TARGET.generation,
      stdio: true,
      overrides: true,
      references: TARGET_REFERENCES,
    }),
    runConfigMap(TARGET.name, TARGET.namespace, runConfigJson(TARGET.name, 0, true)),
  ]
}

function review(
  resource: { group: string; version: string; kind: string; resource: string },
  object: KubeObject,
  uid: string,
): Record<string, unknown> {
  const { group, version, kind } = resource
  const gvk = { group, version, kind }
  const gvr = { group, version, resource: resource.resource }
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: object.metadata?.name,
      namespace: object.metadata?.namespace,
      operation: 'CREATE',
      userInfo: {
        username: 'system:serviceaccount:toolhive-system:toolhive-operator',
        uid: '0f6c3f4e-7d1a-4a57-b3c2-7a9e3c1d2b10',
        groups: [
          'system:serviceaccounts',
          'system:serviceaccounts:toolhive-system',
          'system:authenticated',
        ],
      },
      object,
      oldObject: null,
      dryRun: false,
      options: {
        kind: 'CreateOptions',
        apiVersion: 'meta.k8s.io/v1',
        fieldManager: 'toolhive-operator',
      },
    },
  }
}

const DEPLOYMENT = { group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments' }

function env(name: string, value: string): Record<string, unknown> {
  return { name, value }
}

function fieldEnv(name: string, fieldPath: string): Record<string, unknown> {
  return { name, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } } }
}

/** Fields the API server defaults on a container before admission sees it. */
const CONTAINER_DEFAULTS = {
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
}

function sidecar(name: string, image: string, envCount: number): Record<string, unknown> {
  return {
    name,
    image,
    args: ['--config', `/etc/${name}/config.yaml`],
    env: Array.from({ length: envCount }, (_, e) =>
      env(`${name.toUpperCase().replaceAll('-', '_')}_OPTION_${e}`, `value-${e}`),
    ),
    resources: { limits: { cpu: '100m', memory: '64Mi' }, requests: { cpu: '10m' } },
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
    ...CONTAINER_DEFAULTS,
  }
}

/**
 * The proxy Deployment as the operator writes it (and the API server defaults it) for the target
 * MCPServer, before admission: no checksum, generation, downward-API entry or grace period, and
 * 2 replicas for a stdio server. `full` adds the API server's defaults, probes, two sidecars and
 * more volumes (about 7 KB); without it the Deployment is as small as the operator writes it.
 */
function proxyDeployment(full: boolean): KubeObject {
  const name = TARGET.name
  const labels = {
    app: 'mcpserver',
    'app.kubernetes.io/name': 'mcpserver',
    'app.kubernetes.io/instance': name,
    toolhive: 'true',
    'toolhive-name': name,
  }
  const toolhive: Record<string, unknown> = {
    name: 'toolhive',
    image: 'ghcr.io/stacklok/toolhive/proxyrunner:v0.6.4',
    args: ['run', '--foreground=true', `ghcr.io/stackloklabs/${name}:1.0.0`],
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: [
      env('XDG_CONFIG_HOME', '/tmp'),
      env('TOOLHIVE_RUNTIME', 'kubernetes'),
      env('UNSTRUCTURED_LOGS', 'false'),
      ...(full
        ? [
            fieldEnv('POD_NAME', 'metadata.name'),
            fieldEnv('POD_NAMESPACE', 'metadata.namespace'),
            env('OTEL_EXPORTER_OTLP_ENDPOINT', 'http://otel-collector.observability:4317'),
            env('OTEL_SERVICE_NAME', `toolhive-proxy-${name}`),
            env('TOOLHIVE_DEBUG', 'false'),
          ]
        : []),
    ],
    volumeMounts: [
      { name: 'runconfig', mountPath: '/etc/runconfig', readOnly: true },
      { name: 'ca-bundle', mountPath: '/etc/ssl/extra', readOnly: true },
    ],
    ...(full
      ? {
          resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '50m' } },
          livenessProbe: {
            httpGet: { path: '/health', port: 'http', scheme: 'HTTP' },
            initialDelaySeconds: 10,
            periodSeconds: 10,
            timeoutSeconds: 1,
            successThreshold: 1,
            failureThreshold: 3,
          },
          readinessProbe: {
            httpGet: { path: '/health', port: 'http', scheme: 'HTTP' },
            periodSeconds: 5,
            timeoutSeconds: 1,
            successThreshold: 1,
            failureThreshold: 3,
          },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
            capabilities: { drop: ['ALL'] },
          },
          ...CONTAINER_DEFAULTS,
        }
      : {}),
  }
  // The CA bundle's ConfigMap name carries the placeholder, like a kustomize-generated name with
  // its content hash: every request has different volumes (see token.ts).
  const caBundle = { name: `corporate-ca-${TOKEN}`, items: [{ key: 'ca.crt', path: 'corp.crt' }] }
  const volumes: Record<string, unknown>[] = [
    { name: 'runconfig', configMap: { name: `${name}-runconfig`, defaultMode: 420 } },
  ]
  if (!full) volumes.push({ name: 'ca-bundle', configMap: caBundle })
  else
    volumes.push(
      { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
      {
        name: 'ca-bundle',
        projected: {
          defaultMode: 420,
          sources: [
            { configMap: caBundle },
            { secret: { name: 'partner-ca', items: [{ key: 'ca.crt', path: 'partner.crt' }] } },
          ],
        },
      },
      { name: 'vault-secrets', emptyDir: { medium: 'Memory' } },
    )
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: TARGET.namespace,
      labels,
      ownerReferences: [
        {
          apiVersion: 'toolhive.stacklok.dev/v1beta1',
          kind: 'MCPServer',
          name,
          uid: TARGET.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      ...(full
        ? {
            strategy: {
              type: 'RollingUpdate',
              rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' },
            },
            revisionHistoryLimit: 10,
            progressDeadlineSeconds: 600,
          }
        : {}),
      template: {
        metadata: { labels: { ...labels } },
        spec: {
          serviceAccountName: `${name}-proxy-runner`,
          containers: full
            ? [
                toolhive,
                sidecar('vault-agent', 'hashicorp/vault:1.17', 6),
                sidecar('otel-agent', 'otel/opentelemetry-collector:0.104.0', 4),
              ]
            : [toolhive],
          volumes,
          ...(full
            ? {
                restartPolicy: 'Always',
                dnsPolicy: 'ClusterFirst',
                schedulerName: 'default-scheduler',
                securityContext: {},
              }
            : {}),
        },
      },
    },
  }
}

/**
 * A Deployment CREATE review of about `bytes` serialised bytes. Beyond the realistic base it
 * grows the way large pod templates do: env entries, a volume and its mount every fifth entry,
 * and a new container every fifty.
 */
export function deploymentReview(bytes: number) {
  const object = proxyDeployment(bytes >= 4096)
  const body = review(DEPLOYMENT, object, uid(1))
  let size = JSON.stringify(body).length
  const podSpec = (object.spec as any).template.spec
  let container: any
  for (let unit = 0; size < bytes; unit++) {
    if (unit % 50 === 0) {
      container = sidecar(`worker-${unit / 50}`, 'ghcr.io/example/worker:2.1.0', 0)
      container.volumeMounts = []
      podSpec.containers.push(container)
      size += JSON.stringify(container).length + 1
    }
    const entry = env(`WORKER_SETTING_${unit}`, `value-${unit}-${'x'.repeat(unit % 24)}`)
    container.env.push(entry)
    size += JSON.stringify(entry).length + 1
    if (unit % 5 === 0) {
      const volume = { name: `data-${unit}`, configMap: { name: `worker-data-${unit}` } }
      const mount = { name: `data-${unit}`, mountPath: `/data/${unit}`, readOnly: true }
      podSpec.volumes.push(volume)
      container.volumeMounts.push(mount)
      size += JSON.stringify(volume).length + JSON.stringify(mount).length + 2
    }
  }
  return body
}

/** Builds the four scenarios; scenario 2 runs the pipeline in-process to get its objects. */
export async function buildScenarios(): Promise<Scenario[]> {
  const admission = createAdmission({ view: new MemoryView(targetObjects()) })
  const first = JSON.stringify(deploymentReview(SCENARIO_1_BYTES))
  const satisfied: string[] = []
  for (let variant = 0; variant < SCENARIO_2_VARIANTS; variant++) {
    const review = JSON.parse(withToken(first, variant)) as { request: Record<string, unknown> }
    const outcome = await admission.review(review, 'mutate')
    const patch = outcome.ok ? outcome.review.response.patch : undefined
    if (patch === undefined) throw new Error('scenario 1 yields no patch in-process')
    const operations = JSON.parse(Buffer.from(patch, 'base64').toString()) as PatchOperation[]
    const object = applyPatch(review.request.object, operations)
    satisfied.push(
      JSON.stringify({ ...review, request: { ...review.request, uid: uid(2), object } }),
    )
  }
  const configMap = runConfigMap(
    `new-${TOKEN}`,
    TARGET.namespace,
    runConfigJson(`new-${TOKEN}`, 3, true),
  )
  delete (configMap.metadata as any).annotations // a CREATE carries no checksum yet
  const patchedWith =
    (expected: boolean) =>
    (answer: AdmissionReviewResponse): string | undefined => {
      const { response } = answer
      if (!response.allowed) return `denied: ${response.status?.message ?? ''}`
      if (response.warnings?.some((w) => w.includes('not found')))
        return `the view lacks an object: ${response.warnings.join('; ')}`
      if (expected !== (response.patch !== undefined))
        return expected ? 'expected a patch, got none' : `expected no patch, got ${response.patch}`
      return undefined
    }
  return [
    {
      id: 's1',
      title: 'Deployment CREATE, full mutation',
      webhook: 'mutate',
      bodies: [first],
      check: patchedWith(true),
    },
    {
      id: 's2',
      title: 'Deployment CREATE, no patch',
      webhook: 'mutate',
      bodies: satisfied,
      check: patchedWith(false),
    },
    {
      id: 's3',
      title: 'MCPWebhookConfig CREATE',
      webhook: 'validate',
      bodies: [
        JSON.stringify(
          review(
            {
              group: 'toolhive.stacklok.dev',
              version: 'v1alpha1',
              kind: 'MCPWebhookConfig',
              resource: 'mcpwebhookconfigs',
            },
            webhookConfig(`hooks-${TOKEN}`, TARGET.namespace, 6),
            uid(3),
          ),
        ),
      ],
      check: patchedWith(false),
    },
    {
      id: 's4',
      title: 'RunConfig ConfigMap CREATE',
      webhook: 'mutate',
      bodies: [
        JSON.stringify(
          review(
            { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps' },
            configMap,
            uid(4),
          ),
        ),
      ],
      check: patchedWith(true),
    },
  ]
}
