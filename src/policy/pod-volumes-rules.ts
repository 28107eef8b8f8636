/**
 * DESIGN §4.3: the rule table of the pod volumes fingerprint — every core/v1 volume source type,
 * its fields, and the defaults the API server writes into them — which `pod-volumes-normalise.ts`
 * applies to a spec. The fields a rule does not name are kept as they are (a field newer than
 * this code must still count), so a rule exists only where a value can mean "unset".
 */

import { defaultPullPolicy } from './image-reference.ts'
import { isRecord, setOwn } from './kube.ts'
import type { JsonObject } from './kube.ts'
import { quantityValueText } from './quantity.ts'

/**
 * How a known field is normalised. `text`: "" is unset; `flag`: false is unset; `count`: 0 is
 * unset; `map`: {} is unset; `set`: sorted; `quantity`: its value text; `fileMode`/`fileUser`:
 * unset when equal to the enclosing volume's default; `defaultMode`: 420 is unset, and the object
 * sets the defaults its files inherit; `{default}`: "" and the default are unset; `{object}`,
 * `{items}`, `{list}`: nested objects, one or a list (`items` sorted by `sortBy`, then the whole
 * item); a function: anything else (it gets the field as plain data, never unset, and returns the
 * plain data to write, or undefined for unset).
 */
export type Rule =
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
export type Fields = Readonly<Record<string, Rule>>

/** What files inherit when their own `mode`/`user` is unset. */
export interface FileDefaults {
  readonly mode: unknown
  readonly user: unknown
}

export const DEFAULT_MODE = 0o644
export const NO_DEFAULTS: FileDefaults = { mode: DEFAULT_MODE, user: undefined }

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

export const PROJECTION_SOURCES: Fields = {
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
export const VOLUME_SOURCES: ReadonlyMap<string, Fields> = new Map<string, Fields>([
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
  ['projected', { sources: { list: PROJECTION_SOURCES }, defaultMode: 'defaultMode' }],
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

/**
 * A volume: its name and its sources. A volume's name is a `text` like any other, and each source
 * is one object of its fields; a key that is no known source is kept as it is.
 */
export const VOLUME_FIELDS: Fields = {
  name: 'text',
  ...Object.fromEntries([...VOLUME_SOURCES].map(([type, fields]) => [type, { object: fields }])),
}

export const MOUNT_FIELDS: Fields = {
  name: 'text',
  mountPath: 'text',
  subPath: 'text',
  subPathExpr: 'text',
  readOnly: 'flag',
  mountPropagation: 'text',
  recursiveReadOnly: 'text',
  bindMountOptions: 'set',
}
export const DEVICE_FIELDS: Fields = { name: 'text', devicePath: 'text' }
export const MOUNT_SORT_BY = ['name', 'mountPath', 'subPath'] as const
export const DEVICE_SORT_BY = ['name', 'devicePath'] as const

// --- rules computed from the value --------------------------------------------------------

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
    const rounded = quantityValueText(quantity, true) ?? quantity
    if (rounded !== undefined) setOwn(result, key, rounded)
  }
  return Object.keys(result).length === 0 ? undefined : result
}

/** Image volume pullPolicy: SetDefaults_Volume derives it from the reference's tag. */
function pullPolicyValue(value: unknown, owner: JsonObject): unknown {
  return value === '' || value === defaultPullPolicy(own(owner, 'reference')) ? undefined : value
}

/** `parent[key]` when it is the parent's own property (never one inherited from a prototype). */
function own(parent: unknown, key: string): unknown {
  return isRecord(parent) && Object.hasOwn(parent, key) ? parent[key] : undefined
}
