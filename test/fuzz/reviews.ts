/**
 * Request bodies for fuzzing the HTTP layer: valid AdmissionReviews of every routed kind, then
 * broken by a recipe of edits (types swapped, fields deleted, `__proto__`/`constructor` keys,
 * deep nesting, huge strings and arrays, numbers beyond 2^53, invalid UTF-8, truncation, wrong
 * content types), and arbitrary bodies. A recipe is small and printable; the body (up to several
 * MiB) is built from it only when the property runs, so a counterexample prints compactly.
 */

import fc from 'fast-check'
import { requestFor } from '../../src/admission/request.ts'
import { reviewOf } from '../helpers/objects.ts'
import type { AdmissionReviewRequest, Operation, WebhookName } from '../../src/admission/review.ts'
import { BODY_LIMIT_BYTES } from '../../src/http/app.ts'
import { setOwn } from '../../src/policy/kube/object.ts'
import type { JsonObject, KubeObject } from '../../src/policy/kube/object.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import type { WorkloadKind } from '../../src/policy/kinds.ts'
import { runConfigMap } from '../helpers/objects.ts'
import { NAMESPACE, proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'
import { HOSTILE_KEYS, anyJson } from './objects.ts'
import { rawMarker, withRaw } from './wire.ts'

// ---------------------------------------------------------------------------------------------
// The cluster the fuzzed app sees, and valid reviews against it

const OWNERS: readonly [WorkloadKind, string][] = [
  ['MCPServer', 'demo'],
  ['MCPRemoteProxy', 'remote'],
  ['VirtualMCPServer', 'virtual'],
]

const overrides = {
  resourceOverrides: {
    proxyDeployment: {
      podTemplateMetadataOverrides: {
        annotations: { [ANNOTATIONS.runConfigChecksum]: 'user', 'example.com/a': 'b' },
        labels: { app: 'mine', team: 'x' },
      },
    },
  },
}

const webhookConfig = (spec: unknown): KubeObject => ({
  apiVersion: 'toolhive.stacklok.dev/v1alpha1',
  kind: 'MCPWebhookConfig',
  metadata: { name: 'hooks', namespace: NAMESPACE, uid: 'hooks-uid', generation: 1 },
  spec,
})
const goodHooks = {
  validating: [{ name: 'policy', url: 'https://policy.example.com/validate', timeout: '5s' }],
  mutating: [{ name: 'enrich', url: 'https://enrich.example.com', failurePolicy: 'ignore' }],
}
const badHooks = {
  validating: [
    { name: 'a', url: 'http://x#f', timeout: '31s', failurePolicy: 'Fail' },
    { name: 'A', url: 'ftp://user@host' },
  ],
  mutating: [{ url: '', tlsConfig: { clientCertSecretRef: { name: 'Bad_Name', key: 'bad key' } } }],
}

/** What the fuzzed admission app's cluster view holds. */
export const VIEW_OBJECTS: readonly KubeObject[] = [
  ...OWNERS.map(([kind, name]) =>
    workload(kind, name, { generation: 3, spec: kind === 'VirtualMCPServer' ? {} : overrides }),
  ),
  ...OWNERS.map(([kind, name]) => runConfigFor(kind, name)),
  webhookConfig(goodHooks),
  workload('MCPServer', 'user', { spec: { webhookConfigRef: { name: 'hooks' } } }),
  proxyDeployment('MCPServer', 'demo'),
]

function scaleReview(): AdmissionReviewRequest {
  const object: KubeObject = {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name: 'demo', namespace: NAMESPACE },
    spec: { replicas: 4 },
  }
  const request = requestFor(object, { operation: 'UPDATE', uid: 'scale-uid', oldObject: object })
  return reviewOf({
    ...request,
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    subResource: 'scale',
    requestSubResource: 'scale',
  })
}

