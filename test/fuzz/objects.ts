/**
 * Arbitraries for the objects the policies read: "near-valid" objects of each kind (the right
 * kind and shape, with every field sometimes absent, null, of the wrong type or hostile) and
 * fully arbitrary JSON. Shared by the bounded tests and `npm run fuzz`. Every value is passed
 * through `wire`, so it is exactly what JSON.parse would make of a request body.
 */

import fc from 'fast-check'
import { setOwn } from '../../src/policy/kube/object.ts'
import type { JsonObject, KubeObject } from '../../src/policy/kube/object.ts'
import { TOOLHIVE_GROUP, WORKLOAD_KINDS } from '../../src/policy/kinds.ts'
import { ANNOTATIONS, RUNCONFIG_COMPONENT_LABEL } from '../../src/policy/names.ts'
import { GENERATION_ENV, generationEnvEntry } from '../../src/policy/generation-env.ts'
import { wire } from './wire.ts'

// ---------------------------------------------------------------------------------------------
// Leaves

/** Keys that break naive code: prototype names, path syntax, empty. */
export const HOSTILE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '',
  'a/b',
  'a~1b',
  'a.b',
  '[0]',
  ']',
  '\u0000',
] as const

const hostileString = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udfff',
  '\ud83d\ude00',
  '__proto__',
  'constructor',
  'a'.repeat(300),
  '\u202e',
  'ß',
  'İ',
  'ﬃ',
  '1',
  '-1',
  '1e400',
  'true',
  'null',
  '%00',
  '../..',
)

export const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 2, arbitrary: hostileString },
)

export const key: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_KEYS) },
)

/** Numbers a body can carry: small, int32 edges, beyond 2^53, fractions, -0, ±Infinity (1e400). */
export const number: fc.Arbitrary<number> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -3, max: 6 }) },
  { weight: 1, arbitrary: fc.integer() },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      2 ** 53,
      2 ** 53 + 2,
      -(2 ** 53),
      1e21,
      1e300,
      -1e300,
      0.5,
      1.5,
      -0,
      Infinity,
      -Infinity,
      2 ** 31,
      2 ** 31 - 1,
      65535,
      65536,
      420,
      511,
    ),
  },
  { weight: 1, arbitrary: fc.double({ noNaN: true }) },
)

export const scalar: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: text },
  { weight: 3, arbitrary: number },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
)

/** Any JSON value, small and shallow, with hostile keys and leaves. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 3, depthSize: 'small' },
    { weight: 3, arbitrary: scalar },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 3 }) },
    { weight: 1, arbitrary: dict(key, tie('value'), 3) },
  ),
})).value

/** Any JSON object. */
export const anyObject: fc.Arbitrary<JsonObject> = dict(key, anyJson, 5)

/** Mostly `good`; sometimes absent (undefined: the key is left out), or any JSON at all. */
export function field(good: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 10, arbitrary: good },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: anyJson },
  )
}

/** A dictionary with plain prototypes, keys set as own properties (even `__proto__`). */
export function dict<T>(
  keys: fc.Arbitrary<string>,
  values: fc.Arbitrary<T>,
  maxKeys: number,
): fc.Arbitrary<JsonObject> {
  return fc.array(fc.tuple(keys, values), { maxLength: maxKeys }).map((entries) => {
    const out: JsonObject = {}
    for (const [k, v] of entries) setOwn(out, k, v)
    return out
  })
}

/**
 * An object with the given fields (each left out when it draws undefined) and sometimes a few
 * unexpected extra keys.
 */
