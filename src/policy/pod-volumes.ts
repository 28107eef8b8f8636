/**
 * DESIGN §4.3: the pod volumes fingerprint, stamped on proxy Deployments as
 * `toolhive.stacklok.io/podvolumes-hash`. It is the lowercase hex SHA-256 of the UTF-8 text
 * `podVolumesCanonical` returns for `spec.template.spec`. The text is identical before and after
 * the API server decodes, defaults and re-encodes the pod template (Kubernetes 1.37), and changes
 * whenever anything that decides what is mounted, or where, changes.
 *
 * Canonical form
 * --------------
 * `{"volumeDevices":[…],"volumeMounts":[…],"volumes":[…]}` — all three always present, so a pod
 * without volumes still has a stable hash. JSON without white space; object keys sorted by their
 * UTF-8 bytes (code points, not UTF-16 units); strings escaped as `JSON.stringify` does.
 *
 * - `volumes`: every entry of `volumes`, normalised (below), sorted by the UTF-8 bytes of the JSON
 *   text `[name, volume]`. A volume with no source besides `name` is `emptyDir: {}`, as the API
 *   server defaults it. Every key besides `name` counts as a source: the 30 of core/v1
 *   `VolumeSource` are normalised field by field (`SOURCES` below); any other key (a source newer
 *   than this code) is kept as its canonical JSON, never reduced to its name.
 * - `volumeMounts`: one `{"container": c, "mount": m}` per `containers[].volumeMounts[]` entry and
 *   `{"initContainer": c, "mount": m}` per `initContainers[].volumeMounts[]` entry (`c` the container
 *   name, `""` when missing), sorted by `[c, list, name, mountPath, subPath, entry]` as above.
 *   Mount fields: name, mountPath, subPath, subPathExpr, readOnly, mountPropagation,
 *   recursiveReadOnly, bindMountOptions (a set: sorted), plus any field newer than this code.
 * - `volumeDevices`: `containers[].volumeDevices[]` / `initContainers[].volumeDevices[]` the same
 *   way, as `{"container"|"initContainer": c, "device": {name, devicePath}}` (raw block devices
 *   are mounts too). Pod templates cannot have ephemeral containers, so they are not read.
 *
 * Normalisation — an unset field is omitted, and so is a field equal to its default (defaults
 * are never written in, so "absent" and "explicitly the default" give the same text):
 * - `null`, `[]` and values JSON cannot hold (undefined, NaN, functions) are unset, as Go decodes
 *   them. A value of the wrong JSON type is kept as written (the API server rejects it anyway).
 * - Known text fields: `""` is unset (Go's `omitempty` drops it). Known flags: `false` is unset
 *   (every volume flag defaults to false: readOnly, optional, sslEnabled, chapAuth…). Go integers
 *   that are not pointers (`partition`, iSCSI `lun`): `0` is unset. String maps (volumeAttributes,
 *   options, labels, annotations, userAnnotations, matchLabels): `{}` is unset. So are the claim
 *   template's `metadata`, `spec` and `spec.resources` when `{}` (Go writes empty structs so).
 * - Defaults the API server applies (pkg/apis/core/v1 defaults): configMap, secret, downwardAPI
 *   and projected `defaultMode` 420 (0644); projected serviceAccountToken `expirationSeconds`
 *   3600; hostPath `type` ""; downward API `fieldRef.apiVersion` "v1"; iSCSI `iscsiInterface`
 *   "default"; RBD `pool` "rbd", `user` "admin", `keyring` "/etc/ceph/keyring"; azureDisk
 *   `cachingMode` "ReadWrite", `fsType` "ext4", `kind` "Shared"; scaleIO `storageMode`
 *   "ThinProvisioned", `fsType` "xfs"; image `pullPolicy` Always for a `:latest` or untagged,
 *   undigested reference, else IfNotPresent; ephemeral claim `volumeMode` "Filesystem".
 *   Documented defaults for mode bits count too: emptyDir `mode` 511 (0777); a file's `mode`
 *   equal to its volume's effective `defaultMode`, and a file's `user` equal to the volume's
 *   `defaultUser`, are omitted, since an unset file field means exactly that (files: items, and
 *   projected token, trust bundle and certificate files, which inherit the projected volume's).
 * - Quantities become a text of their value alone, after the API server's own rounding:
 *   emptyDir `sizeLimit` and downward API `divisor` (`"0"`, the API server's encoding of unset,
 *   is unset); ephemeral claim `resources.limits`/`requests` rounded up to milli units as the API
 *   server does. So `1Gi`, `1024Mi` and `1073741824` are equal (`"1073741824"`), and so are `1k`
 *   and `1e3` (`"1e3"`). Texts that are not quantities are kept as they are.
 * - Order: configMap/secret (and their projections) `items` sorted by `[key, path, item]`;
 *   downward API `items` by `[path, item]` — what is mounted does not depend on their order.
 *   Every other list keeps its order (projected `sources`, monitors, portals, WWNs, accessModes,
 *   selector expressions): the API keeps it, and a reordering is at worst one extra change.
 * - Everything else — names, keys, paths, modes, drivers, attributes, secret references, claim
 *   templates — is kept, and unknown fields inside a known source are kept as canonical JSON.
 *
 * Upstream ToolHive hashes a simpler form — only `"configmap:<name>"`-style source names and
 * name/mountPath/readOnly for mounts — whose value for DESIGN §4.3's example is `a27fcf11…`.
 * Ours differs on purpose: upstream's misses changes to items, modes, projected sources, sizes
 * and most source types, which is the "volume changes went undetected" bug this guards against.
 *
 * Limits: objects nested deeper than 100 levels (nothing in a real pod spec comes close) are
 * replaced by a marker, and cycles (impossible in JSON) are cut, so no input can throw. Fields
 * the API server drops because their feature gate is off (alpha `defaultUser`, emptyDir `mode`,
 * `bindMountOptions`) are dropped after admission, so they cannot be accounted for here.
 */

