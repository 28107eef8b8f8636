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
import { compareCodePoints, hasSurrogate, sortedByUtf8 } from './content-checksum.ts'
import { isRecord, setOwn } from './kube.ts'
import type { JsonObject } from './kube.ts'
import { quantityValueText } from './quantity.ts'

/** The canonical JSON text of a pod spec's volumes, mounts and devices (see above). */
export function podVolumesCanonical(podSpec: unknown): string {
  const volumes: SortEntry[] = []
  for (const volume of listOf(podSpec, 'volumes')) volumes.push(volumeEntry(volume))
  const mounts: SortEntry[] = []
  const devices: SortEntry[] = []
  for (const list of CONTAINER_LISTS) {
    const tag = list === 'containers' ? '"container"' : '"initContainer"'
    for (const container of listOf(podSpec, list)) {
      const name = canonicalText(own(container, 'name'), []) ?? '""'
      for (const mount of listOf(container, 'volumeMounts')) {
        mounts.push(containerEntry(tag, name, 'mount', mount, MOUNT_FIELDS, MOUNT_SORT_BY))
      }
      for (const device of listOf(container, 'volumeDevices')) {
        devices.push(containerEntry(tag, name, 'device', device, DEVICE_FIELDS, DEVICE_SORT_BY))
      }
    }
  }
  const [deviceText, mountText, volumeText] = [devices, mounts, volumes].map(sortedText)
  return `{"volumeDevices":${deviceText},"volumeMounts":${mountText},"volumes":${volumeText}}`
}

/** DESIGN §4.3: lowercase hex SHA-256 of `podVolumesCanonical(podSpec)`. */
export function podVolumesHash(podSpec: unknown): string {
  return createHash('sha256').update(podVolumesCanonical(podSpec), 'utf8').digest('hex')
}

const CONTAINER_LISTS = ['containers', 'initContainers'] as const

/**
 * How a known field is normalised (each rule judges the field's canonical value). `text`: ""
 * is unset; `flag`: false is unset; `count`: 0 is unset; `map`: {} is unset; `set`: sorted;
 * `quantity`: its value text; `fileMode`/`fileUser`: unset when equal to the enclosing volume's
 * default; `defaultMode`: 420 is unset, and the object sets the defaults its files inherit;
 * `{default}`: "" and the default are unset; `{object}`, `{items}`, `{list}`: nested objects,
 * one or a list (`items` sorted by `sortBy`, then the whole item); a function: anything else (it
 * gets a canonical copy of the field and returns the value to write).
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

/** The projected volume's source types normalised field by field. */
export const KNOWN_PROJECTION_SOURCES: readonly string[] = Object.keys(PROJECTION)

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
const MOUNT_SORT_BY = ['name', 'mountPath', 'subPath'] as const
const DEVICE_SORT_BY = ['name', 'devicePath'] as const

// --- writing ---------------------------------------------------------------------------------
//
// Everything below writes canonical JSON text straight from the spec as sent: no normalised copy
// is built and then stringified (that doubled the work and the garbage on every admission). A
// function returns the text of a value, or undefined when the value is unset. Object keys are
// sorted before their values are written, so the text comes out in order in one pass.

/**
 * One item of a sorted list: the texts of its sort key and its own text. The list is sorted by the
 * UTF-8 bytes of `[...key, text]` written as JSON (see `compareEntries`).
 */
interface SortEntry {
  readonly key: readonly string[]
  readonly text: string
}

/** A volume, keyed by `[name]`. */
function volumeEntry(raw: unknown): SortEntry {
  if (!isRecord(raw)) {
    const text = canonicalText(raw, []) ?? 'null'
    return { key: ['null'], text }
  }
  const ancestors: object[] = [raw]
  const fields: [key: string, text: string][] = []
  let name = 'null'
  let sources = 0
  for (const key of sortedKeys(raw)) {
    const value = raw[key]
    let text: string | undefined
    if (key === 'name') {
      text = value === '' ? undefined : canonicalText(value, ancestors)
      if (text !== undefined) name = text
    } else {
      const sourceFields = SOURCES.get(key)
      text = sourceFields
        ? normalise(value, sourceFields, NO_DEFAULTS, ancestors)
        : canonicalText(value, ancestors)
      if (text !== undefined) sources++
    }
    if (text !== undefined) fields.push([key, text])
  }
  // SetDefaults_Volume: a volume without a source is an emptyDir.
  if (sources === 0) {
    fields.push(['emptyDir', '{}'])
    fields.sort((a, b) => compareCodePoints(a[0], b[0]))
  }
  let text = '{'
  for (const [key, value] of fields)
    text += `${text.length === 1 ? '' : ','}${keyText(key)}:${value}`
  text += '}'
  return { key: [name], text }
}

/**
 * `{"container"|"initContainer": name, "mount"|"device": item}`, keyed by
 * `[name, tag, ...sortBy fields of the item]`.
 */
