/**
 * The webhooks the API server calls, one entry each: the chart's webhook configurations
 * (`templates/webhooks.yaml`) and their `values.yaml` entries are generated from this table, the
 * rule table (`rules.ts`: which rules each serves, and so what it is sent) and the kind table
 * (`npm run manifests`). Each one's failurePolicy is chosen by what its failure would stop
 * (docs/enforcement.md).
 */

/** The webhook's key under `webhooks:` in the chart's values. */
export type WebhookId =
  | 'deployments'
  | 'deploymentsScale'
  | 'runConfigs'
  | 'webhookConfigs'
  | 'compositeTools'
  | 'workloads'
  | 'deletes'

/** A label selector, as the webhook configuration's `objectSelector` holds it. */
type ObjectSelector =
  | { readonly matchLabels: Readonly<Record<string, string>> }
  | {
      readonly matchExpressions: readonly {
        readonly key: string
        readonly operator: 'In'
        readonly values: readonly string[]
      }[]
    }

export interface WebhookEntry {
  readonly id: WebhookId
  /** The name in the webhook configuration (a DNS name, unique in the configuration). */
  readonly name: string
  /** The service's path: `/mutate` or `/validate`, and so which configuration it is in. */
  readonly path: 'mutate' | 'validate'
  /**
   * The chart's default. It applies only while the webhook enforces (a mutating one applies
   * patches, a rule of a validating one denies); otherwise the chart renders Ignore.
   */
  readonly failurePolicy: 'Fail' | 'Ignore'
  /**
   * Whether it may ever fail closed. False where no write may wait on this service whatever its
   * rules' actions: the chart then renders Ignore and its values accept nothing else.
   */
  readonly allowsFail: boolean
  readonly timeoutSeconds: number
  /** The comment of its `values.yaml` entry (helm-docs' `# --` first). */
  readonly valuesComment: readonly string[]
  /** The comment above it in the webhook configuration: what it guards and why its failurePolicy. */
  readonly comment: readonly string[]
  readonly reinvocation?: { readonly policy: 'IfNeeded'; readonly comment: readonly string[] }
  readonly objectSelector?: {
    readonly selector: ObjectSelector
    readonly comment: readonly string[]
  }
  /** CEL conditions, each expression as the lines it is folded into. */
  readonly matchConditions?: readonly {
    readonly name: string
    readonly expression: readonly string[]
  }[]
}

/**
 * Who deletes ToolHive objects as cluster machinery: the namespace controller and the garbage
 * collector (each with its own service account, kube-controller-manager's default) or
 * kube-controller-manager itself (`--use-service-account-credentials=false`). The delete guard's
 * webhook is not sent their deletes, and the service exempts them again should it be.
 */
export const CLUSTER_MACHINERY_USERS: readonly string[] = [
  'system:serviceaccount:kube-system:namespace-controller',
  'system:serviceaccount:kube-system:generic-garbage-collector',
  'system:kube-controller-manager',
]