function reviewFor(
  object: KubeObject | undefined,
  operation: Operation,
  oldObject?: KubeObject,
): AdmissionReviewRequest {
  return reviewOf(
    requestFor(object, {
      operation,
      uid: `uid-${operation.toLowerCase()}`,
      ...(oldObject ? { oldObject } : {}),
    }),
  )
}

const deployment = (kind: WorkloadKind, name: string) =>
  proxyDeployment(kind, name, {
    replicas: 3,
    podAnnotations: { 'kubectl.kubernetes.io/restartedAt': 'now' },
    env: [{ name: 'A', value: '1' }],
    volumes: [
      {
        name: 'config',
        configMap: { name: `${name}-runconfig`, items: [{ key: 'a', path: 'b' }] },
      },
      { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } },
    ],
  })

/** A valid review of every routed kind and operation, and some that nothing routes. */
export const BASE_REVIEWS: readonly { review: AdmissionReviewRequest; webhook: WebhookName }[] = [
  { review: reviewFor(runConfigFor('MCPServer', 'demo'), 'CREATE'), webhook: 'mutate' },
  {
    review: reviewFor(
      runConfigFor('MCPServer', 'demo', '{"name":"v2"}'),
      'UPDATE',
      runConfigFor('MCPServer', 'demo'),
    ),
    webhook: 'mutate',
  },
  { review: reviewFor(runConfigFor('VirtualMCPServer', 'virtual'), 'CREATE'), webhook: 'mutate' },
  { review: reviewFor(runConfigMap(), 'CREATE'), webhook: 'mutate' },
  {
    review: reviewFor(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' }, data: { a: 'b' } },
      'CREATE',
    ),
    webhook: 'mutate',
  },
  ...OWNERS.map(([kind, name]) => ({
    review: reviewFor(deployment(kind, name), 'CREATE'),
    webhook: 'mutate' as const,
  })),
  {
    review: reviewFor(deployment('MCPServer', 'demo'), 'UPDATE', deployment('MCPServer', 'demo')),
    webhook: 'mutate',
  },
  { review: scaleReview(), webhook: 'mutate' },
  {
    review: reviewFor(
      workload('MCPServer', 'demo', {
        spec: { transport: 'stdio', replicas: 2, webhookConfigRef: { name: 'missing' } },
      }),
      'CREATE',
    ),
    webhook: 'validate',
  },
  {
    review: reviewFor(
      workload('MCPServer', 'demo', {
        spec: {
          transport: 'smtp',
          replicas: -1,
          proxyPort: 70000,
          authzConfig: {},
          authzConfigRef: {},
          rateLimiting: { perUser: {}, tools: [{ perUser: {} }] },
          sessionStorage: { provider: 'redis' },
        },
      }),
      'UPDATE',
      workload('MCPServer', 'demo', { spec: { transport: 'smtp', replicas: -1 } }),
    ),
    webhook: 'validate',
  },
  {
    review: reviewFor(workload('MCPRemoteProxy', 'remote', { spec: { replicas: 3 } }), 'CREATE'),
    webhook: 'validate',
  },
  {
    review: reviewFor(workload('VirtualMCPServer', 'virtual', { spec: {} }), 'CREATE'),
    webhook: 'validate',
  },
  { review: reviewFor(webhookConfig(goodHooks), 'CREATE'), webhook: 'validate' },
  {
    review: reviewFor(webhookConfig(badHooks), 'UPDATE', webhookConfig(badHooks)),
    webhook: 'validate',
  },
  { review: reviewFor(undefined, 'DELETE', webhookConfig(goodHooks)), webhook: 'validate' },
  {
    review: reviewFor(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: NAMESPACE } },
      'CREATE',
    ),
    webhook: 'mutate',
  },
]

// ---------------------------------------------------------------------------------------------
// Recipes

/** A value put somewhere in the review; the large and the unrepresentable ones as raw text. */
export type Special =
  | { readonly json: unknown }
  | { readonly deep: number; readonly shape: 'array' | 'object' }
  | { readonly hugeString: number; readonly char: string }
  | { readonly hugeArray: number; readonly item: string }
  | { readonly rawNumber: string }
  | { readonly badUtf8: readonly number[] }