export function obj(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<JsonObject> {
  return fc
    .tuple(
      fc.record(fields),
      fc.oneof({ weight: 5, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: anyObject }),
    )
    .map(([known, extra]) => {
      const out: JsonObject = {}
      for (const [k, v] of Object.entries(known)) if (v !== undefined) setOwn(out, k, v)
      for (const [k, v] of Object.entries(extra)) if (!Object.hasOwn(out, k)) setOwn(out, k, v)
      return out
    })
}

/** A list of `item`, sometimes empty, sometimes holding stray non-objects. */
export function list(item: fc.Arbitrary<unknown>, maxLength = 3): fc.Arbitrary<unknown[]> {
  return fc.array(fc.oneof({ weight: 6, arbitrary: item }, { weight: 1, arbitrary: anyJson }), {
    maxLength,
  })
}

/** A string map: keys from `keys`, values strings (now and then not). */
export function stringMap(keys: fc.Arbitrary<string>, maxKeys = 4): fc.Arbitrary<JsonObject> {
  return dict(
    keys,
    fc.oneof({ weight: 12, arbitrary: text }, { weight: 1, arbitrary: anyJson }),
    maxKeys,
  )
}

function oneOfKeys(...names: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...names) },
    { weight: 1, arbitrary: key },
  )
}

function mostly(value: unknown, others: fc.Arbitrary<unknown> = anyJson): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 4, arbitrary: fc.constant(value) }, { weight: 1, arbitrary: others })
}

// ---------------------------------------------------------------------------------------------
// Kubernetes pieces

const SELECTION_LABELS = [
  'app',
  'app.kubernetes.io/name',
  'app.kubernetes.io/instance',
  'toolhive',
  'toolhive-name',
]
const annotationKey = oneOfKeys(
  ...Object.values(ANNOTATIONS),
  'kubectl.kubernetes.io/restartedAt',
  'kubectl.kubernetes.io/last-applied-configuration',
  'example.com/a',
)
const labelKey = oneOfKeys(...SELECTION_LABELS, RUNCONFIG_COMPONENT_LABEL, 'team')
const name = fc.oneof(
  { weight: 4, arbitrary: fc.constant('demo') },
  { weight: 1, arbitrary: fc.constantFrom('other', 'a', '') },
  { weight: 1, arbitrary: text },
)
const uid = fc.constantFrom('demo-uid', 'other-uid', '')
const generation = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 9 }) },
  { weight: 1, arbitrary: number },
  { weight: 1, arbitrary: fc.constantFrom('3', '', null) },
)
const replicas = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -1, max: 5 }) },
  { weight: 1, arbitrary: number },
  { weight: 1, arbitrary: fc.constantFrom('3', null) },
)

const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/)

/** Annotations, the managed keys with plausible or hostile values. */
const annotations = fc
  .tuple(
    stringMap(annotationKey),
    fc.option(fc.oneof(hex64, text), { nil: undefined }),
    fc.option(fc.oneof(fc.integer({ min: 0, max: 12 }).map(String), text), { nil: undefined }),
  )
  .map(([map, checksum, gen]) => {
    if (checksum !== undefined) setOwn(map, ANNOTATIONS.runConfigChecksum, checksum)
    if (gen !== undefined) setOwn(map, ANNOTATIONS.mcpServerGeneration, gen)
    return map
  })

const labels = stringMap(labelKey, 6)

function metadata(extra: Record<string, fc.Arbitrary<unknown>> = {}): fc.Arbitrary<unknown> {
  return field(
    obj({
      name: field(name),
      namespace: field(mostly('team')),
      uid: field(uid),
      generation: field(generation),
      labels: field(labels),
      annotations: field(annotations),
      ...extra,
    }),
  )
}

const ownerReference = obj({
  apiVersion: field(
    fc.constantFrom(
      `${TOOLHIVE_GROUP}/v1beta1`,
      `${TOOLHIVE_GROUP}/v1alpha1`,
      TOOLHIVE_GROUP,
      'apps/v1',
      'v1',
    ),
  ),
  kind: field(fc.constantFrom(...WORKLOAD_KINDS, 'MCPWebhookConfig', 'ReplicaSet')),
  name: field(name),
  uid: field(uid),
  controller: field(mostly(true, fc.constantFrom(false, 'true', null))),
  blockOwnerDeletion: field(fc.boolean()),
})

