/**
 * The pod volumes fingerprint through a real API server (DESIGN §4.3, issue 18): every row of
 * test/policy/fixtures/volume-source-rows.ts — each core/v1 VolumeSource type as a user writes
 * it, every variant that means the same and every change — goes into a Pod and a Deployment sent
 * with `kubectl create --dry-run=server -o json`, each volume mounted (and claims attached as
 * block devices) in a container and an init container. What comes back is the pod spec as the API
 * server decoded, defaulted and re-encoded it; `podVolumesHash` of it must equal that of what was
 * sent, volume by volume and for the whole spec. So the unit table's claims about defaulting are
 * checked against the API server rather than hand-written.
 *
 * Two API servers: one with the default feature gates, as a cluster runs, and one with the alpha
 * gates of volume fields on (file `user`/`defaultUser`, emptyDir `mode`, mount
 * `bindMountOptions`), so those fields go through defaulting too. With their gates off the API
 * server drops them, which the fingerprint cannot know (see `src/policy/pod-volumes.ts`): there
 * the expected fingerprint is that of the spec without them, and getting it proves they were
 * dropped. So that the check cannot pass for lack of defaulting, each row as written must come
 * back with exactly the defaults listed in DEFAULTED, and nothing else changed.
 */

import t from 'tap'
import type { Test } from 'tap'
import type { JsonObject } from '../../src/policy/kube.ts'
import {
  KNOWN_PROJECTION_SOURCES,
  KNOWN_VOLUME_SOURCES,
  podVolumesCanonical,
  podVolumesHash,
} from '../../src/policy/pod-volumes.ts'
import { ROWS, VOLUME_SOURCE_TYPES, patched } from '../policy/fixtures/volume-source-rows.ts'
import type { SourceRow } from '../policy/fixtures/volume-source-rows.ts'
import { startControlPlane } from './harness/control-plane.ts'
import type { ControlPlane } from './harness/control-plane.ts'
import { kubectlFor, mustKubectl } from './harness/kubectl.ts'
import type { Kubectl } from './harness/kubectl.ts'

type Any = Record<string, any>

/** The alpha gates of volume fields (Kubernetes 1.37): off by default, on in the second plane. */
const ALPHA_VOLUME_GATES = [
  'AtomicWriteVolumeUserFields',
  'EmptyDirVolumeMode',
  'VolumeBindMountOptions',
] as const

/**
 * What the API server sets in each row as written, by dotted path, per row of the type in table
 * order (two image rows). Types not listed come back exactly as sent.
 */