export type Action =
  | { readonly delete: true }
  | { readonly swap: number }
  | { readonly set: Special }
  | { readonly addKey: string; readonly value: Special }

export interface Edit {
  /** Index into the review's paths (modulo their count). */
  readonly at: number
  /** Among the paths inside `request.object`/`oldObject` only (when there are any). */
  readonly inObject: boolean
  readonly action: Action
}

export interface Recipe {
  readonly base: number
  readonly webhook: WebhookName
  /** Edits of the envelope's own fields (apiVersion, kind, request.uid …). */
  readonly envelope: readonly Edit[]
  /** Edits anywhere in the review. */
  readonly edits: readonly Edit[]
  /** Keep only this fraction of the body's bytes. */
  readonly truncate: number | undefined
  readonly contentType: string | undefined
}

/** Nesting depths: the API server's decoder allows 10,000 levels; the body limit far more. */
export const DEPTHS = [2, 100, 1_000, 2_000, 3_000, 10_000, 100_000] as const

const special: fc.Arbitrary<Special> = fc.oneof(
  { weight: 8, arbitrary: anyJson.map((json) => ({ json })) },
  {
    weight: 2,
    arbitrary: fc.record({
      deep: fc.constantFrom(...DEPTHS),
      shape: fc.constantFrom('array' as const, 'object' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      hugeString: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(1_000, 70_000) },
        { weight: 2, arbitrary: fc.constant(1_000_000) },
        { weight: 1, arbitrary: fc.constantFrom(3_000_000, 7_400_000) },
      ),
      char: fc.constantFrom(
        'x',
        'é',
        '\u2028',
        '\\"',
        '\\\\',
        '\\u0000',
        '\ud83d\ude00',
        '\\ud800',
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      hugeArray: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(1_000, 20_000) },
        { weight: 1, arbitrary: fc.constantFrom(200_000, 1_000_000) },
      ),
      item: fc.constantFrom('0', '{}', '"a"', 'null', '[]', '{"name":"x"}'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      rawNumber: fc.constantFrom(
        '9007199254740993',
        '-9007199254740993',
        '123456789012345678901234567890',
        '1e400',
        '-1e400',
        '4.9e-325',
        '-0',
        '1E+2',
        '2.0',
        '0.30000000000000004',
        '1' + '0'.repeat(400),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      badUtf8: fc.constantFrom(
        [0xff],
        [0xc0, 0xaf],
        [0xed, 0xa0, 0x80],
        [0xe2, 0x82],
        [0xf8, 0x88, 0x80, 0x80, 0x80],
        [0xef, 0xbb, 0xbf],
        [0x80],
      ),
    }),
  },
)

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ delete: true as const }) },
  { weight: 3, arbitrary: fc.nat(7).map((swap) => ({ swap })) },
  { weight: 4, arbitrary: special.map((set) => ({ set })) },
  {
    weight: 2,
    arbitrary: fc.record({ addKey: fc.constantFrom(...HOSTILE_KEYS), value: special }),
  },
)

const edit: fc.Arbitrary<Edit> = fc.record({
  at: fc.nat(),
  inObject: fc.oneof(
    { weight: 3, arbitrary: fc.constant(true) },
    { weight: 1, arbitrary: fc.constant(false) },
  ),
  action,
})

/** The content types: the API server's, variants, and wrong ones (undefined: no header). */
export const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json;charset=UTF-8',
  'application/json; charset=utf-16',
  'application/jsonx',
  'application/json-patch+json',
  'application/json, text/plain',
  'text/plain',
  'application/yaml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/vnd.kubernetes.protobuf',
  '*/*',
  '',
  undefined,
] as const

/** Content types the API server sends: with these, a body with a readable uid must get a 200. */
export const API_SERVER_CONTENT_TYPES: readonly (string | undefined)[] = [
  'application/json',
  'application/json; charset=utf-8',
]