// Pod volumes: the core/v1 VolumeSource members, with fields from their vocabulary. The webhook
// never reads them (docs/enforcement.md#never-a-fight-with-the-operator); they are here so proxy
// Deployments look like real ones.
const KNOWN_VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
] as const
const VOLUME_FIELDS = [
  'name',
  'items',
  'defaultMode',
  'optional',
  'medium',
  'sizeLimit',
  'mode',
  'path',
  'type',
  'claimName',
  'readOnly',
  'driver',
  'volumeAttributes',
  'nodePublishSecretRef',
  'secretRef',
  'sources',
  'secretName',
  'expirationSeconds',
  'audience',
  'volumeClaimTemplate',
  'reference',
  'pullPolicy',
  'fsType',
  'partition',
  'lun',
  'pool',
  'user',
  'keyring',
  'cachingMode',
  'kind',
  'storageMode',
  'iscsiInterface',
  'defaultUser',
  'labelSelector',
  'signerName',
  'metadata',
  'spec',
  'resources',
  'limits',
  'requests',
  'volumeMode',
  'options',
]
const quantity = fc.oneof(
  fc.constantFrom('1Gi', '1024Mi', '1073741824', '1k', '1e3', '0', '1.5', '-1', '500m', 'abc', ''),
  number,
)
const keyToPath = obj({
  key: field(text),
  path: field(text),
  mode: field(fc.oneof(fc.constantFrom(420, 0o400, 0o777, 0), number)),
  user: field(number),
  fieldRef: field(obj({ apiVersion: field(mostly('v1')), fieldPath: field(text) })),
  resourceFieldRef: field(
    obj({ containerName: field(text), resource: field(text), divisor: field(quantity) }),
  ),
})
const volumeValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 3, depthSize: 'small' },
    { weight: 3, arbitrary: scalar },
    { weight: 1, arbitrary: quantity },
    { weight: 1, arbitrary: fc.array(keyToPath, { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 3 }) },
    {
      weight: 2,
      arbitrary: dict(oneOfKeys(...VOLUME_FIELDS, ...KNOWN_VOLUME_SOURCES), tie('value'), 4),
    },
  ),
})).value
const volume = fc
  .tuple(
    field(fc.constantFrom('config', 'data', 'vmcp-config', 'tmp', '')),
    fc.array(
      fc.tuple(
        fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...KNOWN_VOLUME_SOURCES) },
          { weight: 1, arbitrary: key },
        ),
        fc.oneof(
          { weight: 4, arbitrary: dict(oneOfKeys(...VOLUME_FIELDS), volumeValue, 5) },
          {
            weight: 1,
            arbitrary: anyJson,
          },
        ),
      ),
      { maxLength: 2 },
    ),
  )
  .map(([volumeName, sources]) => {
    const out: JsonObject = {}
    if (volumeName !== undefined) setOwn(out, 'name', volumeName)
    for (const [source, value] of sources) setOwn(out, source, value)
    return out
  })
const mount = obj({
  name: field(fc.constantFrom('config', 'data', 'vmcp-config', 'tmp')),
  mountPath: field(fc.oneof(fc.constantFrom('/etc/x', '/data'), text)),
  subPath: field(text),
  subPathExpr: field(text),
  readOnly: field(fc.boolean()),
  mountPropagation: field(fc.constantFrom('None', 'HostToContainer', '')),
  recursiveReadOnly: field(fc.constantFrom('Disabled', 'Enabled', 'IfPossible')),
  bindMountOptions: field(list(text)),
})
const envEntry = fc.oneof(
  {
    weight: 2,
    arbitrary: obj({ name: field(fc.constantFrom('A', 'B', GENERATION_ENV)), value: field(text) }),
  },
  { weight: 1, arbitrary: fc.constant(generationEnvEntry()) },
  {
    weight: 1,
    arbitrary: obj({
      name: fc.constant(GENERATION_ENV),
      valueFrom: field(
        obj({
          fieldRef: field(
            obj({
              apiVersion: field(mostly('v1')),
              fieldPath: field(
                fc.constantFrom(
                  `metadata.annotations['${ANNOTATIONS.mcpServerGeneration}']`,
                  'metadata.name',
                ),
              ),
            }),
          ),
        }),
      ),
    }),
  },
)
const container = obj({
  name: field(fc.constantFrom('toolhive', 'vmcp', 'sidecar', '')),
  image: field(fc.constantFrom('ghcr.io/stacklok/toolhive/proxyrunner:latest', 'busybox', '')),
  env: field(list(envEntry, 4)),
  volumeMounts: field(list(mount)),
  volumeDevices: field(list(obj({ name: field(text), devicePath: field(text) }))),
})

