// `check --crds` and `review --crds`: the CRD's own verdict (schema, CEL rules, unknown fields)
// before the webhooks', in the API server's words; bad CRD input is a one-line error, exit 2.
import t from 'tap'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { runCli } from '../helpers/cli.ts'
import { review } from '../helpers/objects.ts'
import type { AdmissionReviewResponse } from '../../src/admission/review.ts'
import { PROBE_CRD, probe } from '../policy/crd/probe-crd.ts'

const json = (value: unknown) => JSON.stringify(value)

t.test('check --crds denies what the CRD refuses, warns of unknown fields, exit 1', async (t) => {
  const dir = t.testdir({
    'crds.json': json(PROBE_CRD),
    'objects.json': json({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        probe({ timeout: '-1s' }),
        probe({ replica: 3 }, { metadata: { name: 'ok', namespace: 'ns' } }),
      ],
    }),
  })
  const result = await runCli([
    'check',
    '--crds',
    join(dir, 'crds.json'),
    join(dir, 'objects.json'),
  ])
  t.equal(result.code, 1)
  t.match(
    result.stdout,
    'DENIED   Probe ns/p by its CustomResourceDefinition:\n' +
      '    spec.timeout: Invalid value: "-1s": timeout must be non-negative\n',
  )
  t.match(
    result.stdout,
    'admitted Probe ns/ok: unchanged\n    warning: unknown field "spec.replica"\n',
  )
  t.match(result.stdout, /1 admitted \(0 mutated\), 1 denied\n$/)
})

t.test(
  '--strict makes an unknown field an error; -o yaml prints the object as stored',
  async (t) => {
    const dir = t.testdir({ 'crds.json': json(PROBE_CRD), 'p.json': json(probe({ replica: 3 })) })
    const strict = await runCli([
      'check',
      '--strict',
      '--crds',
      join(dir, 'crds.json'),
      join(dir, 'p.json'),
    ])
    t.equal(strict.code, 1)
    t.match(
      strict.stdout,
      'Probe in version "v1" cannot be handled as a Probe: strict decoding error: unknown field "spec.replica"',
    )
    const stored = await runCli([
      'check',
      '-o',
      'yaml',
      '--crds',
      join(dir, 'crds.json'),
      join(dir, 'p.json'),
    ])
    t.equal(stored.code, 0)
    const [doc] = parseAllDocuments(stored.stdout).map((d) => d.toJS() as { spec: unknown })
    t.same(doc?.spec, { req: 'x', mode: 'a' }, 'pruned and defaulted')
  },
)

t.test('bad CRD input: one line naming the file and the rule, exit 2', async (t) => {
  const badRule = structuredClone(PROBE_CRD) as any
  badRule.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [
    { rule: 'self.a +' },
  ]
  const dir = t.testdir({
    'not-a-crd.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n',
    'bad-rule.json': json(badRule),
    'p.json': json(probe({})),
  })
  const cases: [string, RegExp][] = [
    [
      'not-a-crd.yaml',
      /^mcp-admission: .*not-a-crd\.yaml, document 1: not a CustomResourceDefinition \(apiextensions\.k8s\.io\/v1\): v1 ConfigMap\n$/,
    ],
    [
      'bad-rule.json',
      /^mcp-admission: .*bad-rule\.json, document 1: CustomResourceDefinition probes\.example\.com, version v1: spec x-kubernetes-validations: rule "self\.a \+" does not compile: [^\n]*\n$/,
    ],
  ]
  for (const [file, message] of cases) {
    const result = await runCli(['check', '--crds', join(dir, file), join(dir, 'p.json')])
    t.equal(result.code, 2, file)
    t.match(result.stderr, message, file)
  }
})

t.test(
  'a schema that does not compile: one line when its kind is checked, nothing before',
  async (t) => {
    // Once an uncaught RE2 (or ajv) exception: a stack trace, and exit 1 as if denied.
    const badPattern = structuredClone(PROBE_CRD) as any
    badPattern.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.a.pattern =
      '(?<=x)'
    const dir = t.testdir({
      'crds.json': json(badPattern),
      'p.json': json(probe({})),
      'cm.json': json({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c', namespace: 'ns' },
      }),
    })
    const probed = await runCli(['check', '--crds', join(dir, 'crds.json'), join(dir, 'p.json')])
    t.equal(probed.code, 2)
    t.equal(probed.stdout, '')
    t.match(
      probed.stderr,
      /^mcp-admission: .*crds\.json, document 1: CustomResourceDefinition probes\.example\.com, version v1: schema\.openAPIV3Schema\.properties\[spec\]\.properties\[a\]\.pattern: Invalid value: "\(\?<=x\)": must be a valid regular expression, but isn't: [^\n]*\n$/,
    )
    const reviewed = await runCli(
      ['review', '--crds', join(dir, 'crds.json'), '-'],
      json(review(probe({}))),
    )
    t.equal(reviewed.code, 2)
    t.match(reviewed.stderr, /crds\.json, document 1: CustomResourceDefinition probes/)
    // A CRD is compiled for the objects of its kind only: it does not stop checking the others.
    const other = await runCli(['check', '--crds', join(dir, 'crds.json'), join(dir, 'cm.json')])
    t.equal(other.code, 0, other.stderr)
    t.match(other.stdout, /^admitted ConfigMap ns\/c: unchanged\n/)
  },
)

