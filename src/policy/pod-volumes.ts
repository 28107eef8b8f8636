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
 * without volumes still has a stable hash. The rule table normalises the spec to plain data
 * (`pod-volumes-normalise.ts`), which `canonicalJson` writes: JSON without white space, object keys
 * sorted by their UTF-8 bytes (code points, not UTF-16 units), strings and numbers as
 * `JSON.stringify` writes them.
 *
 * - `volumes`: every entry of `volumes`, normalised (below), sorted by the UTF-8 bytes of the JSON
 *   text `[name, volume]`. A volume with no source besides `name` is `emptyDir: {}`, as the API
 *   server defaults it. Every key besides `name` counts as a source: the 30 of core/v1
 *   `VolumeSource` are normalised field by field (`VOLUME_SOURCES` in `pod-volumes-rules.ts`);
 *   any other key (a source newer than this code) is kept as its canonical JSON, never reduced to
 *   its name.
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
import { isRecord } from './kube.ts'
import { inCanonicalOrder, normalise, own, plainData, sortField } from './pod-volumes-normalise.ts'
import {
  DEVICE_FIELDS,
  DEVICE_SORT_BY,
  MOUNT_FIELDS,
  MOUNT_SORT_BY,
  NO_DEFAULTS,
  PROJECTION_SOURCES,
  VOLUME_FIELDS,
  VOLUME_SOURCES,
} from './pod-volumes-rules.ts'
import type { Fields } from './pod-volumes-rules.ts'

/** The source types normalised field by field; any other source keeps its canonical JSON. */
export const KNOWN_VOLUME_SOURCES: readonly string[] = [...VOLUME_SOURCES.keys()]

/** The projected volume source types normalised field by field. */
export const KNOWN_PROJECTION_SOURCES: readonly string[] = Object.keys(PROJECTION_SOURCES)

/** The canonical JSON text of a pod spec's volumes, mounts and devices (see above). */
export function podVolumesCanonical(podSpec: unknown): string {
  const volumes = Array.from(listOf(podSpec, 'volumes'), volumeData)
  const mounts: ContainerEntry[] = []
  const devices: ContainerEntry[] = []
  for (const [list, role] of CONTAINER_LISTS) {
    for (const container of listOf(podSpec, list)) {
      const name = plainData(own(container, 'name'), []) ?? ''
      for (const mount of listOf(container, 'volumeMounts')) {
        mounts.push(containerEntry(role, name, 'mount', mount, MOUNT_FIELDS, MOUNT_SORT_BY))
      }
      for (const device of listOf(container, 'volumeDevices')) {
        devices.push(containerEntry(role, name, 'device', device, DEVICE_FIELDS, DEVICE_SORT_BY))
      }
    }
  }
  // The three keys are written in their canonical order; each list item is written once.
  const volumeTexts = inCanonicalOrder(volumes, (volume) => [sortField(volume, 'name')])
  return `{"volumeDevices":${sortedText(devices)},"volumeMounts":${sortedText(mounts)},"volumes":${listText(volumeTexts)}}`
}

/** DESIGN §4.3: lowercase hex SHA-256 of `podVolumesCanonical(podSpec)`. */
export function podVolumesHash(podSpec: unknown): string {
  return createHash('sha256').update(podVolumesCanonical(podSpec), 'utf8').digest('hex')
}

const CONTAINER_LISTS = [
  ['containers', 'container'],
  ['initContainers', 'initContainer'],
] as const

/** A volume as plain data; one without a source is an emptyDir, as SetDefaults_Volume makes it. */
function volumeData(raw: unknown): unknown {
  const volume = normalise(raw, VOLUME_FIELDS, NO_DEFAULTS, []) ?? null
  if (isRecord(volume) && Object.keys(volume).every((key) => key === 'name')) {
    volume.emptyDir = {}
  }
  return volume
}

/** A mount or device with its container, and what it sorts by. */
interface ContainerEntry {
  readonly sortKey: unknown[]
  readonly data: unknown
}

/**
 * `{"container"|"initContainer": name, "mount"|"device": item}`, sorted by
 * `[name, role, ...sortBy fields of the item]`, then the entry.
 */
function containerEntry(
  role: string,
  name: unknown,
  kind: string,
  raw: unknown,
  fields: Fields,
  sortBy: readonly string[],
): ContainerEntry {
  const item = normalise(raw, fields, NO_DEFAULTS, []) ?? null
  const sortKey = [name, role, ...sortBy.map((field) => sortField(item, field))]
  return { sortKey, data: { [role]: name, [kind]: item } }
}

function sortedText(entries: readonly ContainerEntry[]): string {
  return listText(
    inCanonicalOrder(
      entries,
      (entry) => entry.sortKey,
      (entry) => entry.data,
    ),
  )
}

function listText(entries: readonly { readonly text: string }[]): string {
  return `[${entries.map((entry) => entry.text).join(',')}]`
}

function listOf(parent: unknown, key: string): unknown[] {
  const value = own(parent, key)
  return Array.isArray(value) ? value : []
}