const DEFAULTED: Readonly<Record<string, readonly Readonly<Record<string, unknown>>[]>> = {
  hostPath: [{ type: '' }],
  // Not a default: the quantity 1024Mi is re-encoded in its canonical form.
  emptyDir: [{ sizeLimit: '1Gi' }],
  secret: [{ defaultMode: 420 }],
  iscsi: [{ iscsiInterface: 'default' }],
  rbd: [{ pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' }],
  downwardAPI: [
    {
      defaultMode: 420,
      'items.0.fieldRef.apiVersion': 'v1',
      'items.1.resourceFieldRef.divisor': '0',
    },
  ],
  configMap: [{ defaultMode: 420 }],
  azureDisk: [{ cachingMode: 'ReadWrite', fsType: 'ext4', readOnly: false, kind: 'Shared' }],
  projected: [
    {
      defaultMode: 420,
      'sources.2.downwardAPI.items.0.fieldRef.apiVersion': 'v1',
      'sources.3.serviceAccountToken.expirationSeconds': 3600,
    },
  ],
  scaleIO: [{ storageMode: 'ThinProvisioned', fsType: 'xfs' }],
  ephemeral: [
    {
      'volumeClaimTemplate.metadata': {},
      'volumeClaimTemplate.spec.volumeMode': 'Filesystem',
      'volumeClaimTemplate.spec.resources.requests.storage': '1Gi',
    },
  ],
  image: [{ pullPolicy: 'IfNotPresent' }, { pullPolicy: 'Always' }],
}

/** Volume types that can be attached as raw block devices. */
const BLOCK_TYPES: ReadonlySet<string> = new Set(['persistentVolumeClaim', 'ephemeral'])

/** The mounts each volume gets, in turn: defaults written out, nulls, and every field set. */
const MOUNT_SHAPES: readonly JsonObject[] = [
  {},
  { readOnly: false, subPath: '', subPathExpr: '' },
  { readOnly: true, mountPropagation: null, recursiveReadOnly: null, bindMountOptions: [] },
  { readOnly: true, subPath: 'data', mountPropagation: 'None', recursiveReadOnly: 'IfPossible' },
  { subPathExpr: '$(POD_NAME)', mountPropagation: 'HostToContainer' },
  { bindMountOptions: ['noexec', 'nodev'] },
]

const IMAGE = 'registry.k8s.io/pause:3.10'

interface Variant {
  readonly label: string
  readonly source: JsonObject
}

interface Planes {
  readonly plain: ControlPlane
  readonly gated: ControlPlane
}

const planes = await startPlanes()

/** A row's name in messages: its type, and what it holds when another row has the same type. */
function rowLabel(row: SourceRow): string {
  const shared = ROWS.filter((other) => other.type === row.type).length > 1
  return shared ? `${row.type} ${JSON.stringify(row.before)}` : row.type
}

function variantsOf(row: SourceRow): Variant[] {
  return [
    { label: 'as written', source: row.before },
    ...(row.same ?? []).map((override) => ({
      label: `same ${JSON.stringify(override)}`,
      source: patched(row.before, override),
    })),
    ...row.changes.map((override) => ({
      label: `change ${JSON.stringify(override)}`,
      source: patched(row.before, override),
    })),
  ]
}

/** A variant's volume name: `r<row>-v<variant>`. */
const volumeName = (row: number, variant: number): string => `r${row}-v${variant}`

/**
 * One pod spec holding every variant of every row as a volume, each mounted by the app and init
 * containers (in turn in each of MOUNT_SHAPES) and each claim attached as a device by block.
 */
function podSpecOf(rows: readonly { row: SourceRow; variants: readonly Variant[] }[]): JsonObject {
  const volumes: JsonObject[] = []
  const appMounts: JsonObject[] = []
  const initMounts: JsonObject[] = []
  const devices: JsonObject[] = []
  for (const [r, { row, variants }] of rows.entries()) {
    for (const [v, variant] of variants.entries()) {
      const name = volumeName(r, v)
      volumes.push({ name, [row.type]: variant.source })
      const mount = (shape: number, dir: string): JsonObject => {
        const fields = MOUNT_SHAPES[(volumes.length + shape) % MOUNT_SHAPES.length]
        // The API server refuses bind mount options on image volumes.
        const bindMountOptions = row.type === 'image' ? undefined : fields?.['bindMountOptions']
        return patched({ name, mountPath: `/${dir}/${name}`, ...fields }, { bindMountOptions })
      }
      appMounts.push(mount(0, 'app'))
      initMounts.push(mount(1, 'init'))
      if (BLOCK_TYPES.has(row.type)) devices.push({ name, devicePath: `/dev/${name}` })
    }
  }
  return {
    // Else the ServiceAccount admission plugin adds a projected token volume.
    automountServiceAccountToken: false,
    volumes,
    initContainers: [{ name: 'init', image: IMAGE, volumeMounts: initMounts }],
    containers: [
      { name: 'app', image: IMAGE, volumeMounts: appMounts },
      { name: 'block', image: IMAGE, volumeDevices: devices },
    ],
  }
}

/** Sends a Pod and a Deployment with `spec`; returns their pod specs as the API server made them. */
async function defaulted(
  kubectl: Kubectl,
  namespace: string,
  spec: JsonObject,
): Promise<{ Pod: Any; Deployment: Any }> {
  const name = 'volumes'
  const labels = { app: name }
  const send = async (object: JsonObject): Promise<Any> =>
    JSON.parse(
      await mustKubectl(
        kubectl,
        ['create', '--dry-run=server', '-o', 'json', '-f', '-'],
        JSON.stringify(object),
      ),
    ) as Any
  const [pod, deployment] = await Promise.all([
    send({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec }),
    send({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace },
      spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec } },
    }),
  ])
  return { Pod: pod['spec'] as Any, Deployment: deployment['spec'].template.spec as Any }
}