import { createHash } from 'node:crypto'
import { defaultPullPolicy } from './image-reference.ts'
import { compareCodePoints, compareCodeUnits, hasSurrogate } from './content-checksum.ts'
import { isRecord, setOwn } from './kube.ts'
import type { JsonObject } from './kube.ts'
import { quantityValueText } from './quantity.ts'

/** The canonical JSON text of a pod spec's volumes, mounts and devices (see above). */
export function podVolumesCanonical(podSpec: unknown): string {
  const volumes = listOf(podSpec, 'volumes').map(canonicalVolume)
  const mounts: JsonObject[] = []
  const devices: JsonObject[] = []
  for (const list of CONTAINER_LISTS) {
    for (const container of listOf(podSpec, list)) {
      const name = canonical(own(container, 'name')) ?? ''
      const tag = list === 'containers' ? 'container' : 'initContainer'
      for (const mount of listOf(container, 'volumeMounts')) {
        mounts.push(entry(tag, name, 'mount', normalise(mount, MOUNT_FIELDS, NO_DEFAULTS)))
      }
      for (const device of listOf(container, 'volumeDevices')) {
        devices.push(entry(tag, name, 'device', normalise(device, DEVICE_FIELDS, NO_DEFAULTS)))
      }
    }
  }
  return stringify({
    volumeDevices: sortedBy(devices, (e) => containerSortKey(e, 'device', ['name', 'devicePath'])),
    volumeMounts: sortedBy(mounts, (e) =>
      containerSortKey(e, 'mount', ['name', 'mountPath', 'subPath']),
    ),
    volumes: sortedBy(volumes, (volume) => [field(volume, 'name')]),
  })
}