function containerEntry(
  tag: string,
  name: string,
  kind: string,
  raw: unknown,
  fields: Fields,
  sortBy: readonly string[],
): SortEntry {
  const key = [name, tag, ...sortBy.map(() => 'null')]
  const item = normalise(raw, fields, NO_DEFAULTS, [], sortBy, key, 2) ?? 'null'
  const owner = `${tag}:${name}`
  const field = `"${kind}":${item}`
  return { key, text: tag < `"${kind}"` ? `{${owner},${field}}` : `{${field},${owner}}` }
}

/**
 * The text of `value` with `fields` applied when it is an object. `ancestors` is the path from the
 * root, shared and restored on the way out (cycles are cut, depth is capped). When `sortBy` is
 * given, the texts of those fields are written into `key` from `offset` on (left as they are when
 * unset), for sorting the item among its siblings.
 */
function normalise(
  value: unknown,
  fields: Fields,
  defaults: FileDefaults,
  ancestors: object[],
  sortBy?: readonly string[],
  key?: string[],
  offset = 0,
): string | undefined {
  if (!isRecord(value) || ancestors.includes(value) || ancestors.length >= MAX_DEPTH)
    return canonicalText(value, ancestors)
  ancestors.push(value)
  // Volumes with a defaultMode pass it (and defaultUser) down to their files.
  const inherited =
    fields.defaultMode === 'defaultMode'
      ? {
          // An object's canonical copy equals no file's mode: a file's object mode is kept.
          mode: canonical(own(value, 'defaultMode'), ancestors) ?? DEFAULT_MODE,
          user: canonical(own(value, 'defaultUser'), ancestors),
        }
      : defaults
  let text = '{'
  for (const name of sortedKeys(value)) {
    const rule = Object.hasOwn(fields, name) ? fields[name] : undefined
    const field =
      rule === undefined
        ? canonicalText(value[name], ancestors)
        : ruleText(rule, value[name], value, inherited, ancestors)
    if (field === undefined) continue
    text += `${text.length === 1 ? '' : ','}${keyText(name)}:${field}`
    const part = sortBy === undefined ? -1 : sortBy.indexOf(name)
    if (part >= 0 && key !== undefined) key[offset + part] = field
  }
  ancestors.pop()
  return `${text}}`
}

/** The text of the field `value` of `owner` (both as sent) under `rule`; undefined when unset. */
function ruleText(
  rule: Rule,
  value: unknown,
  owner: JsonObject,
  defaults: FileDefaults,
  ancestors: object[],
): string | undefined {
  if (typeof rule === 'function') {
    const canonicalValue = canonical(value, ancestors)
    return canonicalValue === undefined ? undefined : canonicalText(rule(canonicalValue, owner), [])
  }
  if (typeof rule === 'object' && 'object' in rule) {
    const text = normalise(value, rule.object, defaults, ancestors)
    return rule.emptyIsUnset === true && text === '{}' ? undefined : text
  }
  if (typeof rule === 'object' && ('list' in rule || 'items' in rule)) {
    if (!isWalkableArray(value, ancestors)) return canonicalText(value, ancestors)
    ancestors.push(value)
    let text: string
    if ('list' in rule) {
      text = '['
      for (let i = 0; i < value.length; i++) {
        text += `${i === 0 ? '' : ','}${normalise(value[i], rule.list, defaults, ancestors) ?? 'null'}`
      }
      text += ']'
    } else {
      const entries: SortEntry[] = []
      for (let i = 0; i < value.length; i++) {
        const key = rule.sortBy.map(() => 'null')
        const item = normalise(value[i], rule.items, defaults, ancestors, rule.sortBy, key, 0)
        entries.push({ key, text: item ?? 'null' })
      }
      text = sortedText(entries)
    }
    ancestors.pop()
    return text
  }
  if (typeof value === 'object' && value !== null) {
    // Objects and arrays: only `map` ({} is unset) and `set` (sorted) look into them.
    if (rule === 'set' && isWalkableArray(value, ancestors)) return setText(value, ancestors)
    const text = canonicalText(value, ancestors)
    return rule === 'map' && text === '{}' ? undefined : text
  }
  const scalar = scalarValue(value)
  if (scalar === undefined || isUnsetScalar(rule, scalar, defaults)) return undefined
  if (rule === 'quantity') {
    const quantity = quantityValueText(scalar)
    if (quantity !== undefined) return JSON.stringify(quantity)
  }
  return scalarText(scalar)
}

/** Whether a scalar field value is unset under a rule that does not descend. */
function isUnsetScalar(rule: Rule, value: Scalar, defaults: FileDefaults): boolean {
  switch (rule) {
    case 'text':
      return value === ''
    case 'flag':
      return value === false
    case 'count':
      return value === 0
    case 'fileMode':
      return value === defaults.mode
    case 'fileUser':
      return defaults.user !== undefined && value === defaults.user
    case 'defaultMode':
      return value === DEFAULT_MODE
    case 'map':
    case 'set':
    case 'quantity':
      return false
  }
  return typeof rule === 'object' && 'default' in rule && (value === '' || value === rule.default)
}

