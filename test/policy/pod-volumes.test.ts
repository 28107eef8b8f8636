import fc from 'fast-check'
import t from 'tap'
import { createHash } from 'node:crypto'
import {
  KNOWN_VOLUME_SOURCES,
  podVolumesCanonical,
  podVolumesHash,
} from '../../src/policy/pod-volumes.ts'
import type { JsonObject } from '../../src/policy/kube.ts'
import { podSpec } from '../fuzz/objects.ts'
import { ROWS, VOLUME_SOURCE_TYPES, patched } from './fixtures/volume-source-rows.ts'

/** sha256 of the canonical forms of the generated corpus below, as the original writer gave them. */
const PINNED_CORPUS_DIGEST = '781cef5629899eb8c44e5b81945337a5fb1a85006fc1d255aab8236d03a2f206'

/** The hash of a pod spec with one volume named `v` holding `source` as its `type`. */
function volumeHash(type: string, source: unknown): string {
  return podVolumesHash({ volumes: [{ name: 'v', [type]: source }] })
}

t.test('every VolumeSource type is known and has a row', async (t) => {
  t.same([...KNOWN_VOLUME_SOURCES].sort(), [...VOLUME_SOURCE_TYPES].sort())
  t.same([...new Set(ROWS.map((row) => row.type))].sort(), [...VOLUME_SOURCE_TYPES].sort())
})

// What the API server makes of each row is checked against a real one: the e2e suite sends every
// row through `kubectl create --dry-run=server` (test/e2e/volume-defaulting.test.ts).
t.test('what means the same volume hashes the same', async (t) => {
  for (const row of ROWS) {
    const base = volumeHash(row.type, row.before)
    for (const override of row.same ?? []) {
      const variant = patched(row.before, override)
      t.equal(volumeHash(row.type, variant), base, `${row.type}: ${JSON.stringify(override)}`)
    }
  }
})

t.test('every identity-bearing change changes the hash', async (t) => {
  for (const row of ROWS) {
    const base = volumeHash(row.type, row.before)
    const seen = new Set([base])
    for (const override of row.changes) {
      const changed = volumeHash(row.type, patched(row.before, override))
      const label = `${row.type}: ${JSON.stringify(override)}`
      t.not(changed, base, label)
      // And no two changes of a row collapse into one another.
      t.notOk(seen.has(changed), `${label} is distinct`)
      seen.add(changed)
    }
    t.not(base, podVolumesHash({ volumes: [{ name: 'w', [row.type]: row.before }] }), 'name')
  }
})

t.test('a volume without a source is the emptyDir the API server makes of it', async (t) => {
  const emptyDir = volumeHash('emptyDir', {})
  t.equal(podVolumesHash({ volumes: [{ name: 'v' }] }), emptyDir)
  t.equal(podVolumesHash({ volumes: [{ name: 'v', configMap: null }] }), emptyDir)
  t.equal(volumeHash('emptyDir', { medium: '', sizeLimit: null }), emptyDir)
  t.not(volumeHash('emptyDir', { sizeLimit: '1Gi' }), emptyDir)
})

t.test('quantities compare by value', async (t) => {
  const hashOf = (sizeLimit: unknown): string => volumeHash('emptyDir', { sizeLimit })
  const groups: unknown[][] = [
    ['1Gi', '1024Mi', '1073741824', 1073741824, ' 1Gi ', '1048576Ki'],
    ['1k', '1e3', '1000', 1000, '1E3'],
    ['500m', '0.5', 0.5],
  ]
  const firsts = new Set<string>()
  for (const group of groups) {
    const first = hashOf(group[0])
    firsts.add(first)
    for (const value of group) t.equal(hashOf(value), first, JSON.stringify(value))
  }
  t.equal(firsts.size, groups.length, 'different values differ')
  t.not(hashOf('not-a-quantity'), hashOf('1Gi'), 'an invalid quantity is kept as written')
  t.not(hashOf('not-a-quantity'), hashOf('also-not'), 'and still identifies itself')
  // Resource lists of a claim template are rounded up to milli units by the API server.
  const claim = (storage: string): string =>
    volumeHash('ephemeral', {
      volumeClaimTemplate: { spec: { resources: { requests: { storage } } } },
    })
  t.equal(claim('0.0001'), claim('1m'))
  t.not(claim('2m'), claim('1m'))
})