/** A pod spec: containers, init containers, volumes, grace period. */
export const podSpec: fc.Arbitrary<unknown> = field(
  obj({
    containers: field(list(container)),
    initContainers: field(list(container, 2)),
    volumes: field(list(volume, 4)),
    terminationGracePeriodSeconds: field(fc.oneof(fc.constantFrom(30, 0, null), number)),
  }),
)

// ---------------------------------------------------------------------------------------------
// Objects of each kind

function kubeObject(
  apiVersion: fc.Arbitrary<unknown>,
  kind: fc.Arbitrary<unknown>,
  rest: Record<string, fc.Arbitrary<unknown>>,
  meta: Record<string, fc.Arbitrary<unknown>> = {},
): fc.Arbitrary<KubeObject> {
  return obj({
    apiVersion: field(apiVersion),
    kind: field(kind),
    metadata: metadata(meta),
    ...rest,
  }).map((object) => wire(object) as KubeObject)
}

/** Near-valid ConfigMaps, RunConfig ones most of the time. */
export const configMap: fc.Arbitrary<KubeObject> = kubeObject(
  fc.constant('v1'),
  fc.constant('ConfigMap'),
  {
    data: field(stringMap(oneOfKeys('runconfig.json', 'config.yaml'), 5)),
    binaryData: field(stringMap(key)),
  },
  {
    labels: field(
      fc
        .tuple(labels, fc.option(fc.constantFrom('run-config', 'vmcp-config', 'other')))
        .map(([map, component]) => {
          if (component !== null) setOwn(map, RUNCONFIG_COMPONENT_LABEL, component)
          return map
        }),
    ),
    annotations: field(
      fc
        .tuple(stringMap(annotationKey), fc.option(fc.oneof(hex64, text), { nil: undefined }))
        .map(([map, checksum]) => {
          if (checksum !== undefined) setOwn(map, ANNOTATIONS.contentChecksum, checksum)
          return map
        }),
    ),
  },
)

/** Near-valid proxy Deployments of any of the three owner kinds. */
export const deployment: fc.Arbitrary<KubeObject> = kubeObject(
  mostly('apps/v1'),
  mostly('Deployment'),
  {
    spec: field(
      obj({
        replicas: field(replicas),
        selector: field(obj({ matchLabels: field(labels) })),
        template: field(
          obj({
            metadata: field(obj({ labels: field(labels), annotations: field(annotations) })),
            spec: podSpec,
          }),
        ),
      }),
    ),
  },
  { ownerReferences: field(list(ownerReference, 2)) },
)

const secretRef = obj({
  name: field(fc.constantFrom('my-secret', 'Bad_Name', 'a.b', '')),
  key: field(fc.constantFrom('tls.crt', 'bad key', '')),
})
const sessionStorage = obj({
  provider: field(fc.constantFrom('memory', 'redis', 'Redis', '')),
  address: field(fc.constantFrom('redis:6379', '')),
  db: field(replicas),
  passwordRef: field(secretRef),
})
const overrides = obj({
  proxyDeployment: field(
    obj({
      podTemplateMetadataOverrides: field(
        obj({ annotations: field(annotations), labels: field(labels) }),
      ),
    }),
  ),
})