/** A `set` (bindMountOptions): its items in the order of their texts. */
function setText(value: readonly unknown[], ancestors: object[]): string {
  ancestors.push(value)
  const entries: SortEntry[] = []
  for (let i = 0; i < value.length; i++) {
    entries.push({ key: [], text: canonicalText(value[i], ancestors) ?? 'null' })
  }
  ancestors.pop()
  return sortedText(entries)
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

// --- canonical JSON -------------------------------------------------------------------------

const MAX_DEPTH = 100
const TOO_DEEP = '\u0000nested too deep'
const TOO_DEEP_TEXT = JSON.stringify(TOO_DEEP)

type Scalar = string | number | boolean

/** A JSON scalar as canonical data (-0 is 0); undefined for null and what JSON cannot hold. */
function scalarValue(value: unknown): Scalar | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : undefined
  return undefined
}

function scalarText(value: Scalar): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value)
}

function isWalkableArray(value: unknown, ancestors: object[]): value is readonly unknown[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    !ancestors.includes(value) &&
    ancestors.length < MAX_DEPTH
  )
}

/**
 * The canonical JSON text of `value`: keys in UTF-8 byte order, no white space; `null`, empty
 * arrays, `undefined` and values JSON cannot hold are unset (undefined is returned for them),
 * array holes and unset items become `null`, `-0` is 0. Keys are read as own properties, so
 * `__proto__` is an ordinary key. `ancestors` as for `normalise`.
 */
function canonicalText(value: unknown, ancestors: object[]): string | undefined {
  if (typeof value !== 'object' || value === null) {
    const scalar = scalarValue(value)
    return scalar === undefined ? undefined : scalarText(scalar)
  }
  if (ancestors.includes(value)) return undefined
  if (ancestors.length >= MAX_DEPTH) return TOO_DEEP_TEXT
  if (Array.isArray(value) && value.length === 0) return undefined
  ancestors.push(value)
  let text: string
  if (Array.isArray(value)) {
    text = '['
    for (let i = 0; i < value.length; i++) {
      text += `${i === 0 ? '' : ','}${canonicalText(value[i], ancestors) ?? 'null'}`
    }
    text += ']'
  } else {
    const record = value as JsonObject
    text = '{'
    for (const key of sortedKeys(record)) {
      const field = canonicalText(record[key], ancestors)
      if (field !== undefined) text += `${text.length === 1 ? '' : ','}${keyText(key)}:${field}`
    }
    text += '}'
  }
  ancestors.pop()
  return text
}

/**
 * A canonical copy of `value` as data, for the few rules that compute on a field's value
 * (quantities, pull policy) and for the defaults files inherit; the same cuts as `canonicalText`.
 */
function canonical(value: unknown, ancestors: object[]): unknown {
  if (typeof value !== 'object' || value === null) return scalarValue(value)
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
 * A record's keys in UTF-8 byte order. Objects in a pod spec have a handful of keys, for which an
 * insertion sort beats `Array.prototype.sort` (and its string conversions) several times over.
 */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record)
  if (keys.length < 2) return keys
  if (keys.length > 16 || !keys.every(isPlainKey)) return sortedByUtf8(keys)
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string
    let j = i - 1
    for (; j >= 0 && (keys[j] as string) > key; j--) keys[j + 1] = keys[j] as string
    keys[j + 1] = key
  }
  return keys
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
 * The list `[text, …]` in the UTF-8 byte order of the entries' keys. A key ends with the item's
 * own text, so two items tie only when their texts are equal and the input order cannot show.
 */
function sortedText(entries: SortEntry[]): string {
  if (entries.length > 1) entries.sort(compareEntries)
  let text = ''
  for (const entry of entries) text += `${text === '' ? '' : ','}${entry.text}`
  return `[${text}]`
}

/**
 * Orders entries by the UTF-8 bytes of `[...key, text]` as JSON text, without writing it: the
 * first pair of texts that differ decides, unless one is a prefix of the other (numbers: `1` and
 * `12`), where the separator that follows counts, so the joined texts are compared instead.
 */
function compareEntries(a: SortEntry, b: SortEntry): number {
  for (let i = 0; i <= a.key.length; i++) {
    const x = i < a.key.length ? (a.key[i] as string) : a.text
    const y = i < b.key.length ? (b.key[i] as string) : b.text
    if (x === y) continue
    if (x.startsWith(y) || y.startsWith(x)) return compareCodePoints(joined(a), joined(b))
    return compareCodePoints(x, y)
  }
  return 0
}

function joined(entry: SortEntry): string {
  return `[${[...entry.key, entry.text].join(',')}]`
}

function listOf(parent: unknown, key: string): unknown[] {
  const value = own(parent, key)
  return Array.isArray(value) ? value : []
}

/** `parent[key]` when it is the parent's own property (never one inherited from a prototype). */
function own(parent: unknown, key: string): unknown {
  return isRecord(parent) && Object.hasOwn(parent, key) ? parent[key] : undefined
}

function put(target: JsonObject, key: string, value: unknown): void {
  if (value !== undefined) setOwn(target, key, value)
}