/** DESIGN §4.3: lowercase hex SHA-256 of `podVolumesCanonical(podSpec)`. */
export function podVolumesHash(podSpec: unknown): string {
  return createHash('sha256').update(podVolumesCanonical(podSpec), 'utf8').digest('hex')
}

const CONTAINER_LISTS = ['containers', 'initContainers'] as const

/**
 * How a known field is normalised (the field is already canonical JSON). `text`: "" is unset;
 * `flag`: false is unset; `count`: 0 is unset; `map`: {} is unset; `set`: sorted; `quantity`:
 * its value text; `fileMode`/`fileUser`: unset when equal to the enclosing volume's default;
 * `defaultMode`: 420 is unset, and the object sets the defaults its files inherit; `{default}`:
 * "" and the default are unset; `{object}`, `{items}`, `{list}`: nested objects, one or a list
 * (`items` sorted by `sortBy`, then the whole item); a function: anything else.
 */
type Rule =
  | 'text'
  | 'flag'
  | 'count'
  | 'map'
  | 'set'
  | 'quantity'
  | 'fileMode'
  | 'fileUser'
  | 'defaultMode'
  | { readonly default: string | number }
  | { readonly object: Fields; readonly emptyIsUnset?: boolean }
  | { readonly items: Fields; readonly sortBy: readonly string[] }
  | { readonly list: Fields }
  | ((value: unknown, owner: JsonObject) => unknown)
type Fields = Readonly<Record<string, Rule>>

/** What files inherit when their own `mode`/`user` is unset. */
interface FileDefaults {
  readonly mode: unknown
  readonly user: unknown
}

const DEFAULT_MODE = 0o644
const NO_DEFAULTS: FileDefaults = { mode: DEFAULT_MODE, user: undefined }

const REF: Rule = { object: { name: 'text' } }
const KEY_TO_PATH: Rule = {
  items: { key: 'text', path: 'text', mode: 'fileMode', user: 'fileUser' },
  sortBy: ['key', 'path'],
}
const DOWNWARD_API_ITEMS: Rule = {
  items: {
    path: 'text',
    fieldRef: { object: { apiVersion: { default: 'v1' }, fieldPath: 'text' } },
    resourceFieldRef: {
      object: { containerName: 'text', resource: 'text', divisor: divisorValue },
    },
    mode: 'fileMode',
    user: 'fileUser',
  },
  sortBy: ['path'],
}
const LABEL_SELECTOR: Rule = {
  object: { matchLabels: 'map', matchExpressions: { list: { key: 'text', operator: 'text' } } },
}
const RESOURCE_LIST: Rule = resourceListValue

const PROJECTION: Fields = {
  configMap: { object: { name: 'text', items: KEY_TO_PATH, optional: 'flag' } },
  secret: { object: { name: 'text', items: KEY_TO_PATH, optional: 'flag' } },
  downwardAPI: { object: { items: DOWNWARD_API_ITEMS } },
  serviceAccountToken: {
    object: {
      audience: 'text',
      expirationSeconds: { default: 3600 },
      path: 'text',
      user: 'fileUser',
    },
  },
  clusterTrustBundle: {
    object: {
      name: 'text',
      signerName: 'text',
      labelSelector: LABEL_SELECTOR,
      optional: 'flag',
      path: 'text',
      user: 'fileUser',
    },
  },
  podCertificate: {
    object: {
      signerName: 'text',
      keyType: 'text',
      credentialBundlePath: 'text',
      keyPath: 'text',
      certificateChainPath: 'text',
      userAnnotations: 'map',
      user: 'fileUser',
    },
  },
}

const CLAIM_TEMPLATE: Rule = {
  object: {
    metadata: { object: { labels: 'map', annotations: 'map' }, emptyIsUnset: true },
    spec: {
      object: {
        volumeMode: { default: 'Filesystem' },
        resources: {
          object: { limits: RESOURCE_LIST, requests: RESOURCE_LIST },
          emptyIsUnset: true,
        },
        selector: LABEL_SELECTOR,
        volumeName: 'text',
      },
      emptyIsUnset: true,
    },
  },
}