/** Near-valid MCPServer, MCPRemoteProxy and VirtualMCPServer objects. */
export const workload: fc.Arbitrary<KubeObject> = kubeObject(
  fc.constantFrom(`${TOOLHIVE_GROUP}/v1beta1`, `${TOOLHIVE_GROUP}/v1alpha1`),
  fc.constantFrom(...WORKLOAD_KINDS),
  {
    spec: field(
      obj({
        transport: field(fc.constantFrom('stdio', 'streamable-http', 'sse', '', 'STDIO')),
        replicas: field(replicas),
        backendReplicas: field(replicas),
        proxyPort: field(fc.oneof(fc.constantFrom(8080, 0, 65535, 65536), number)),
        sessionStorage: field(sessionStorage),
        webhookConfigRef: field(obj({ name: field(name) })),
        authzConfig: field(anyJson),
        authzConfigRef: field(anyJson),
        oidcConfigRef: field(anyJson),
        externalAuthConfigRef: field(anyJson),
        rateLimiting: field(
          obj({ perUser: field(anyJson), tools: field(list(obj({ perUser: field(anyJson) }))) }),
        ),
        resourceOverrides: field(overrides),
      }),
    ),
    status: field(anyJson),
  },
)

const webhookName = fc.oneof(
  fc.constantFrom('a', 'A', 'a-b', 'a_b', 'ß', 'x'.repeat(63), 'x'.repeat(64), ''),
  text,
)
const webhook = obj({
  name: field(webhookName),
  url: field(
    fc.oneof(
      fc.constantFrom(
        'https://example.com/hook',
        'http://example.com',
        'https://user@example.com',
        'https://example.com/#f',
        'https:///path',
        'ftp://example.com',
        'https://:80',
        'https://exa mple.com',
        'https://[::1]:8443/x',
        'example.com',
      ),
      fc.webUrl(),
      text,
    ),
  ),
  timeout: field(
    fc.oneof(fc.constantFrom('5s', '0', '0s', '500ms', '31s', '1m', '1m30s', 'abc', 0, 5), text),
  ),
  failurePolicy: field(fc.constantFrom('fail', 'ignore', 'Fail')),
  tlsConfig: field(
    obj({
      caSecretRef: field(secretRef),
      clientCertSecretRef: field(secretRef),
      clientKeySecretRef: field(secretRef),
      insecureSkipVerify: field(fc.boolean()),
    }),
  ),
  hmacSecretRef: field(secretRef),
})

/** Near-valid MCPWebhookConfigs. */
export const webhookConfig: fc.Arbitrary<KubeObject> = kubeObject(
  fc.constant(`${TOOLHIVE_GROUP}/v1alpha1`),
  fc.constant('MCPWebhookConfig'),
  {
    spec: field(obj({ validating: field(list(webhook, 3)), mutating: field(list(webhook, 3)) })),
    status: field(anyJson),
  },
)