/**
 * `spec` without the fields of ALPHA_VOLUME_GATES, as an API server with those gates off stores
 * it. Returns the copy and how many fields it removed.
 */
function withoutAlphaFields(spec: JsonObject): { spec: JsonObject; removed: number } {
  const copy = structuredClone<Any>(spec)
  let removed = 0
  const drop = (object: unknown, key: string): void => {
    if (object !== null && typeof object === 'object' && Object.hasOwn(object, key)) {
      Reflect.deleteProperty(object, key)
      removed++
    }
  }
  const dropItemUsers = (source: unknown): void => {
    for (const item of ((source as Any | undefined)?.['items'] ?? []) as unknown[]) {
      drop(item, 'user')
    }
  }
  for (const volume of copy['volumes'] as Any[]) {
    drop(volume['emptyDir'], 'mode')
    for (const type of ['configMap', 'secret', 'downwardAPI', 'projected']) {
      drop(volume[type], 'defaultUser')
      dropItemUsers(volume[type])
    }
    for (const projection of (volume['projected']?.sources ?? []) as Any[]) {
      for (const type of ['configMap', 'secret', 'downwardAPI']) dropItemUsers(projection[type])
      for (const type of ['serviceAccountToken', 'clusterTrustBundle', 'podCertificate']) {
        drop(projection[type], 'user')
      }
    }
  }
  for (const container of [...copy['containers'], ...copy['initContainers']] as Any[]) {
    for (const mount of (container['volumeMounts'] ?? []) as Any[]) {
      // An empty list is unset either way; only a set value is lost.
      if (Array.isArray(mount['bindMountOptions']) && mount['bindMountOptions'].length > 0) {
        drop(mount, 'bindMountOptions')
      }
    }
  }
  return { spec: copy, removed }
}

/** `object` with `value` at the dotted `path` (numbers index lists). */
function withValueAt(object: unknown, path: string, value: unknown): unknown {
  const copy = structuredClone(object) as Any
  const keys = path.split('.')
  const last = keys.pop() as string
  let parent: Any = copy
  for (const key of keys) {
    parent[key] ??= {}
    parent = parent[key] as Any
  }
  parent[last] = value
  return copy
}

function volumeNamed(spec: Any, name: string): Any | undefined {
  return (spec['volumes'] as Any[] | undefined)?.find((volume) => volume['name'] === name)
}

/** The part of a pod spec about volume `name`: the volume, and its mounts and devices. */
function sliceOf(spec: Any, name: string): JsonObject {
  const containers = (list: unknown): JsonObject[] =>
    ((list ?? []) as Any[]).map((container) => ({
      name: container['name'] as string,
      volumeMounts: ((container['volumeMounts'] ?? []) as Any[]).filter((m) => m['name'] === name),
      volumeDevices: ((container['volumeDevices'] ?? []) as Any[]).filter(
        (d) => d['name'] === name,
      ),
    }))
  return {
    volumes: [volumeNamed(spec, name) ?? null],
    containers: containers(spec['containers']),
    initContainers: containers(spec['initContainers']),
  }
}