/** Every core/v1 VolumeSource (k8s.io/api v0.37), with the rules of its fields. */
const SOURCES: ReadonlyMap<string, Fields> = new Map<string, Fields>([
  ['hostPath', { path: 'text', type: 'text' }],
  ['emptyDir', { medium: 'text', sizeLimit: 'quantity', mode: { default: 0o777 } }],
  ['gcePersistentDisk', { pdName: 'text', fsType: 'text', partition: 'count', readOnly: 'flag' }],
  [
    'awsElasticBlockStore',
    { volumeID: 'text', fsType: 'text', partition: 'count', readOnly: 'flag' },
  ],
  ['gitRepo', { repository: 'text', revision: 'text', directory: 'text' }],
  [
    'secret',
    { secretName: 'text', items: KEY_TO_PATH, defaultMode: 'defaultMode', optional: 'flag' },
  ],
  ['nfs', { server: 'text', path: 'text', readOnly: 'flag' }],
  [
    'iscsi',
    {
      targetPortal: 'text',
      iqn: 'text',
      lun: 'count',
      iscsiInterface: { default: 'default' },
      fsType: 'text',
      readOnly: 'flag',
      chapAuthDiscovery: 'flag',
      chapAuthSession: 'flag',
      secretRef: REF,
      initiatorName: 'text',
    },
  ],
  ['glusterfs', { endpoints: 'text', path: 'text', readOnly: 'flag' }],
  ['persistentVolumeClaim', { claimName: 'text', readOnly: 'flag' }],
  [
    'rbd',
    {
      image: 'text',
      fsType: 'text',
      pool: { default: 'rbd' },
      user: { default: 'admin' },
      keyring: { default: '/etc/ceph/keyring' },
      secretRef: REF,
      readOnly: 'flag',
    },
  ],
  [
    'flexVolume',
    { driver: 'text', fsType: 'text', secretRef: REF, readOnly: 'flag', options: 'map' },
  ],
  ['cinder', { volumeID: 'text', fsType: 'text', readOnly: 'flag', secretRef: REF }],
  ['cephfs', { path: 'text', user: 'text', secretFile: 'text', secretRef: REF, readOnly: 'flag' }],
  ['flocker', { datasetName: 'text', datasetUUID: 'text' }],
  ['downwardAPI', { items: DOWNWARD_API_ITEMS, defaultMode: 'defaultMode' }],
  // fc `lun` is a pointer: 0 is a real LUN, not unset.
  ['fc', { fsType: 'text', readOnly: 'flag' }],
  ['azureFile', { secretName: 'text', shareName: 'text', readOnly: 'flag' }],
  ['configMap', { name: 'text', items: KEY_TO_PATH, defaultMode: 'defaultMode', optional: 'flag' }],
  [
    'vsphereVolume',
    { volumePath: 'text', fsType: 'text', storagePolicyName: 'text', storagePolicyID: 'text' },
  ],
  [
    'quobyte',
    {
      registry: 'text',
      volume: 'text',
      readOnly: 'flag',
      user: 'text',
      group: 'text',
      tenant: 'text',
    },
  ],
  [
    'azureDisk',
    {
      diskName: 'text',
      diskURI: 'text',
      cachingMode: { default: 'ReadWrite' },
      fsType: { default: 'ext4' },
      readOnly: 'flag',
      kind: { default: 'Shared' },
    },
  ],
  ['photonPersistentDisk', { pdID: 'text', fsType: 'text' }],
  ['projected', { sources: { list: PROJECTION }, defaultMode: 'defaultMode' }],
  ['portworxVolume', { volumeID: 'text', fsType: 'text', readOnly: 'flag' }],
  [
    'scaleIO',
    {
      gateway: 'text',
      system: 'text',
      secretRef: REF,
      sslEnabled: 'flag',
      protectionDomain: 'text',
      storagePool: 'text',
      storageMode: { default: 'ThinProvisioned' },
      volumeName: 'text',
      fsType: { default: 'xfs' },
      readOnly: 'flag',
    },
  ],
  [
    'storageos',
    {
      volumeName: 'text',
      volumeNamespace: 'text',
      fsType: 'text',
      readOnly: 'flag',
      secretRef: REF,
    },
  ],
  [
    'csi',
    {
      driver: 'text',
      readOnly: 'flag',
      fsType: 'text',
      volumeAttributes: 'map',
      nodePublishSecretRef: REF,
    },
  ],
  ['ephemeral', { volumeClaimTemplate: CLAIM_TEMPLATE }],
  ['image', { reference: 'text', pullPolicy: pullPolicyValue }],
])