const stepId = fc.constantFrom('a', 'b', 'c', '', 'A')
/** Templates: references to step outputs, other fields, some that do not parse, any text. */
const template = fc.oneof(
  fc.constantFrom(
    '{{.steps.a.output.x}}',
    '{{.steps.b.output.y | json}}',
    '{{if .steps.c.output.z}}yes{{end}}',
    '{{.params.p}}',
    '{{.steps.a.output.x',
    '{{nope .x}}',
    '',
  ),
  text,
)
const toolName = fc.constantFrom('fetch', 'workload.tool_name', 'a b', '-x', '')
const arguments_ = dict(key, fc.oneof(template, anyJson), 3)
const innerStep = obj({
  type: field(fc.constantFrom('tool', 'elicitation', '')),
  tool: field(toolName),
  arguments: field(arguments_),
  timeout: field(fc.constantFrom('1m', '', '5d')),
})
const compositeStep = obj({
  id: field(stepId),
  type: field(fc.constantFrom('tool', 'elicitation', 'forEach', 'shell', '')),
  tool: field(toolName),
  message: field(template),
  condition: field(template),
  arguments: field(arguments_),
  dependsOn: field(list(stepId, 3)),
  onError: field(
    obj({
      action: field(fc.constantFrom('abort', 'continue', 'retry', 'skip')),
      retryCount: field(number),
    }),
  ),
  onDecline: field(obj({ action: field(fc.constantFrom('abort', 'skip_remaining', '', 'x')) })),
  onCancel: field(obj({ action: field(fc.constantFrom('continue', 'x')) })),
  defaultResults: field(dict(fc.constantFrom('x', 'y', 'z'), anyJson, 2)),
  collection: field(template),
  itemVar: field(fc.constantFrom('item', 'index', '2x', '')),
  maxParallel: field(number),
  maxIterations: field(number),
  step: field(innerStep),
  timeout: field(fc.constantFrom('1m', '-1s', '5d', '')),
  schema: field(anyObject),
})
const outputProperty = obj({
  type: field(fc.constantFrom('string', 'object')),
  description: field(text),
  value: field(template),
  properties: field(dict(fc.constantFrom('p', 'q'), obj({ value: field(template) }), 2)),
})

/** Near-valid VirtualMCPCompositeToolDefinitions: steps that name each other, some in cycles. */
export const compositeToolDefinition: fc.Arbitrary<KubeObject> = kubeObject(
  fc.constantFrom(`${TOOLHIVE_GROUP}/v1beta1`, `${TOOLHIVE_GROUP}/v1alpha1`),
  fc.constant('VirtualMCPCompositeToolDefinition'),
  {
    spec: field(
      obj({
        name: field(text),
        description: field(text),
        timeout: field(fc.constantFrom('3m', '-1s', '0s')),
        parameters: field(anyObject),
        steps: field(list(compositeStep, 5)),
        output: field(
          obj({ properties: field(dict(fc.constantFrom('p', 'q'), outputProperty, 2)) }),
        ),
      }),
    ),
    status: field(anyJson),
  },
)

/** Near-valid autoscaling/v1 Scales. */
export const scale: fc.Arbitrary<KubeObject> = kubeObject(
  fc.constant('autoscaling/v1'),
  fc.constant('Scale'),
  { spec: field(obj({ replicas: field(replicas) })), status: field(anyJson) },
)

/** Any JSON object, as a KubeObject (sometimes with a kind from the product's vocabulary). */
export const arbitraryObject: fc.Arbitrary<KubeObject> = fc
  .tuple(
    anyObject,
    fc.option(
      fc.constantFrom(
        'ConfigMap',
        'Deployment',
        'Scale',
        'MCPWebhookConfig',
        'MCPServer',
        'MCPRemoteProxy',
        'VirtualMCPServer',
      ),
    ),
  )
  .map(([object, kind]) => {
    if (kind !== null) setOwn(object, 'kind', kind)
    return wire(object)
  })

/** `near` most of the time, otherwise anything. */
export function nearOrAny(near: fc.Arbitrary<KubeObject>): fc.Arbitrary<KubeObject> {
  return fc.oneof({ weight: 4, arbitrary: near }, { weight: 1, arbitrary: arbitraryObject })
}

/** Current status of a ToolHive object as the reconciler may find it. */
export const currentStatus: fc.Arbitrary<unknown> = field(
  obj({
    observedGeneration: field(generation),
    configHash: field(fc.oneof(hex64, text)),
    conditions: field(
      list(
        obj({
          type: field(
            fc.constantFrom('StdioReplicaCapped', 'SessionStorageWarning', 'Valid', 'Ready'),
          ),
          status: field(fc.constantFrom('True', 'False', 'Unknown')),
          reason: field(text),
          message: field(text),
          lastTransitionTime: field(fc.constantFrom('2025-01-01T00:00:00Z', '')),
          observedGeneration: field(generation),
        }),
        4,
      ),
    ),
  }),
).map((value) => wire(value))