export const WEBHOOK_TABLE = [
  {
    id: 'deployments',
    name: 'deployments.mcp-admission.toolhive.stacklok.dev',
    path: 'mutate',
    failurePolicy: 'Fail',
    allowsFail: true,
    timeoutSeconds: 5,
    valuesComment: [
      '-- Proxy Deployments get their checksum and generation. Fail: a proxy Deployment written',
      'without them is the bug this service exists to prevent.',
    ],
    comment: [
      'Proxy Deployments (checksum, generation, stdio cap, grace period). failurePolicy Fail: writing',
      'a proxy Deployment without the checksum and generation is the bug this service exists to',
      "prevent; while the webhook is down the operator's write fails and is retried, which is the",
      'safe outcome.',
    ],
    reinvocation: {
      policy: 'IfNeeded',
      comment: [
        'Another webhook (e.g. a secrets injector) may change pod-template annotations after this',
        'one; being called again keeps the operator-managed keys winning.',
      ],
    },
    objectSelector: {
      selector: { matchLabels: { toolhive: 'true' } },
      comment: ['ToolHive labels every proxy Deployment `toolhive: "true"`; nothing else is sent.'],
    },
  },
  {
    id: 'deploymentsScale',
    name: 'deployments-scale.mcp-admission.toolhive.stacklok.dev',
    path: 'mutate',
    failurePolicy: 'Fail',
    allowsFail: true,
    timeoutSeconds: 5,
    valuesComment: [
      '-- The stdio replica cap on `deployments/scale`. Fail: a stdio server scaled past one replica',
      'breaks its sessions.',
    ],
    comment: [
      'The stdio replica cap on `kubectl scale` and autoscalers. A Scale carries no',
      'labels, so no objectSelector can narrow this one; the matchCondition below does, inside the',
      'API server: only a Scale whose Deployment selects `toolhive=true` pods (every ToolHive proxy:',
      "the operator selects with its own labels) is sent; every other Deployment's scale never",
      'reaches the service. It tests `oldObject`, the Scale the API server derives from the stored',
      'Deployment: its `status.selector` is always present, while `object` is whatever the client',
      "sent (a PUT of a hand-written Scale may have no status at all). The Deployment's selector is",
      'immutable, so the answer cannot change under a scale.',
      'failurePolicy Fail: a stdio server scaled past one replica breaks its sessions; what fails',
      'closed is only the scale of ToolHive proxies while no replica answers.',
    ],
    matchConditions: [
      {
        name: 'toolhive-proxy',
        expression: [
          'oldObject != null && has(oldObject.status) && has(oldObject.status.selector) &&',
          "oldObject.status.selector.matches('(^|,)toolhive=true(,|$)')",
        ],
      },
    ],
  },
  {
    id: 'runConfigs',
    name: 'runconfigs.mcp-admission.toolhive.stacklok.dev',
    path: 'mutate',
    failurePolicy: 'Fail',
    allowsFail: true,
    timeoutSeconds: 5,
    valuesComment: [
      '-- RunConfig ConfigMaps get their content checksum. Fail: without it a stale checksum stays and',
      'the proxy pods do not roll.',
    ],
    comment: [
      'RunConfig ConfigMaps get their content checksum. failurePolicy Fail: a ConfigMap',
      'updated without it keeps a stale checksum, and its proxy pods would not roll.',
    ],
    objectSelector: {
      selector: {
        matchExpressions: [
          {
            key: 'toolhive.stacklok.io/component',
            operator: 'In',
            values: ['run-config', 'vmcp-config'],
          },
        ],
      },
      comment: [],
    },
  },
  {
    id: 'webhookConfigs',
    name: 'webhookconfigs.mcp-admission.toolhive.stacklok.dev',
    path: 'validate',
    failurePolicy: 'Fail',
    allowsFail: true,
    timeoutSeconds: 5,
    valuesComment: [
      '-- MCPWebhookConfig validation. Fail: an invalid config must never reach the cluster.',
    ],
    comment: [
      'MCPWebhookConfig validation (CREATE and UPDATE). failurePolicy Fail: an invalid',
      'webhook-middleware config must never reach the cluster.',
    ],
  },
  {
    id: 'compositeTools',
    name: 'compositetools.mcp-admission.toolhive.stacklok.dev',
    path: 'validate',
    failurePolicy: 'Ignore',
    allowsFail: false,
    timeoutSeconds: 5,
    valuesComment: [
      '-- VirtualMCPCompositeToolDefinition validation. Always Ignore, even with its rule at Deny:',
      'the status reconciler marks what gets through Invalid, and no write waits on this service.',
    ],
    comment: [
      'VirtualMCPCompositeToolDefinition validation (CREATE and UPDATE): a workflow the vmcp could',
      'not load (a dependsOn cycle, a duplicate step id, a tool step without a tool). failurePolicy',
      'always Ignore, even where its rule denies: a definition admitted while the service is down',
      'is still judged, by the status reconciler (status.validationStatus Invalid, which the',
      'operator reads before it uses the definition), so failing open only moves the refusal from',
      'the write to the status; and no ToolHive write waits on this service being up.',
    ],
  },
  {
    id: 'workloads',
    name: 'workloads.mcp-admission.toolhive.stacklok.dev',
    path: 'validate',
    failurePolicy: 'Ignore',
    allowsFail: true,
    timeoutSeconds: 5,
    valuesComment: [
      '-- MCPServer, MCPRemoteProxy and VirtualMCPServer warnings; it never denies (their CRDs say',
      'what they may hold). Always Ignore: failing open loses only warnings, and workloads stay',
      'writable.',
    ],
    comment: [
      'MCPServer, MCPRemoteProxy, VirtualMCPServer. failurePolicy always Ignore: this webhook',
      "only warns (what these objects may hold is their CRDs' to say, and the API server applies them",
      'first), so failing open loses no more than warnings and keeps ToolHive workloads writable',
      'while the webhook is down.',
    ],
  },
  {
    id: 'deletes',
    name: 'deletes.mcp-admission.toolhive.stacklok.dev',
    path: 'validate',
    failurePolicy: 'Ignore',
    allowsFail: false,
    timeoutSeconds: 3,
    valuesComment: [
      '-- The delete guard: a DELETE of a ToolHive object that others still reference. Always Ignore,',
      'even with its rules set to Deny (`ruleActions`): a delete is never held up by this service',
      'being down, and namespace deletion never waits on it.',
    ],
    comment: [
      'The delete guard (DELETE only): a ToolHive object that others in its namespace still',
      'reference. failurePolicy always Ignore, even where its rules deny, and a short timeout: no',
      'delete waits on this service being down. The namespace controller and the garbage collector',
      'are not sent at all (the matchCondition below), and a delete in a terminating namespace is',
      'admitted by the service. At Deny, a bundle must delete referrers first (Helm uninstall,',
      '`kubectl delete -f`: docs/rollout.md).',
    ],
    matchConditions: [
      {
        name: 'not-cluster-machinery',
        expression: [
          '!(request.userInfo.username in [',
          ...CLUSTER_MACHINERY_USERS.map(
            (user, index, all) => `'${user}'${index < all.length - 1 ? ',' : ''}`,
          ),
          '])',
        ],
      },
    ],
  },
] as const satisfies readonly WebhookEntry[]
