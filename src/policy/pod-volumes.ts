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
import { sortedByUtf8 } from './content-checksum.ts'
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
        mounts.push(entry(tag, name, 'mount', normalise(canonical(mount), MOUNT_FIELDS)))
      }
      for (const device of listOf(container, 'volumeDevices')) {
        devices.push(entry(tag, name, 'device', normalise(canonical(device), DEVICE_FIELDS)))
      }
    }
  }
  return stringify({
    volumeDevices: sortedBy(devices, (e) => containerSortKey(e, 'device', ['name', 'devicePath'])),
    volumeMounts: sortedBy(mounts, (e) =>
      containerSortKey(e, 'mount', ['name', 'mountPath', 'subPath']),
    ),
    volumes: sortedBy(volumes, (volume) => [field(volume, 'name'), volume]),
  })
}

/** DESIGN §4.3: lowercase hex SHA-256 of `podVolumesCanonical(podSpec)`. */
export function podVolumesHash(podSpec: unknown): string {
  // Operators re-submit the same Deployments on every reconcile: the same volumes and mounts,
  // byte for byte, hash the same, so the (costly) canonical form is built once per distinct set.
  const key = volumesKey(podSpec)
  const known = key === undefined ? undefined : HASHES.get(key)
  if (known !== undefined) return known
  const hash = createHash('sha256').update(podVolumesCanonical(podSpec), 'utf8').digest('hex')
  if (key !== undefined) remember(key, hash)
  return hash
}

/** Recent fingerprints by the exact JSON of what they cover; bounded, oldest dropped first. */
const HASHES = new Map<string, string>()
const MAX_REMEMBERED = 1024

function remember(key: string, hash: string): void {
  if (HASHES.size >= MAX_REMEMBERED) HASHES.delete(HASHES.keys().next().value ?? '')
  HASHES.set(key, hash)
}

/** The exact input of the fingerprint as JSON text, or undefined when it cannot be written. */
function volumesKey(podSpec: unknown): string | undefined {
  if (!isRecord(podSpec)) return undefined
  const parts: unknown[] = [podSpec.volumes]
  for (const list of CONTAINER_LISTS) {
    const containers = podSpec[list]
    if (!Array.isArray(containers)) {
      parts.push(['list', containers])
      continue
    }
    for (const container of containers as unknown[]) {
      // Tagged, so a malformed container can never read as a well-formed one.
      parts.push(
        isRecord(container)
          ? ['container', container.name, container.volumeMounts, container.volumeDevices]
          : ['other', container],
      )
    }
    parts.push(list)
  }
  try {
    const key = JSON.stringify(parts)
    // Huge inputs are not worth keeping in memory.
    return key.length <= 65_536 ? key : undefined
  } catch {
    // Nesting too deep for JSON.stringify: hash without the memo.
    return undefined
  }
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

function canonicalVolume(raw: unknown): unknown {
  const volume = canonical(raw) ?? null
  if (!isRecord(volume)) return volume
  const result: JsonObject = {}
  let sources = 0
  for (const key of Object.keys(volume)) {
    const value = volume[key]
    if (key === 'name') {
      put(result, key, value === '' ? undefined : value)
      continue
    }
    sources++
    const fields = SOURCES.get(key)
    put(result, key, fields && isRecord(value) ? normalise(value, fields) : value)
  }
  // SetDefaults_Volume: a volume without a source is an emptyDir.
  if (sources === 0) setOwn(result, 'emptyDir', {})
  return result
}

/** Applies `fields` to a canonical object; anything that is not an object is left as it is. */
function normalise(value: unknown, fields: Fields, defaults = NO_DEFAULTS): unknown {
  if (!isRecord(value)) return value
  // Volumes with a defaultMode pass it (and defaultUser) down to their files.
  const inherited =
    fields.defaultMode === 'defaultMode'
      ? { mode: own(value, 'defaultMode') ?? DEFAULT_MODE, user: own(value, 'defaultUser') }
      : defaults
  const result: JsonObject = {}
  for (const key of Object.keys(value)) {
    const rule = Object.hasOwn(fields, key) ? fields[key] : undefined
    const fieldValue = value[key]
    put(result, key, rule === undefined ? fieldValue : apply(rule, fieldValue, value, inherited))
  }
  return result
}

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
      return Array.isArray(value) ? sortedBy(value, (item) => [item]) : value
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
  if ('object' in rule) {
    const result = normalise(value, rule.object, defaults)
    return rule.emptyIsUnset === true && isRecord(result) && Object.keys(result).length === 0
      ? undefined
      : result
  }
  if (!Array.isArray(value)) return value
  if ('list' in rule) return value.map((item) => normalise(item, rule.list, defaults))
  const items = value.map((item) => normalise(item, rule.items, defaults))
  return sortedBy(items, (item) => [...rule.sortBy.map((key) => field(item, key)), item])
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
  return [own(entry, tag), tag, ...keys.map((key) => field(item, key)), entry]
}

// --- canonical JSON -------------------------------------------------------------------------

const MAX_DEPTH = 100
const TOO_DEEP = '\u0000nested too deep'

/**
 * A copy of `value` as canonical JSON data: `null`, empty arrays, `undefined` and values JSON
 * cannot hold are dropped (undefined is returned for them), array holes become `null`, `-0` is 0.
 * Keys are copied as own properties, so `__proto__` is an ordinary key.
 */
function canonical(value: unknown, ancestors: readonly object[] = []): unknown {
  if (typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : undefined
  if (typeof value !== 'object' || value === null) return undefined
  if (ancestors.includes(value)) return undefined
  if (ancestors.length >= MAX_DEPTH) return TOO_DEEP
  const path = [...ancestors, value]
  if (Array.isArray(value)) {
    const items = Array.from(value as unknown[], (item) => canonical(item, path) ?? null)
    return items.length === 0 ? undefined : items
  }
  const result: JsonObject = {}
  for (const key of Object.keys(value)) put(result, key, canonical(own(value, key), path))
  return result
}

/** Canonical JSON text: keys in UTF-8 byte order, no white space. */
function stringify(value: unknown): string {
  if (typeof value !== 'object' || value === null) {
    return value === undefined ? 'null' : JSON.stringify(value)
  }
  // Sorting writes each volume and mount once as a key and once more in the result; the
  // canonical objects are built fresh and never changed afterwards, so the text is reused.
  const known = WRITTEN.get(value)
  if (known !== undefined) return known
  let text: string
  if (Array.isArray(value)) text = `[${value.map(stringify).join(',')}]`
  else {
    const record = value as JsonObject
    const members = sortedByUtf8(Object.keys(record)).map(
      (key) => `${JSON.stringify(key)}:${stringify(record[key])}`,
    )
    text = `{${members.join(',')}}`
  }
  WRITTEN.set(value, text)
  return text
}

const WRITTEN = new WeakMap<object, string>()

/**
 * Sorts by the UTF-8 bytes of the canonical JSON text of each item's key tuple. Tuples end with
 * the item itself, so distinct items never tie and the input order cannot show through.
 */
function sortedBy<T>(items: readonly T[], keyOf: (item: T) => unknown[]): T[] {
  const buckets = new Map<string, T[]>()
  for (const item of items) {
    const key = stringify(keyOf(item))
    const bucket = buckets.get(key)
    if (bucket) bucket.push(item)
    else buckets.set(key, [item])
  }
  return sortedByUtf8([...buckets.keys()]).flatMap((key) => buckets.get(key) ?? [])
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