t.test('review --crds: the CRD answers first; a transition rule sees the old object', async (t) => {
  const dir = t.testdir({ 'crds.json': json(PROBE_CRD) })
  const crds = join(dir, 'crds.json')
  const create = await runCli(['review', '--crds', crds, '-'], json(review(probe({ b: false }))))
  t.equal(create.code, 1)
  const denied = JSON.parse(create.stdout) as AdmissionReviewResponse
  t.match(denied.response, {
    uid: 'test-uid-1',
    allowed: false,
    status: {
      code: 422,
      reason: 'Invalid',
      message: 'spec.b: Invalid value: false: b must be true',
      details: { kind: 'Probe', group: 'example.com', name: 'p' },
    },
  })
  const update = review(probe({ imm: 'b' }), { operation: 'UPDATE' }) as any
  update.request.oldObject = probe({ imm: 'a' })
  const changed = await runCli(['review', '--crds', crds, '-'], json(update))
  t.equal(changed.code, 1)
  t.match(JSON.parse(changed.stdout), {
    response: { status: { message: 'spec.imm: Invalid value: "b": immutable' } },
  })

  const allowed = await runCli(['review', '--crds', crds, '-'], json(review(probe({ zz: 1 }))))
  t.equal(allowed.code, 0)
  t.match(JSON.parse(allowed.stdout), {
    response: { allowed: true, warnings: ['unknown field "spec.zz"'] },
  })
})

t.test('with CRDs, a ToolHive kind they do not serve is off, as in such a cluster', async (t) => {
  const fixtures = fileURLToPath(new URL('../e2e/fixtures/crds/', import.meta.url))
  const server = {
    apiVersion: 'toolhive.stacklok.dev/v1beta1',
    kind: 'MCPServer',
    metadata: { name: 'fetch', namespace: 'ns' },
    spec: { image: 'ghcr.io/example/fetch:1', webhookConfigRef: { name: 'hooks' } },
  }
  const config = {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name: 'other', namespace: 'ns' },
    spec: { validating: [{ name: 'v', url: 'https://v.example.com' }] },
  }
  const dir = t.testdir({ 'server.json': json(server), 'config.json': json(config) })
  const crds = (...names: string[]) => names.flatMap((name) => ['--crds', join(fixtures, name)])
  const workloads = crds('mcpservers.yaml', 'mcpremoteproxies.yaml', 'virtualmcpservers.yaml')
  const all = [...workloads, ...crds('mcpwebhookconfigs.yaml')]

  const served = await runCli(['check', ...all, join(dir, 'server.json')])
  t.match(
    served.stdout,
    /warning: spec\.webhookConfigRef\.name: MCPWebhookConfig "hooks" not found/,
  )
  const notServed = await runCli(['check', ...workloads, join(dir, 'server.json')])
  t.equal(notServed.code, 0, notServed.stderr)
  t.notMatch(notServed.stdout, /webhookConfigRef/, 'no MCPWebhookConfig CRD: nothing to look up')

  const refused = await runCli(['check', ...workloads, join(dir, 'config.json')])
  t.equal(refused.code, 1)
  t.match(
    refused.stdout,
    'DENIED   MCPWebhookConfig ns/other by the API server:\n' +
      '    no matches for kind "MCPWebhookConfig" in version "toolhive.stacklok.dev/v1alpha1": no CustomResourceDefinition given serves it\n',
  )
  // review takes the same step: the API server answers, no webhook is asked.
  const reviewed = await runCli(
    ['review', '--webhook', 'validate', ...workloads, '-'],
    json(review(config)),
  )
  t.equal(reviewed.code, 1)
  t.match(JSON.parse(reviewed.stdout), {
    response: {
      allowed: false,
      status: { code: 404, reason: 'NotFound', message: /^no matches for kind "MCPWebhookConfig"/ },
    },
  })
})

t.test('with --strict, an object nothing checks fails the check (exit 1)', async (t) => {
  const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'ns' } }
  const dir = t.testdir({
    'crds.json': json(PROBE_CRD),
    'objects.json': json({ apiVersion: 'v1', kind: 'List', items: [probe({}), service] }),
  })
  const args = ['check', '--crds', join(dir, 'crds.json'), join(dir, 'objects.json')]
  const plain = await runCli(args)
  t.equal(plain.code, 0, 'reported, not failed, without --strict')
  t.match(
    plain.stdout,
    'unchecked Service ns/web: no rule of mcp-admission and no CRD given applies to its kind\n',
  )
  t.match(plain.stdout, /1 admitted \(0 mutated\), 0 denied, 1 not checked\n$/)
  t.equal(plain.stderr, '', 'CRDs given: nothing said about them')
  const strict = await runCli([...args.slice(0, 1), '--strict', ...args.slice(1)])
  t.equal(strict.code, 1)
})