const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
)

export const recipe: fc.Arbitrary<Recipe> = fc.record({
  base: fc.nat(BASE_REVIEWS.length - 1),
  webhook: fc.constantFrom('mutate' as const, 'validate' as const),
  envelope: fc.oneof(
    { weight: 4, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: fc.array(edit, { minLength: 1, maxLength: 2 }) },
  ),
  edits: fc.array(edit, { maxLength: 3 }),
  truncate: fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 999 }).map((n) => n / 1000) },
  ),
  contentType,
})

// ---------------------------------------------------------------------------------------------
// Building a body from a recipe

const ENVELOPE_PATHS: readonly (readonly string[])[] = [
  [],
  ['apiVersion'],
  ['kind'],
  ['request'],
  ['request', 'uid'],
  ['request', 'uid'],
  ['request', 'kind'],
  ['request', 'kind', 'group'],
  ['request', 'kind', 'kind'],
  ['request', 'resource'],
  ['request', 'resource', 'resource'],
  ['request', 'subResource'],
  ['request', 'operation'],
  ['request', 'name'],
  ['request', 'namespace'],
  ['request', 'object'],
  ['request', 'oldObject'],
  ['request', 'dryRun'],
  ['request', 'userInfo'],
  ['request', 'options'],
]

export interface Body {
  readonly webhook: WebhookName
  readonly payload: Buffer
  readonly contentType: string | undefined
}

/** Builds the request body a recipe describes. */
export function buildBody(r: Recipe): Body {
  const base = BASE_REVIEWS[r.base % BASE_REVIEWS.length]
  if (base === undefined) throw new Error('no base review')
  const root = { value: structuredClone(base.review) as unknown }
  const raw: (string | Buffer)[] = []
  for (const e of r.envelope) {
    apply(root, ENVELOPE_PATHS[e.at % ENVELOPE_PATHS.length] ?? [], e.action, raw)
  }
  for (const e of r.edits) {
    const all = pathsOf(root.value)
    const inside = all.filter(
      ([top, field]) => top === 'request' && (field === 'object' || field === 'oldObject'),
    )
    const paths = e.inObject && inside.length > 0 ? inside : all
    apply(root, paths[e.at % paths.length] ?? [], e.action, raw)
  }
  // Undefined when the edits removed the whole document: then the body is empty.
  const text = root.value === undefined ? '' : JSON.stringify(root.value)
  let payload = withRaw(text, raw)
  if (r.truncate !== undefined)
    payload = payload.subarray(0, Math.floor(payload.length * r.truncate))
  return { webhook: r.webhook, payload, contentType: r.contentType }
}

/** Every path in a JSON value, breadth first, at most 2,000. */
function pathsOf(value: unknown): string[][] {
  const paths: string[][] = [[]]
  for (let i = 0; i < paths.length && paths.length < 2000; i++) {
    const path = paths[i] ?? []
    const node = valueAt(value, path)
    if (typeof node === 'object' && node !== null) {
      for (const k of Object.keys(node)) paths.push([...path, k])
    }
  }
  return paths
}

function valueAt(value: unknown, path: readonly string[]): unknown {
  let node = value
  for (const step of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, step)) return undefined
    node = (node as JsonObject)[step]
  }
  return node
}

const SWAPS: readonly unknown[] = [null, 0, 1.5, '', 'x', true, [], {}, [1], { a: 1 }, -1, '1']