/** The source types normalised field by field; any other source keeps its canonical JSON. */
export const KNOWN_VOLUME_SOURCES: readonly string[] = [...SOURCES.keys()]

const MOUNT_FIELDS: Fields = {
  name: 'text',
  mountPath: 'text',
  subPath: 'text',
  subPathExpr: 'text',
  readOnly: 'flag',
  mountPropagation: 'text',
  recursiveReadOnly: 'text',
  bindMountOptions: 'set',
}
const DEVICE_FIELDS: Fields = { name: 'text', devicePath: 'text' }

/**
 * The normalised canonical form of one volume. Like `normalise`, it reads the volume as sent and
 * makes each value canonical as it goes, rather than copying the volume twice.
 */
function canonicalVolume(raw: unknown): unknown {
  if (!isRecord(raw)) return canonical(raw) ?? null
  const ancestors: object[] = [raw]
  const result: JsonObject = {}
  let sources = 0
  for (const key of Object.keys(raw)) {
    const value = raw[key]
    if (key === 'name') {
      const name = canonical(value, ancestors)
      put(result, key, name === '' ? undefined : name)
      continue
    }
    const fields = SOURCES.get(key)
    const source = fields
      ? normalise(value, fields, NO_DEFAULTS, ancestors)
      : canonical(value, ancestors)
    if (source !== undefined) sources++
    put(result, key, source)
  }
  // SetDefaults_Volume: a volume without a source is an emptyDir.
  if (sources === 0) setOwn(result, 'emptyDir', {})
  return result
}

/**
 * `canonical(value)` with `fields` applied when it is an object: each field's rule sees the
 * field's canonical value (structural rules descend into it). `ancestors` as for `canonical`.
 */
function normalise(
  value: unknown,
  fields: Fields,
  defaults: FileDefaults,
  ancestors: object[] = [],
): unknown {
  if (!isRecord(value) || ancestors.includes(value) || ancestors.length >= MAX_DEPTH)
    return canonical(value, ancestors)
  ancestors.push(value)
  // Volumes with a defaultMode pass it (and defaultUser) down to their files.
  const inherited =
    fields.defaultMode === 'defaultMode'
      ? {
          mode: canonical(own(value, 'defaultMode'), ancestors) ?? DEFAULT_MODE,
          user: canonical(own(value, 'defaultUser'), ancestors),
        }
      : defaults
  const result: JsonObject = {}
  for (const key of Object.keys(value)) {
    const rule = Object.hasOwn(fields, key) ? fields[key] : undefined
    const field = value[key]
    put(
      result,
      key,
      rule === undefined
        ? canonical(field, ancestors)
        : applyRule(rule, field, value, inherited, ancestors),
    )
  }
  ancestors.pop()
  return result
}

