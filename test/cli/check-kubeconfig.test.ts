// `check --kubeconfig` and `review --kubeconfig`: the ToolHive CRDs the cluster serves, listed
// from a (fake) API server, judge objects exactly as the same CRDs given with `--crds`; what stops
// the read is one line naming the server, exit 2.
import t from 'tap'
import { join } from 'node:path'
import { runCli } from '../helpers/cli.ts'
import { startFakeKubeApi } from '../helpers/fake-kube-api.ts'
import { freePort } from '../helpers/ports.ts'
import { review } from '../helpers/objects.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { PROBE_CRD, probe } from '../policy/crd/probe-crd.ts'

const json = (value: unknown) => JSON.stringify(value)
const GROUP = 'toolhive.stacklok.dev'
const CRDS_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'

/** The probe CRD in ToolHive's group (the cluster's copy) or another one (which is ignored). */
function probeCrd(group: string, name = `probes.${group}`): KubeObject {
  const crd = structuredClone(PROBE_CRD) as any
  crd.metadata.name = name
  crd.spec.group = group
  return crd as KubeObject
}
const toolHiveProbe = (spec: Record<string, unknown>, name: string): KubeObject => ({
  ...probe(spec, { metadata: { name, namespace: 'ns' } }),
  apiVersion: `${GROUP}/v1`,
})

/** A kubeconfig for `server` (client-node takes plain http only with TLS verification off). */
function kubeconfig(server: string): string {
  return json({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 'jwt' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  })
}

const OBJECTS = json({
  apiVersion: 'v1',
  kind: 'List',
  items: [
    toolHiveProbe({ timeout: '-1s' }, 'bad'),
    toolHiveProbe({ replica: 3 }, 'typo'),
    // Of another group's CRD, which the cluster serves but check does not take: not checked.
    probe({ timeout: '-1s' }, { metadata: { name: 'other', namespace: 'ns' } }),
  ],
})

t.test('the cluster ToolHive CRDs judge objects as the same CRDs given as files', async (t) => {
  const fake = await startFakeKubeApi(t)
  // More than one list page (50 a page), ToolHive's CRD on the second, among other groups'.
  fake.objects = [
    ...Array.from({ length: 55 }, (_, i) => probeCrd('example.com', `c${i}.example.com`)),
    probeCrd(GROUP),
  ]
  const dir = t.testdir({
    kubeconfig: kubeconfig(fake.server),
    'crds.json': json(probeCrd(GROUP)),
    'objects.json': OBJECTS,
  })
  const fromCluster = await runCli([
    'check',
    '--kubeconfig',
    join(dir, 'kubeconfig'),
    join(dir, 'objects.json'),
  ])
  const fromFiles = await runCli([
    'check',
    '--crds',
    join(dir, 'crds.json'),
    join(dir, 'objects.json'),
  ])
  t.equal(fromCluster.code, 1, fromCluster.stderr)
  t.equal(fromCluster.stdout, fromFiles.stdout, 'the same report')
  t.match(
    fromCluster.stdout,
    'DENIED   Probe ns/bad by its CustomResourceDefinition:\n' +
      '    spec.timeout: Invalid value: "-1s": timeout must be non-negative\n',
  )
  t.match(fromCluster.stdout, 'admitted Probe ns/typo: unchanged\n    warning: unknown field')
  t.match(
    fromCluster.stdout,
    'unchecked Probe ns/other: no rule of mcp-admission and no CRD given applies to its kind\n',
    "another group's CRD is reported as not checked, never as admitted",
  )
  t.same(
    fake.requests.map((r) => [r.path, r.query.limit, r.query.continue]),
    [
      [CRDS_PATH, '50', undefined],
      [CRDS_PATH, '50', 'offset-50'],
    ],
    'every page of the list, nothing else',
  )

  const reviewed = await runCli(
    ['review', '--kubeconfig', join(dir, 'kubeconfig'), '-'],
    json(review(toolHiveProbe({ b: false }, 'p'))),
  )
  t.equal(reviewed.code, 1, reviewed.stderr)
  t.match(JSON.parse(reviewed.stdout), {
    response: {
      allowed: false,
      status: { message: 'spec.b: Invalid value: false: b must be true' },
    },
  })
})

t.test('a cluster with no ToolHive CRD: one line naming the server, exit 2', async (t) => {
  const fake = await startFakeKubeApi(t)
  fake.objects = [probeCrd('example.com')]
  const dir = t.testdir({ kubeconfig: kubeconfig(fake.server), 'objects.json': OBJECTS })
  const result = await runCli([
    'check',
    '--kubeconfig',
    join(dir, 'kubeconfig'),
    join(dir, 'objects.json'),
  ])
  t.equal(result.code, 2)
  t.equal(result.stdout, '')
  t.equal(
    result.stderr,
    `mcp-admission: --kubeconfig ${join(dir, 'kubeconfig')}: ${fake.server} has no CustomResourceDefinition of group ${GROUP} (is the ToolHive operator's CRD chart installed?)\n`,
  )
})

t.test(
  'a cluster that refuses or cannot be reached: one line naming the server, exit 2',
  async (t) => {
    const fake = await startFakeKubeApi(t)
    fake.beforePage = async () => 403
    const closed = `http://127.0.0.1:${await freePort()}`
    const dir = t.testdir({
      refusing: kubeconfig(fake.server),
      unreachable: kubeconfig(closed),
      'objects.json': OBJECTS,
    })
    const refused = await runCli([
      'check',
      '--kubeconfig',
      join(dir, 'refusing'),
      join(dir, 'objects.json'),
    ])
    t.equal(refused.code, 2)
    t.match(
      refused.stderr,
      new RegExp(
        `^mcp-admission: --kubeconfig \\S+refusing: cannot list the CustomResourceDefinitions of ${fake.server}: 403 page  refused\\n$`,
      ),
    )
    const unreachable = await runCli(
      ['review', '--kubeconfig', join(dir, 'unreachable'), '-'],
      json(review(toolHiveProbe({}, 'p'))),
    )
    t.equal(unreachable.code, 2)
    t.match(
      unreachable.stderr,
      new RegExp(
        `^mcp-admission: --kubeconfig \\S+unreachable: cannot list the CustomResourceDefinitions of ${closed}: [^\\n]*ECONNREFUSED[^\\n]*\\n$`,
      ),
    )
    const missing = await runCli([
      'check',
      '--kubeconfig',
      join(dir, 'missing'),
      join(dir, 'objects.json'),
    ])
    t.equal(missing.code, 2)
    t.match(missing.stderr, /^mcp-admission: --kubeconfig \S+missing: no such file\n$/)
  },
)

t.test('--crds with --kubeconfig is a usage error, exit 2', async (t) => {
  const dir = t.testdir({ 'crds.json': json(probeCrd(GROUP)), 'objects.json': OBJECTS })
  for (const [name, operand] of [
    ['check', join(dir, 'objects.json')],
    ['review', '-'],
  ] as const) {
    const result = await runCli(
      [name, operand, '--crds', join(dir, 'crds.json'), '--kubeconfig', join(dir, 'kubeconfig')],
      json(review(toolHiveProbe({}, 'p'))),
    )
    t.equal(result.code, 2, name)
    t.equal(
      result.stderr,
      'mcp-admission: --crds and --kubeconfig cannot be used together: give the CRDs as files, or read them from the cluster\n',
      name,
    )
  }
})