t.test('image pullPolicy defaults from the reference tag', async (t) => {
  // Verified against SetDefaults_Volume in k8s.io/kubernetes v1.37.2.
  const cases: [string, string][] = [
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx:1.27', 'IfNotPresent'],
    ['localhost:5000/nginx', 'Always'],
    ['localhost:5000/nginx:1', 'IfNotPresent'],
    ['localhost:5000', 'IfNotPresent'],
    [`nginx@sha256:${'a'.repeat(64)}`, 'IfNotPresent'],
    [`nginx:latest@sha256:${'a'.repeat(64)}`, 'Always'],
    ['', 'IfNotPresent'],
    ['Foo.com/team/app', 'Always'],
    ['index.docker.io/nginx', 'Always'],
    // References the Docker grammar rejects get IfNotPresent, whatever their tag.
    ['Nginx', 'IfNotPresent'],
    ['team/App:latest', 'IfNotPresent'],
    ['nginx:latest@md5:0123456789abcdef0123456789abcdef', 'IfNotPresent'],
    [`nginx:latest@sha256:${'A'.repeat(64)}`, 'IfNotPresent'],
    ['a'.repeat(64), 'IfNotPresent'],
    [`a${'/b'.repeat(130)}`, 'IfNotPresent'],
  ]
  for (const [reference, pullPolicy] of cases) {
    const other = pullPolicy === 'Always' ? 'IfNotPresent' : 'Always'
    const base = volumeHash('image', { reference })
    t.equal(volumeHash('image', { reference, pullPolicy }), base, `${reference} → ${pullPolicy}`)
    t.not(volumeHash('image', { reference, pullPolicy: other }), base, `${reference} ≠ ${other}`)
  }
})

const MOUNT = { name: 'config', mountPath: '/etc/config', readOnly: true }

function mountsHash(containers: unknown[], initContainers: unknown[] = []): string {
  return podVolumesHash({ volumes: [{ name: 'config', emptyDir: {} }], containers, initContainers })
}

t.test('mounts: defaults, and every field identifies the mount', async (t) => {
  const base = mountsHash([{ name: 'app', volumeMounts: [MOUNT] }])
  const same: JsonObject[] = [
    { subPath: '', subPathExpr: '' },
    { mountPropagation: null, recursiveReadOnly: null, bindMountOptions: [] },
  ]
  for (const override of same) {
    const mount = patched(MOUNT, override)
    t.equal(mountsHash([{ name: 'app', volumeMounts: [mount] }]), base, JSON.stringify(override))
  }
  const changes: JsonObject[] = [
    { name: 'other' },
    { mountPath: '/etc/other' },
    { subPath: 'a' },
    { subPathExpr: '$(POD_NAME)' },
    { readOnly: false },
    { mountPropagation: 'HostToContainer' },
    { recursiveReadOnly: 'IfPossible' },
    { bindMountOptions: ['noexec'] },
  ]
  const seen = new Set([base])
  for (const override of changes) {
    const changed = mountsHash([{ name: 'app', volumeMounts: [patched(MOUNT, override)] }])
    t.not(changed, base, JSON.stringify(override))
    t.notOk(seen.has(changed), `${JSON.stringify(override)} is distinct`)
    seen.add(changed)
  }
  t.equal(
    mountsHash([{ name: 'app', volumeMounts: [{ ...MOUNT, readOnly: false }] }]),
    mountsHash([{ name: 'app', volumeMounts: [{ name: 'config', mountPath: '/etc/config' }] }]),
    'readOnly false is the default',
  )
  t.not(mountsHash([{ name: 'side', volumeMounts: [MOUNT] }]), base, 'another container')
  t.not(mountsHash([], [{ name: 'app', volumeMounts: [MOUNT] }]), base, 'an init container')
  t.not(mountsHash([{ name: 'app' }]), base, 'no mount')
  t.not(
    mountsHash([{ name: 'app', volumeDevices: [{ name: 'config', devicePath: '/dev/xvda' }] }]),
    mountsHash([{ name: 'app' }]),
    'a block device',
  )
  t.not(
    mountsHash([{ name: 'app', volumeDevices: [{ name: 'config', devicePath: '/dev/xvda' }] }]),
    mountsHash([{ name: 'app', volumeDevices: [{ name: 'config', devicePath: '/dev/xvdb' }] }]),
    'a device path',
  )
})