function apply(
  root: { value: unknown },
  path: readonly string[],
  a: Action,
  raw: (string | Buffer)[],
): void {
  const current = valueAt(root.value, path)
  let next: unknown
  let remove = false
  if ('delete' in a) remove = true
  else if ('swap' in a) {
    const others = SWAPS.filter((v) => jsonTypeOf(v) !== jsonTypeOf(current))
    next = structuredClone(others[a.swap % others.length])
  } else if ('set' in a) next = specialValue(a.set, raw)
  else {
    const target: JsonObject =
      typeof current === 'object' && current !== null && !Array.isArray(current)
        ? (current as JsonObject)
        : {}
    setOwn(target, a.addKey, specialValue(a.value, raw))
    next = target
  }
  const parentPath = path.slice(0, -1)
  const last = path[path.length - 1]
  if (last === undefined) {
    root.value = remove ? undefined : next
    return
  }
  const parent = valueAt(root.value, parentPath)
  if (typeof parent !== 'object' || parent === null) return
  if (Array.isArray(parent)) {
    const index = Number(last)
    if (remove) parent.splice(index, 1)
    else parent[index] = next
  } else if (remove) Reflect.deleteProperty(parent, last)
  else setOwn(parent as JsonObject, last, next)
}

function jsonTypeOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
}

/** A JSON value, or a marker for raw text built (once) into `raw`. */
function specialValue(s: Special, raw: (string | Buffer)[]): unknown {
  if ('json' in s) return structuredClone(s.json)
  raw.push(rawText(s))
  return rawMarker(raw.length - 1)
}

function rawText(s: Exclude<Special, { json: unknown }>): string | Buffer {
  if ('deep' in s) {
    return s.shape === 'array'
      ? `${'['.repeat(s.deep)}${']'.repeat(s.deep)}`
      : `${'{"a":'.repeat(s.deep)}null${'}'.repeat(s.deep)}`
  }
  if ('hugeString' in s) {
    const unit = Buffer.byteLength(s.char, 'utf8')
    return `"${s.char.repeat(Math.max(1, Math.floor(s.hugeString / unit)))}"`
  }
  if ('hugeArray' in s) {
    return `[${Array.from({ length: s.hugeArray }, () => s.item).join(',')}]`
  }
  if ('rawNumber' in s) return s.rawNumber
  return Buffer.concat([Buffer.from('"a'), Buffer.from(s.badUtf8), Buffer.from('b"')])
}

// ---------------------------------------------------------------------------------------------
// Arbitrary bodies

const uidValue = fc.oneof(
  fc.uuid(),
  fc.constantFrom('', ' ', '\ud800', 'x'.repeat(5000), '__proto__', null, 0, true, [], {}),
)

const envelopeLike: fc.Arbitrary<unknown> = fc.record(
  {
    apiVersion: fc.constantFrom(
      'admission.k8s.io/v1',
      'admission.k8s.io/v1beta1',
      'admission.k8s.io/v2',
      '',
      1,
      null,
    ),
    kind: fc.constantFrom('AdmissionReview', 'AdmissionResponse', '', null),
    request: fc.oneof(
      anyJson,
      fc.record(
        {
          uid: uidValue,
          kind: fc.oneof(
            fc.constant({ group: '', version: 'v1', kind: 'ConfigMap' }),
            fc.constant({ group: 'apps', version: 'v1', kind: 'Deployment' }),
            fc.constant({
              group: 'toolhive.stacklok.dev',
              version: 'v1alpha1',
              kind: 'MCPWebhookConfig',
            }),
            anyJson,
          ),
          resource: fc.oneof(
            fc.constant({ group: '', version: 'v1', resource: 'configmaps' }),
            anyJson,
          ),
          operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'PATCH', 'create'),
          object: anyJson,
          oldObject: anyJson,
          namespace: anyJson,
          name: anyJson,
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
)

/** Arbitrary bodies: JSON values, envelope look-alikes, text and bytes. */
export const arbitraryBody: fc.Arbitrary<{
  webhook: WebhookName
  body: string | Uint8Array
  contentType: string | undefined
}> = fc.record({
  webhook: fc.constantFrom('mutate' as const, 'validate' as const),
  body: fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v)),
    envelopeLike.map((v) => JSON.stringify(v)),
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.uint8Array({ maxLength: 64 }),
  ),
  contentType,
})

/** The body limit, for the oracle: larger bodies are refused with 413 before anything is read. */
export const LIMIT = BODY_LIMIT_BYTES