/** Applies `rule` to the field `value` of `owner` (both as sent); undefined when unset. */
function applyRule(
  rule: Rule,
  value: unknown,
  owner: JsonObject,
  defaults: FileDefaults,
  ancestors: object[],
): unknown {
  if (typeof rule === 'object' && 'object' in rule) {
    const result = normalise(value, rule.object, defaults, ancestors)
    return rule.emptyIsUnset === true && isRecord(result) && Object.keys(result).length === 0
      ? undefined
      : result
  }
  if (typeof rule === 'object' && ('list' in rule || 'items' in rule)) {
    if (
      !Array.isArray(value) ||
      value.length === 0 ||
      ancestors.includes(value) ||
      ancestors.length >= MAX_DEPTH
    )
      return canonical(value, ancestors)
    ancestors.push(value)
    const fields = 'list' in rule ? rule.list : rule.items
    const items = Array.from(
      value as unknown[],
      (item) => normalise(item, fields, defaults, ancestors) ?? null,
    )
    ancestors.pop()
    if ('list' in rule) return items
    return sortedBy(items, (item) => rule.sortBy.map((key) => field(item, key)))
  }
  const canonicalValue = canonical(value, ancestors)
  return canonicalValue === undefined ? undefined : apply(rule, canonicalValue, owner, defaults)
}

/** Applies a rule that does not descend to a canonical field value. */
function apply(rule: Rule, value: unknown, owner: JsonObject, defaults: FileDefaults): unknown {
  if (typeof rule === 'function') return rule(value, owner)
  switch (rule) {
    case 'text':
      return value === '' ? undefined : value
    case 'flag':
      return value === false ? undefined : value
    case 'count':
      return value === 0 ? undefined : value
    case 'map':
      return isRecord(value) && Object.keys(value).length === 0 ? undefined : value
    case 'set':
      return Array.isArray(value) ? sortedBy(value, () => []) : value
    case 'quantity':
      return quantityValueText(value) ?? value
    case 'fileMode':
      return value === defaults.mode ? undefined : value
    case 'fileUser':
      return defaults.user !== undefined && value === defaults.user ? undefined : value
    case 'defaultMode':
      return value === DEFAULT_MODE ? undefined : value
  }
  if ('default' in rule) return value === '' || value === rule.default ? undefined : value
  return value
}

/** Downward API divisor: the API server writes an unset divisor as "0". */
function divisorValue(value: unknown): unknown {
  const text = quantityValueText(value)
  return text === '0' ? undefined : (text ?? value)
}

/** Resource lists are rounded up to milli units by the API server; {} is unset. */
function resourceListValue(value: unknown): unknown {
  if (!isRecord(value)) return value
  const result: JsonObject = {}
  for (const key of Object.keys(value)) {
    const quantity = value[key]
    put(result, key, quantityValueText(quantity, true) ?? quantity)
  }
  return Object.keys(result).length === 0 ? undefined : result
}

/** Image volume pullPolicy: SetDefaults_Volume derives it from the reference's tag. */
function pullPolicyValue(value: unknown, owner: JsonObject): unknown {
  return value === '' || value === defaultPullPolicy(own(owner, 'reference')) ? undefined : value
}

function entry(tag: string, container: unknown, kind: string, value: unknown): JsonObject {
  const result: JsonObject = {}
  setOwn(result, tag, container)
  put(result, kind, value ?? null)
  return result
}

function containerSortKey(entry: JsonObject, kind: string, keys: readonly string[]): unknown[] {
  const tag = Object.hasOwn(entry, 'container') ? 'container' : 'initContainer'
  const item = own(entry, kind)
  return [own(entry, tag), tag, ...keys.map((key) => field(item, key))]
}

// --- canonical JSON -------------------------------------------------------------------------

const MAX_DEPTH = 100
const TOO_DEEP = '\u0000nested too deep'

/**
 * A copy of `value` as canonical JSON data: `null`, empty arrays, `undefined` and values JSON
 * cannot hold are dropped (undefined is returned for them), array holes become `null`, `-0` is 0.
 * Keys are copied as own properties, so `__proto__` is an ordinary key. `ancestors` is the path
 * from the root, shared and restored on the way out (cycles are cut, depth is capped).
 */