t.test('order does not matter where it carries no meaning', async (t) => {
  const a = { name: 'a', configMap: { name: 'cm-a' } }
  const b = { name: 'b', secret: { secretName: 'sec-b' } }
  const c = { name: 'c', emptyDir: {} }
  t.equal(podVolumesHash({ volumes: [a, b, c] }), podVolumesHash({ volumes: [c, a, b] }), 'volumes')

  const app = {
    name: 'app',
    volumeMounts: [
      { name: 'a', mountPath: '/a' },
      { name: 'b', mountPath: '/b' },
      { name: 'a', mountPath: '/a2', subPath: 'x' },
    ],
  }
  const side = { name: 'side', volumeMounts: [{ name: 'c', mountPath: '/c' }] }
  const init = { name: 'init', volumeMounts: [{ name: 'a', mountPath: '/a' }] }
  const reordered = {
    ...app,
    volumeMounts: [...app.volumeMounts].reverse(),
  }
  t.equal(
    podVolumesHash({ containers: [app, side], initContainers: [init] }),
    podVolumesHash({ initContainers: [init], containers: [side, reordered] }),
    'containers and mounts',
  )
  t.not(
    podVolumesHash({ containers: [app, side], initContainers: [init] }),
    podVolumesHash({ containers: [app, side, init] }),
    'but an init container is not a container',
  )
  const items = [
    { key: 'b', path: 'b' },
    { key: 'a', path: 'a' },
    { key: 'a', path: 'a2' },
  ]
  t.equal(
    volumeHash('configMap', { name: 'cm', items }),
    volumeHash('configMap', { name: 'cm', items: [...items].reverse() }),
    'configMap items',
  )
  t.equal(
    mountsHash([
      { name: 'app', volumeMounts: [{ ...MOUNT, bindMountOptions: ['nodev', 'noexec'] }] },
    ]),
    mountsHash([
      { name: 'app', volumeMounts: [{ ...MOUNT, bindMountOptions: ['noexec', 'nodev'] }] },
    ]),
    'bindMountOptions is a set',
  )
  t.equal(
    volumeHash('csi', { driver: 'd', volumeAttributes: { b: '2', a: '1' } }),
    volumeHash('csi', { volumeAttributes: { a: '1', b: '2' }, driver: 'd' }),
    'key order',
  )
})

t.test('volumes sort by the code points of their names', async (t) => {
  // U+FF61 sorts after U+1F600 in UTF-16 units but before it in code points (UTF-8 bytes).
  const canonical = podVolumesCanonical({
    volumes: [{ name: '\u{1F600}' }, { name: '\uFF61' }, { name: 'a' }],
  })
  const names = (JSON.parse(canonical) as { volumes: { name: string }[] }).volumes.map(
    (v) => v.name,
  )
  t.same(names, ['a', '\uFF61', '\u{1F600}'])
})