/** Checks one plane; returns the volume and projection types checked. */
async function checkPlane(
  t: Test,
  plane: ControlPlane,
  gatesOn: boolean,
): Promise<{ types: Set<string>; projections: Set<string> }> {
  const kubectl = kubectlFor(plane.kubeconfig)
  const namespace = 'volumes'
  await mustKubectl(kubectl, ['create', 'namespace', namespace])
  // Pods run as the namespace's default ServiceAccount; no controller manager makes it here.
  await mustKubectl(kubectl, ['create', 'serviceaccount', 'default', '-n', namespace])

  const rows = ROWS.map((row) => ({ row, variants: variantsOf(row) }))
  const spec = podSpecOf(rows)
  const stripped = withoutAlphaFields(spec)
  // What the API server must keep: all of it with the gates on, else all but the alpha fields.
  const expected = gatesOn ? spec : stripped.spec
  // The alpha fields are in the table, so one plane checks them and the other drops them.
  t.ok(stripped.removed > 0, `${stripped.removed} alpha fields sent`)
  const returned = await defaulted(kubectl, namespace, spec)

  const types = new Set<string>()
  const projections = new Set<string>()
  for (const [kind, back] of Object.entries(returned)) {
    t.equal(podVolumesHash(back), podVolumesHash(expected), `${kind}: the whole pod spec`, {
      sent: podVolumesCanonical(expected),
      returned: podVolumesCanonical(back),
    })
    const occurrences = new Map<string, number>()
    for (const [r, { row, variants }] of rows.entries()) {
      const occurrence = occurrences.get(row.type) ?? 0
      occurrences.set(row.type, occurrence + 1)
      const label = `${rowLabel(row)} (${kind})`
      for (const v of variants.keys()) {
        const want = sliceOf(expected, volumeName(r, v))
        const got = sliceOf(back, volumeName(r, v))
        t.equal(podVolumesHash(got), podVolumesHash(want), `${label}: ${variants[v]?.label}`, {
          sentSpec: want,
          returnedSpec: got,
          sent: podVolumesCanonical(want),
          returned: podVolumesCanonical(got),
        })
      }
      // The row as written: the API server set exactly the defaults listed, so defaulting ran.
      const source = volumeNamed(back, volumeName(r, 0))?.[row.type] as unknown
      const defaults = DEFAULTED[row.type]?.[occurrence] ?? {}
      let want: unknown = row.before
      for (const [path, value] of Object.entries(defaults)) want = withValueAt(want, path, value)
      t.strictSame(source, want, `${label}: defaulted as listed`)
      if (Object.keys(defaults).length > 0) t.notSame(source, row.before, `${label}: defaulted`)
      types.add(row.type)
      if (row.type === 'projected') {
        for (const projection of (source as Any)['sources'] as Any[]) {
          for (const type of Object.keys(projection)) projections.add(type)
        }
      }
    }
  }
  return { types, projections }
}

for (const [name, gatesOn] of [
  ['default feature gates', false],
  ['alpha volume field gates on', true],
] as const) {
  t.test(`every volume source keeps its fingerprint through the API server: ${name}`, async (t) => {
    const { types, projections } = await checkPlane(
      t,
      gatesOn ? planes.gated : planes.plain,
      gatesOn,
    )
    // No row is skipped: every VolumeSource type and every projection type went through.
    t.strictSame([...types].sort(), [...VOLUME_SOURCE_TYPES].sort(), 'every volume source type')
    t.strictSame([...types].sort(), [...KNOWN_VOLUME_SOURCES].sort(), 'every type the hash knows')
    t.strictSame(
      [...projections].sort(),
      [...KNOWN_PROJECTION_SOURCES].sort(),
      'every projection type',
    )
  })
}

/** Both control planes, started side by side and stopped when the file ends. */
async function startPlanes(): Promise<Planes> {
  const gates = `--feature-gates=${ALPHA_VOLUME_GATES.map((gate) => `${gate}=true`).join(',')}`
  const started = await Promise.allSettled([
    startControlPlane(),
    startControlPlane({ apiServerArgs: async () => [gates] }),
  ])
  const running = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
  t.teardown(async () => {
    await Promise.all(running.map((plane) => plane.stop()))
  })
  const [plain, gated] = started
  if (plain.status !== 'fulfilled') throw plain.reason
  if (gated.status !== 'fulfilled') throw gated.reason
  return { plain: plain.value, gated: gated.value }
}