function canonical(value: unknown, ancestors: object[] = []): unknown {
  if (typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : undefined
  if (typeof value !== 'object' || value === null) return undefined
  if (ancestors.includes(value)) return undefined
  if (ancestors.length >= MAX_DEPTH) return TOO_DEEP
  ancestors.push(value)
  let result: unknown
  if (Array.isArray(value)) {
    const items = Array.from(value as unknown[], (item) => canonical(item, ancestors) ?? null)
    result = items.length === 0 ? undefined : items
  } else {
    const record: JsonObject = {}
    for (const key of Object.keys(value)) put(record, key, canonical(own(value, key), ancestors))
    result = record
  }
  ancestors.pop()
  return result
}

/**
 * A list already sorted and written as canonical JSON text (see `sortedBy`). Nothing reads into a
 * sorted list after sorting, so it is kept as text and written out as it is.
 */
class WrittenList {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

/** Canonical JSON text of canonical data: keys in UTF-8 byte order, no white space. */
function stringify(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (typeof value !== 'object' || value === null) return 'null'
  if (value instanceof WrittenList) return value.text
  if (Array.isArray(value)) {
    let text = '['
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + stringify(value[i])
    return `${text}]`
  }
  const record = value as JsonObject
  const keys = Object.keys(record)
  if (keys.length > 1) keys.sort(keys.every(isPlainKey) ? undefined : compareCodePoints)
  let text = '{'
  for (const key of keys) {
    text += `${text.length === 1 ? '' : ','}${keyText(key)}:${stringify(record[key])}`
  }
  return `${text}}`
}

/**
 * The JSON text of keys seen before that have no surrogate (so the native sort orders them by
 * code point). Pod specs use a small vocabulary of keys; the cap keeps user-chosen map keys
 * (labels, attributes) from growing it without bound.
 */
const PLAIN_KEYS = new Map<string, string>()
const MAX_PLAIN_KEYS = 4096

function isPlainKey(key: string): boolean {
  return PLAIN_KEYS.has(key) || !hasSurrogate(key)
}

function keyText(key: string): string {
  const known = PLAIN_KEYS.get(key)
  if (known !== undefined) return known
  const text = JSON.stringify(key)
  if (!hasSurrogate(key)) {
    if (PLAIN_KEYS.size >= MAX_PLAIN_KEYS) PLAIN_KEYS.clear()
    PLAIN_KEYS.set(key, text)
  }
  return text
}

/**
 * Sorts by the UTF-8 bytes of the canonical JSON text of each item's key tuple, `[...keyOf(item),
 * item]`. The tuple ends with the item itself, so two items tie only when their texts are equal
 * and the input order cannot show through. Each item is written once, for its key and the result.
 */
function sortedBy<T>(items: readonly T[], keyOf: (item: T) => unknown[]): WrittenList {
  const entries: (readonly [key: string, text: string])[] = []
  for (const item of items) {
    const text = stringify(item)
    let key = '['
    for (const part of keyOf(item)) key += `${stringify(part)},`
    entries.push([`${key}${text}]`, text])
  }
  const order = entries.some(([key]) => hasSurrogate(key)) ? compareCodePoints : compareCodeUnits
  entries.sort((a, b) => order(a[0], b[0]))
  return new WrittenList(`[${entries.map(([, text]) => text).join(',')}]`)
}

function listOf(parent: unknown, key: string): unknown[] {
  const value = own(parent, key)
  return Array.isArray(value) ? value : []
}

/** `parent[key]` when it is the parent's own property (never one inherited from a prototype). */
function own(parent: unknown, key: string): unknown {
  return isRecord(parent) && Object.hasOwn(parent, key) ? parent[key] : undefined
}

/** A sort-key component: the field's canonical value, or null when absent. */
function field(parent: unknown, key: string): unknown {
  return own(parent, key) ?? null
}

function put(target: JsonObject, key: string, value: unknown): void {
  if (value !== undefined) setOwn(target, key, value)
}