t.test(
  'lists sort by the bytes of the JSON text of [key…, item], separators included',
  async (t) => {
    // `1` is a prefix of `12`: in the text `[1]` against `[12]`, `]` (0x5d) sorts after `2`, so 12
    // comes first. Comparing the texts 1 and 12 alone would put 1 first.
    t.equal(
      podVolumesCanonical({
        containers: [
          { name: 'a', volumeMounts: [{ name: 'm', bindMountOptions: [1, 12, 1.5, '1', 10] }] },
        ],
      }),
      '{"volumeDevices":[],"volumeMounts":[{"container":"a","mount":{"bindMountOptions":["1",1.5,10,12,1],"name":"m"}}],"volumes":[]}',
    )
    t.equal(
      podVolumesCanonical({ volumes: [{ name: 'v', secret: { items: [12, 1, { key: 'k' }] } }] }),
      '{"volumeDevices":[],"volumeMounts":[],"volumes":[{"name":"v","secret":{"items":[{"key":"k"},12,1]}}]}',
    )
    // In a key, `,` (0x2c) follows the shorter text and sorts before any digit.
    t.equal(
      podVolumesCanonical({
        containers: [
          { name: 12, volumeMounts: [{}] },
          { name: 1, volumeMounts: [{}] },
        ],
      }),
      '{"volumeDevices":[],"volumeMounts":[{"container":1,"mount":{}},{"container":12,"mount":{}}],"volumes":[]}',
    )
    // A device's "device" key sorts before "initContainer" but after "container".
    t.equal(
      podVolumesCanonical({
        containers: [{ name: 'c', volumeDevices: [{ name: 'd' }] }],
        initContainers: [{ name: 'i', volumeDevices: [{ name: 'd' }] }],
      }),
      '{"volumeDevices":[{"container":"c","device":{"name":"d"}},{"device":{"name":"d"},"initContainer":"i"}],"volumeMounts":[],"volumes":[]}',
    )
  },
)

t.test('a source type this code does not know keeps its canonical JSON', async (t) => {
  const future = (source: unknown): string =>
    podVolumesHash({ volumes: [{ name: 'v', future: source }] })
  const base = future({ driver: 'x', options: { depth: { level: 1 }, list: [1, 2] } })
  t.not(
    future({ driver: 'x', options: { depth: { level: 2 }, list: [1, 2] } }),
    base,
    'nested field',
  )
  t.not(future({ driver: 'x', options: { depth: { level: 1 }, list: [2, 1] } }), base, 'list order')
  t.not(future({ driver: 'y', options: { depth: { level: 1 }, list: [1, 2] } }), base, 'driver')
  t.equal(
    future({ options: { list: [1, 2], depth: { level: 1 } }, driver: 'x' }),
    base,
    'key order does not matter',
  )
  t.not(
    podVolumesHash({
      volumes: [
        { name: 'v', other: { driver: 'x', options: { depth: { level: 1 }, list: [1, 2] } } },
      ],
    }),
    base,
    'the type name counts',
  )
  t.not(future({}), volumeHash('emptyDir', {}), 'an unknown source is not "no source"')
  // A field newer than this code inside a known source is kept too.
  t.not(
    volumeHash('configMap', { name: 'cm', futureField: { a: 1 } }),
    volumeHash('configMap', { name: 'cm' }),
  )
  t.not(
    volumeHash('configMap', { name: 'cm', futureField: { a: 1 } }),
    volumeHash('configMap', { name: 'cm', futureField: { a: 2 } }),
  )
  t.match(
    podVolumesCanonical({ volumes: [{ name: 'v', future: { b: 1, a: [true, null, 'x'] } }] }),
    '"future":{"a":[true,null,"x"],"b":1}',
  )
})

t.test('hostile input never throws and never reaches a prototype', async (t) => {
  const cyclic: JsonObject = { name: 'v' }
  cyclic.future = { again: cyclic }
  let deep: unknown = 'bottom'
  for (let i = 0; i < 100_000; i++) deep = [deep]
  const sparse: unknown[] = []
  sparse[3] = { name: 'x' }
  const inputs: unknown[] = [
    null,
    undefined,
    42,
    'spec',
    true,
    [],
    [{ volumes: [] }],
    {},
    { volumes: 'x' },
    { volumes: {} },
    { volumes: [null, 1, 'x', [], {}, { name: 5 }, { configMap: 'x' }, { secret: [1] }] },
    {
      volumes: [
        { name: 'v', projected: { sources: 'x' } },
        { name: 'w', projected: { sources: [1, null] } },
      ],
    },
    { volumes: [{ name: 'v', configMap: { items: [null, 1, { key: 5 }] } }] },
    { volumes: [{ name: 'v', downwardAPI: { items: [{ fieldRef: 'x', resourceFieldRef: [] }] } }] },
    { volumes: [{ name: 'v', ephemeral: { volumeClaimTemplate: { spec: { resources: 'x' } } } }] },
    {
      volumes: [
        { name: 'v', ephemeral: { volumeClaimTemplate: { spec: { resources: { requests: 1 } } } } },
      ],
    },
    {
      volumes: [
        { name: 'v', emptyDir: { sizeLimit: {} } },
        { name: 'w', image: { reference: 3 } },
      ],
    },
    { volumes: [{ name: 'v', future: deep }] },
    { volumes: [cyclic] },
    { volumes: sparse },
    { volumes: [{ name: 'v', future: { f: () => 1, s: Symbol('x'), b: 1n, n: Number.NaN } }] },
    { containers: 'x', initContainers: 7 },
    { containers: [null, 1, { volumeMounts: 'x' }, { volumeMounts: [null, 'x', 1, []] }] },
    {
      containers: [
        { name: { x: 1 }, volumeMounts: [{ bindMountOptions: 'x' }], volumeDevices: [null] },
      ],
    },
    JSON.parse('{"__proto__":{"volumes":[{"name":"x"}]}}'),
    JSON.parse('{"volumes":[{"name":"__proto__","__proto__":{"x":1}}]}'),
    JSON.parse('{"volumes":[{"name":"v","configMap":{"__proto__":{"name":"x"}}}]}'),
    JSON.parse('{"containers":[{"name":"__proto__","volumeMounts":[{"__proto__":1,"name":"v"}]}]}'),
    JSON.parse('{"volumes":[{"name":"v","csi":{"volumeAttributes":{"__proto__":"x"}}}]}'),
  ]
  for (const [i, input] of inputs.entries()) {
    let hash = ''
    t.doesNotThrow(() => (hash = podVolumesHash(input)), `input ${i}`)
    t.match(hash, /^[0-9a-f]{64}$/, `input ${i} hashes`)
  }
  // Inherited properties are not the object's own: these are all a pod without volumes.
  const empty = podVolumesHash({})
  t.equal(podVolumesHash(JSON.parse('{"__proto__":{"volumes":[{"name":"x"}]}}')), empty)
  t.equal(podVolumesHash(Object.create({ volumes: [{ name: 'x' }] })), empty)
  t.equal(podVolumesHash(null), empty)
  t.equal(podVolumesHash([]), empty)
  t.equal(podVolumesHash({ volumes: [] }), empty)
  t.equal(Object.getPrototypeOf({}), Object.prototype)
  t.equal(({} as JsonObject).name, undefined, 'Object.prototype untouched')
})

t.test('a __proto__ key is an ordinary key', async (t) => {
  const withProto = JSON.parse(
    '{"volumes":[{"name":"v","configMap":{"name":"cm","items":[{"key":"__proto__","path":"p"},{"key":"a","path":"a"}]}}]}',
  ) as unknown
  const without = {
    volumes: [{ name: 'v', configMap: { name: 'cm', items: [{ key: 'a', path: 'a' }] } }],
  }
  t.not(podVolumesHash(withProto), podVolumesHash(without), 'an item keyed __proto__ counts')
  const protoAttr = JSON.parse(
    '{"volumes":[{"name":"v","csi":{"driver":"d","volumeAttributes":{"__proto__":"x"}}}]}',
  ) as unknown
  const noAttr = { volumes: [{ name: 'v', csi: { driver: 'd' } }] }
  t.not(podVolumesHash(protoAttr), podVolumesHash(noAttr), 'an attribute named __proto__ counts')
  t.match(podVolumesCanonical(protoAttr), '"volumeAttributes":{"__proto__":"x"}')
  const protoName = JSON.parse('{"volumes":[{"name":"__proto__"}]}') as unknown
  t.not(podVolumesHash(protoName), podVolumesHash({ volumes: [{ name: 'x' }] }))
})

t.test('nulls and empty lists are unset', async (t) => {
  const base = volumeHash('configMap', { name: 'cm' })
  t.equal(volumeHash('configMap', { name: 'cm', items: null }), base)
  t.equal(volumeHash('configMap', { name: 'cm', items: [] }), base)
  t.equal(volumeHash('configMap', { name: 'cm', optional: null, defaultMode: null }), base)
  t.equal(podVolumesHash({ volumes: null, containers: null }), podVolumesHash({}))
})

t.test('a pod without volumes has a stable canonical form', async (t) => {
  const canonical = '{"volumeDevices":[],"volumeMounts":[],"volumes":[]}'
  t.equal(podVolumesCanonical({}), canonical)
  t.equal(podVolumesCanonical({ containers: [{ name: 'app' }] }), canonical)
  t.equal(podVolumesHash({}), createHash('sha256').update(canonical).digest('hex'))
})

t.test('DESIGN §4.3 example: our hash is pinned, and differs from upstream', async (t) => {
  const spec = {
    volumes: [{ name: 'vmcp-config', configMap: { name: 'demo-vmcp-config' } }],
    containers: [
      {
        name: 'vmcp',
        volumeMounts: [{ name: 'vmcp-config', mountPath: '/etc/vmcp-config', readOnly: true }],
      },
    ],
  }
  const ours =
    '{"volumeDevices":[],"volumeMounts":[{"container":"vmcp","mount":{"mountPath":"/etc/vmcp-config","name":"vmcp-config","readOnly":true}}],' +
    '"volumes":[{"configMap":{"name":"demo-vmcp-config"},"name":"vmcp-config"}]}'
  // Pinned: a change to the canonical form must be deliberate (it changes every stamped hash).
  t.equal(podVolumesCanonical(spec), ours)
  t.equal(podVolumesHash(spec), '657df35e1fa32924aad1b9841e244556b87fa47ec6433bccfa93edfe1e5b0b53')
  // The same Deployment as the API server stores it hashes the same.
  const stored = {
    volumes: [{ name: 'vmcp-config', configMap: { name: 'demo-vmcp-config', defaultMode: 420 } }],
    containers: spec.containers,
  }
  t.equal(podVolumesHash(stored), podVolumesHash(spec))
  // Upstream ToolHive's simpler form (DESIGN §4.3) hashes to a27fcf11…; ours differs on purpose.
  const upstream =
    '{"volumes":[{"name":"vmcp-config","source":"configmap:demo-vmcp-config"}],"volumeMounts":[{"name":"vmcp-config","mountPath":"/etc/vmcp-config","readOnly":true}]}'
  const upstreamHash = createHash('sha256').update(upstream).digest('hex')
  t.equal(upstreamHash, 'a27fcf11b06ee8fe6b36a28158f3fb1ff3810f135022e21fe33e43c29dedc605')
  t.not(podVolumesHash(spec), upstreamHash)
})

t.test('the canonical form of a volume with items, modes and a quantity', async (t) => {
  const canonical = podVolumesCanonical({
    volumes: [
      {
        name: 'cfg',
        configMap: {
          name: 'cm',
          defaultMode: 0o440,
          optional: false,
          items: [
            { key: 'b', path: 'b.txt', mode: 0o440 },
            { key: 'a', path: 'a.txt', mode: 0o400 },
          ],
        },
      },
      { name: 'scratch', emptyDir: { sizeLimit: '512Mi', medium: '' } },
    ],
  })
  t.equal(
    canonical,
    '{"volumeDevices":[],"volumeMounts":[],"volumes":[' +
      '{"configMap":{"defaultMode":288,"items":[{"key":"a","mode":256,"path":"a.txt"},{"key":"b","path":"b.txt"}],"name":"cm"},"name":"cfg"},' +
      '{"emptyDir":{"sizeLimit":"536870912"},"name":"scratch"}]}',
  )
})

t.test('the canonical form of 2,000 generated pod specs is pinned', async (t) => {
  // Guards rewrites of the canonical writer: any change to any of these texts changes a hash
  // already stamped on every proxy Deployment (and rolls nothing, but reads as drift).
  const specs = fc.sample(podSpec, { seed: 20261123, numRuns: 2000 })
  const digest = createHash('sha256')
  for (const spec of specs) digest.update(podVolumesCanonical(spec)).update('\n')
  t.equal(digest.digest('hex'), PINNED_CORPUS_DIGEST)
})
