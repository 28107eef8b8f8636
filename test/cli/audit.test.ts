// `mcp-admission audit` against a fake API server that serves discovery and paged lists of each
// collection: what a write now would be denied or patched, in each output, and the exit status.

import { createServer } from 'node:http'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { parseAllDocuments } from 'yaml'
import { createDecide } from '../../src/admission/decide.ts'
import { admit } from '../../src/cli/admit-object.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { VIEW_RESOURCES } from '../../src/cluster/resources.ts'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { runCli } from '../helpers/cli.ts'
import { discoveryAnswer } from '../helpers/discovery-documents.ts'
import { NAMESPACE, proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'

const CHECKSUM = 'toolhive.stacklok.dev/content-checksum'
const POD_CHECKSUM = 'toolhive.stacklok.dev/runconfig-checksum'

interface FakeCluster {
  readonly server: string
  /** pathname → the collection's objects (or, planted, items that are not objects as stored). */
  readonly collections: Map<string, unknown[]>
  /** pathname → the status its list is refused with. */
  readonly refused: Map<string, number>
  /** discovery pathname → the raw answer given instead of the real one. */
  readonly discovery: Map<string, { status: number; body: string }>
  /** pathname → the `continue` token every page of its list ends with, given the one asked with. */
  readonly endless: Map<string, (token: string | undefined) => string>
  readonly queries: { path: string; query: Record<string, string> }[]
}

/** Discovery of every ToolHive kind, and each collection in pages of the `limit` asked for. */
async function fakeCluster(t: Test): Promise<FakeCluster> {
  const collections = new Map<string, unknown[]>()
  const refused = new Map<string, number>()
  const endless: FakeCluster['endless'] = new Map()
  const discovery: FakeCluster['discovery'] = new Map()
  const queries: FakeCluster['queries'] = []
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake')
    const answer = discoveryAnswer(VIEW_RESOURCES, url.pathname)
    response.setHeader('content-type', 'application/json')
    const raw = discovery.get(url.pathname)
    if (raw) {
      response.statusCode = raw.status
      response.end(raw.body)
      return
    }
    if (answer) {
      response.statusCode = answer.status
      response.end(JSON.stringify(answer.body))
      return
    }
    const query = Object.fromEntries(url.searchParams)
    queries.push({ path: url.pathname, query })
    const status = refused.get(url.pathname)
    if (status !== undefined) {
      response.statusCode = status
      response.end(
        JSON.stringify({ kind: 'Status', code: status, message: 'configmaps is forbidden' }),
      )
      return
    }
    const nextToken = endless.get(url.pathname)
    if (nextToken) {
      const token = nextToken(query['continue'])
      response.end(JSON.stringify({ kind: 'List', metadata: { continue: token }, items: [] }))
      return
    }
    const objects = collections.get(url.pathname) ?? []
    const start = Number(query['continue'] ?? 0)
    const limit = Number(query['limit'] ?? objects.length)
    const page = objects.slice(start, start + limit)
    const next = start + page.length
    response.end(
      JSON.stringify({
        kind: 'List',
        apiVersion: 'v1',
        metadata: {
          resourceVersion: '9',
          ...(next < objects.length ? { continue: `${next}` } : {}),
        },
        // The API server leaves apiVersion and kind out of list items.
        items: page.map((object) => {
          // A malformed item (a test plants them) is sent as it is.
          if (typeof object !== 'object' || object === null || Array.isArray(object)) return object
          const item: Record<string, unknown> = { ...(object as Record<string, unknown>) }
          delete item['apiVersion']
          delete item['kind']
          return item
        }),
      }),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const { port } = server.address() as { port: number }
  return { server: `http://127.0.0.1:${port}`, collections, refused, endless, discovery, queries }
}

function kubeconfig(server: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 'jwt' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  })
}

function webhookConfig(name: string, url: string): KubeObject {
  return {
    apiVersion: 'toolhive.stacklok.dev/v1alpha1',
    kind: 'MCPWebhookConfig',
    metadata: { name, namespace: NAMESPACE, uid: `${name}-uid` },
    spec: { validating: [{ name: 'check', url }] },
  }
}

/** A RunConfig ConfigMap with its content checksum stamped, as an operator stores it. */
function stampedRunConfig(name: string): KubeObject {
  const config = runConfigFor('MCPServer', name)
  const checksum = effectiveContentChecksum(config) ?? ''
  return { ...config, metadata: { ...config.metadata, annotations: { [CHECKSUM]: checksum } } }
}

/** The proxy Deployment as stored once admitted: every invariant holds. */
async function compliantDeployment(objects: KubeObject[], name: string): Promise<KubeObject> {
  const decide = createDecide({ view: new MemoryView(objects) })
  const verdict = await admit(decide, proxyDeployment('MCPServer', name), { namespace: '' })
  if (!verdict.admitted) throw new Error('the proxy Deployment is refused')
  return verdict.object
}

/**
 * A cluster of two MCPServers and their RunConfigs and Deployments, all as an operator writes
 * them, but for what was planted: an invalid MCPWebhookConfig stored while no webhook checked it,
 * a RunConfig without its content checksum, a Deployment whose RunConfig checksum is stale.
 */
async function plantedCluster(t: Test): Promise<FakeCluster> {
  const fake = await fakeCluster(t)
  const servers = [workload('MCPServer', 'a'), workload('MCPServer', 'b')]
  const runConfigs = [stampedRunConfig('a'), runConfigFor('MCPServer', 'b')]
  const deployments = [
    await compliantDeployment([...servers, ...runConfigs], 'a'),
    await compliantDeployment([...servers, ...runConfigs], 'b'),
  ]
  const stale = deployments[1] as { spec: { template: { metadata: { annotations: object } } } }
  stale.spec.template.metadata.annotations = {
    ...stale.spec.template.metadata.annotations,
    [POD_CHECKSUM]: 'stale',
  }
  const base = '/apis/toolhive.stacklok.dev/v1beta1'
  fake.collections.set('/apis/toolhive.stacklok.dev/v1alpha1/mcpwebhookconfigs', [
    webhookConfig('good', 'https://hooks.example.com'),
    webhookConfig('broken', 'http://hooks.example.com'),
  ])
  fake.collections.set(`${base}/mcpservers`, servers)
  fake.collections.set('/api/v1/configmaps', runConfigs)
  fake.collections.set('/apis/apps/v1/deployments', deployments)
  return fake
}

t.test('audit finds what a write now would deny or patch, and nothing else', async (t) => {
  const fake = await plantedCluster(t)
  const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
  const result = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig')])
  t.equal(result.code, 1, 'findings: exit 1')
  t.equal(result.stderr, '', 'no progress on a stderr that is no terminal')
  const lines = result.stdout.split('\n')
  t.same(
    lines.filter((line) => /^(DENY|PATCH|WARN) |would be/.test(line)),
    [
      `DENY   MCPWebhookConfig ${NAMESPACE}/broken`,
      `PATCH  ConfigMap ${NAMESPACE}/b-runconfig`,
      `PATCH  Deployment ${NAMESPACE}/b`,
      '3 objects would be denied or changed by a write now',
    ],
  )
  t.match(result.stdout, /\n {4}spec\.validating\[0\]\.url: Invalid value: "http:\/\/hooks/)
  t.match(
    result.stdout,
    /\n {4}RunConfig checksum stale: pods did not roll after the RunConfig changed \(replace \/spec\/template\/metadata\/annotations\/toolhive\.stacklok\.dev~1runconfig-checksum\)\n/,
  )
  t.match(result.stdout, /\n {4}content checksum missing: stamped from the data/)
  t.match(
    result.stdout,
    /KIND +AUDITED +DENY +PATCH +WARN +ERROR +CLEAN\nMCPWebhookConfig +2 +1 +0 +0 +0 +1\nMCPServer +2 +0 +0 +0 +0 +2\nConfigMap +2 +0 +1 +0 +0 +1\nDeployment +2 +0 +1 +0 +0 +1\n/,
  )
  // Read as the webhooks are sent objects, a page at a time.
  t.match(fake.queries, [
    { path: '/apis/toolhive.stacklok.dev/v1alpha1/mcpwebhookconfigs', query: { limit: '500' } },
  ])
  t.ok(
    fake.queries.some(
      (q) =>
        q.path === '/api/v1/configmaps' &&
        q.query['labelSelector'] === 'toolhive.stacklok.io/component in (run-config,vmcp-config)',
    ),
  )
  t.ok(
    fake.queries.some(
      (q) => q.path === '/apis/apps/v1/deployments' && q.query['labelSelector'] === 'toolhive=true',
    ),
  )
})

t.test('a clean cluster exits 0; lists are read across pages', async (t) => {
  const fake = await fakeCluster(t)
  const servers = Array.from({ length: 1203 }, (_, i) => workload('MCPServer', `s${i}`))
  fake.collections.set('/apis/toolhive.stacklok.dev/v1beta1/mcpservers', servers)
  const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
  const result = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig')])
  t.equal(result.code, 0)
  t.match(result.stdout, /MCPServer +1203 +0 +0 +0 +0 +1203\n/)
  t.match(result.stdout, /no object would be denied or changed by a write now\n$/)
  const pages = fake.queries.filter((q) => q.path.endsWith('/mcpservers'))
  t.same(
    pages.map((q) => q.query['continue']),
    [undefined, '500', '1000'],
  )
})

t.test('-o json: the findings and a summary per kind', async (t) => {
  const fake = await plantedCluster(t)
  const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
  const result = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig'), '-o', 'json'])
  t.equal(result.code, 1)
  const document = JSON.parse(result.stdout) as {
    findings: { subject: { kind: string; name: string }; result: string; rule: string }[]
    summary: { kind: string; audited: number; deny: number }[]
  }
  t.same(
    document.findings.map((f) => [f.subject.kind, f.subject.name, f.result, f.rule]),
    [
      ['MCPWebhookConfig', 'broken', 'deny', 'webhook-config'],
      ['ConfigMap', 'b-runconfig', 'patch', 'runconfig-content-checksum'],
      ['Deployment', 'b', 'patch', 'proxy-deployment'],
    ],
  )
  t.match(document.summary, [{ kind: 'MCPWebhookConfig', audited: 2, deny: 1 }])
})

t.test(
  '-o openreports: one Report per namespace, failures listed, then clean objects as passes',
  async (t) => {
    const fake = await plantedCluster(t)
    const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
    const result = await runCli([
      'audit',
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '-o',
      'openreports',
    ])
    t.equal(result.code, 1)
    const reports = parseAllDocuments(result.stdout).map((d) => d.toJS() as Record<string, any>)
    t.equal(reports.length, 1)
    t.match(reports[0], {
      apiVersion: 'openreports.io/v1alpha1',
      kind: 'Report',
      metadata: { name: 'mcp-admission', namespace: NAMESPACE },
      source: 'mcp-admission',
      summary: { pass: 5, fail: 3, warn: 0, error: 0, skip: 0 },
      results: [
        {
          policy: 'webhook-config',
          category: 'ToolHive',
          result: 'fail',
          severity: 'high',
          message: /^would be denied: spec\.validating\[0\]\.url/,
          resources: [{ kind: 'MCPWebhookConfig', name: 'broken', uid: 'broken-uid' }],
          properties: { outcome: 'denied', resultID: /^[0-9a-f]{32}$/ },
        },
        {
          policy: 'runconfig-content-checksum',
          message: /^would be patched: content checksum missing/,
        },
        {
          policy: 'proxy-deployment',
          message:
            'would be patched: RunConfig checksum stale: pods did not roll after the RunConfig changed',
          properties: { outcome: 'patched', operation: 'replace' },
        },
      ],
    })
    const results = reports[0]!['results'] as Record<string, any>[]
    t.same(
      results.map((r) => r['result']),
      ['fail', 'fail', 'fail', 'pass', 'pass', 'pass', 'pass', 'pass'],
      'the five clean objects listed as passes',
    )
    t.ok(
      results.every((r) => r['rule'] === r['policy']),
      'rule names the rule as policy does (no sub-rules)',
    )
  },
)

t.test('-o policyreport --cluster-name: PolicyReports labelled with the cluster', async (t) => {
  const fake = await plantedCluster(t)
  const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
  const result = await runCli([
    'audit',
    '--kubeconfig',
    join(dir, 'kubeconfig'),
    '-o',
    'policyreport',
    '--cluster-name',
    'prod-eu',
  ])
  t.equal(result.code, 1)
  const [report] = parseAllDocuments(result.stdout).map((d) => d.toJS() as Record<string, any>)
  t.match(report, {
    apiVersion: 'wgpolicyk8s.io/v1alpha2',
    kind: 'PolicyReport',
    metadata: { labels: { 'mcp-admission.toolhive.stacklok.dev/cluster': 'prod-eu' } },
    summary: { pass: 5, fail: 3 },
  })
  t.notOk('source' in report!, 'the PolicyReport CRD has no top-level source')
  t.ok(
    (report!['results'] as { properties: Record<string, string> }[]).every(
      (r) => r.properties['cluster'] === 'prod-eu',
    ),
  )
})

t.test('--cluster-name is a label value, and only for the report outputs', async (t) => {
  for (const [args, message] of [
    [['--cluster-name', 'no spaces'], /"no spaces" is not a label value/],
    [['--cluster-name', ''], /"" is not a label value/],
    [['--cluster-name', 'a'.repeat(64)], /is not a label value/],
    [
      ['--cluster-name', 'prod'],
      /--cluster-name is for -o openreports or -o policyreport, not -o table/,
    ],
    [['--cluster-name', 'prod', '-o', 'json'], /not -o json/],
  ] as const) {
    const result = await runCli(['audit', '--kubeconfig', '/nonexistent', ...args])
    t.equal(result.code, 2, args.join(' '))
    t.match(result.stderr, message)
    t.equal(result.stdout, '')
  }
})

t.test('a cluster that cannot be read is one line and exit 2', async (t) => {
  // Port 1 on loopback: nothing listens there.
  const dir = t.testdir({ kubeconfig: kubeconfig('http://127.0.0.1:1') })
  const result = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig')])
  t.equal(result.code, 2)
  t.match(
    result.stderr,
    /^mcp-admission: cannot read API discovery from http:\/\/127\.0\.0\.1:1: [^\n]*ECONNREFUSED[^\n]*\n$/,
  )
  t.equal(result.stdout, '', 'no partial report')

  const none = await runCli(['audit'])
  t.equal(none.code, 2)
  t.equal(
    none.stderr,
    'mcp-admission: audit needs a cluster: --kubeconfig FILE, KUBECONFIG, or in-cluster credentials in a pod\n',
  )
  const missing = await runCli(['audit', '--kubeconfig', join(dir, 'missing')])
  t.equal(missing.code, 2)
  t.match(missing.stderr, /^mcp-admission: --kubeconfig \S+missing: no such file\n$/)
})

t.test('a list the account may not read is one line naming it, exit 2', async (t) => {
  const fake = await plantedCluster(t)
  fake.refused.set('/api/v1/configmaps', 403)
  const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
  const result = await runCli([
    'audit',
    '--kubeconfig',
    join(dir, 'kubeconfig'),
    '-o',
    'openreports',
  ])
  t.equal(result.code, 2)
  t.match(
    result.stderr,
    new RegExp(
      `^mcp-admission: cannot list configmaps from ${fake.server}: 403 [^\\n]*forbidden[^\\n]*\\n$`,
    ),
  )
  t.equal(result.stdout, '', 'no report from a partial read')
})

t.test('a list that never ends ends the audit: one line naming it, exit 2', async (t) => {
  const fake = await plantedCluster(t)
  const path = '/apis/toolhive.stacklok.dev/v1beta1/mcpservers'
  // An API server that answers every page with the same token: the same page again, forever.
  fake.endless.set(path, () => 'again')
  const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
  const repeated = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig')])
  t.equal(repeated.code, 2)
  t.equal(
    repeated.stderr,
    `mcp-admission: cannot list mcpservers from ${fake.server}: the list did not end: the API server sent the same continue token twice\n`,
  )
  t.same(
    fake.queries.filter((q) => q.path === path).map((q) => q.query['continue']),
    [undefined, 'again'],
    'ended at the first repeat',
  )

  // A token that never repeats: stopped by the page cap.
  fake.queries.length = 0
  fake.endless.set(path, (token) => `${Number(token ?? 0) + 1}`)
  const growing = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig')])
  t.equal(growing.code, 2)
  t.equal(
    growing.stderr,
    `mcp-admission: cannot list mcpservers from ${fake.server}: the list did not end after 10000 pages\n`,
  )
  t.equal(fake.queries.filter((q) => q.path === path).length, 10_000)
})

t.test(
  'discovery that cannot be read is one line and exit 2, never "nothing served"',
  async (t) => {
    const group = '/apis/toolhive.stacklok.dev'
    const cases: [string, string, { status: number; body: string }][] = [
      ['a 500', group, { status: 500, body: '{"kind":"Status","code":500,"message":"etcd down"}' }],
      ['a body that is not JSON', group, { status: 200, body: '<html>proxy error</html>' }],
      ['a JSON array', group, { status: 200, body: '[]' }],
      ['an APIGroup without versions', group, { status: 200, body: '{"kind":"APIGroup"}' }],
      [
        'a version whose resource list is not one',
        `${group}/v1beta1`,
        { status: 200, body: '{"kind":"APIResourceList","resources":"mcpservers"}' },
      ],
    ]
    for (const [name, path, answer] of cases) {
      const fake = await plantedCluster(t)
      fake.discovery.set(path, answer)
      const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
      const result = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig')])
      t.equal(result.code, 2, `${name}: exit 2`)
      t.match(
        result.stderr,
        new RegExp(`^mcp-admission: cannot read API discovery from ${fake.server}: [^\\n]+\\n$`),
        `${name}: one line`,
      )
      t.equal(result.stdout, '', `${name}: nothing audited`)
    }

    // A 404 for the group says it is genuinely not served: the ConfigMaps and Deployments are still
    // audited, as they are on a cluster without the ToolHive CRDs.
    const fake = await plantedCluster(t)
    fake.discovery.set(group, { status: 404, body: '{"kind":"Status","code":404}' })
    const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
    const result = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig')])
    t.equal(result.code, 1)
    t.match(
      result.stdout,
      /\nKIND +AUDITED[^\n]*\n+ConfigMap +2 +0 +1 +0 +0 +1\n+Deployment +2 +0 +0 +2 +0 +0\n/,
    )
  },
)

t.test(
  'items that are not objects as stored are errors (exit 1), never clean or dropped',
  async (t) => {
    const fake = await fakeCluster(t)
    const base = '/apis/toolhive.stacklok.dev/v1beta1'
    const good = workload('MCPServer', 'good')
    fake.collections.set(`${base}/mcpservers`, [
      good,
      { spec: {} },
      { metadata: 'x', spec: {} },
      'not an object',
      { metadata: { namespace: NAMESPACE } },
      { metadata: { name: 'lost' } },
      null,
      [good],
    ])
    const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
    const table = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig')])
    t.equal(table.code, 1)
    t.match(
      table.stdout,
      /\nMCPServer +8 +0 +0 +0 +7 +1\n/,
      'counted: 7 errors, only the good one clean',
    )
    t.match(
      table.stdout,
      /no object would be denied or changed by a write now; 7 could not be audited\n$/,
    )
    t.match(
      table.stdout,
      /^ERROR {2}MCPServer \/\n {4}could not be audited: item 1 of the list: no metadata\n/,
    )
    t.match(
      table.stdout,
      /\n {4}could not be audited: item 3 of the list: not an object \(string\)\n/,
    )

    const json = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig'), '-o', 'json'])
    t.equal(json.code, 1)
    const document = JSON.parse(json.stdout) as {
      findings: {
        subject: { kind: string; namespace: string; name: string }
        result: string
        error: string
      }[]
      summary: { kind: string; audited: number; error: number; clean: number }[]
    }
    t.same(
      document.findings.map((f) => [
        f.subject.kind,
        f.subject.namespace,
        f.subject.name,
        f.result,
        f.error,
      ]),
      [
        ['MCPServer', '', '', 'error', 'item 1 of the list: no metadata'],
        ['MCPServer', '', '', 'error', 'item 2 of the list: metadata is not an object'],
        ['MCPServer', '', '', 'error', 'item 3 of the list: not an object (string)'],
        ['MCPServer', NAMESPACE, '', 'error', 'item 4 of the list: no metadata.name'],
        ['MCPServer', '', 'lost', 'error', 'item 5 of the list: no metadata.namespace'],
        ['MCPServer', '', '', 'error', 'item 6 of the list: not an object (null)'],
        ['MCPServer', '', '', 'error', 'item 7 of the list: not an object (an array)'],
      ],
    )
    t.match(document.summary, [{ kind: 'MCPServer', audited: 8, error: 7, clean: 1 }])

    const reports = await runCli([
      'audit',
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '-o',
      'openreports',
    ])
    t.equal(reports.code, 1)
    // No Report can hold an item without a valid namespace and name: each is a line of its own.
    t.same(
      parseAllDocuments(reports.stdout).map((d) => {
        const report = d.toJS() as { metadata: { namespace: string }; summary: object }
        return [report.metadata.namespace, report.summary]
      }),
      [[NAMESPACE, { pass: 1, fail: 0, warn: 0, error: 0, skip: 0 }]],
    )
    t.same(reports.stderr.split('\n'), [
      'mcp-admission: not in any Report: MCPServer (namespace "" is not a namespace name): could not be audited: item 1 of the list: no metadata',
      'mcp-admission: not in any Report: MCPServer (namespace "" is not a namespace name): could not be audited: item 2 of the list: metadata is not an object',
      'mcp-admission: not in any Report: MCPServer (namespace "" is not a namespace name): could not be audited: item 3 of the list: not an object (string)',
      `mcp-admission: not in any Report: MCPServer (name "" is not a valid name): could not be audited: item 4 of the list: no metadata.name`,
      'mcp-admission: not in any Report: MCPServer (namespace "" is not a namespace name): could not be audited: item 5 of the list: no metadata.namespace',
      'mcp-admission: not in any Report: MCPServer (namespace "" is not a namespace name): could not be audited: item 6 of the list: not an object (null)',
      'mcp-admission: not in any Report: MCPServer (namespace "" is not a namespace name): could not be audited: item 7 of the list: not an object (an array)',
      '',
    ])
  },
)

t.test(
  'audit reports dangling references as warnings (exit 0: a warning fails nothing)',
  async (t) => {
    const fake = await fakeCluster(t)
    const base = '/apis/toolhive.stacklok.dev/v1beta1'
    const proxy = {
      ...workload('MCPRemoteProxy', 'remote'),
      spec: {
        remoteUrl: 'https://mcp.example.com',
        toolConfigRef: { name: 'tools' },
        groupRef: { name: 'team' },
      },
    }
    fake.collections.set(`${base}/mcpremoteproxies`, [proxy])
    fake.collections.set(`${base}/mcpgroups`, [
      {
        apiVersion: `toolhive.stacklok.dev/v1beta1`,
        kind: 'MCPGroup',
        metadata: { name: 'team', namespace: NAMESPACE },
      },
    ])
    const dir = t.testdir({ kubeconfig: kubeconfig(fake.server) })
    const result = await runCli(['audit', '--kubeconfig', join(dir, 'kubeconfig'), '-o', 'json'])
    t.equal(result.code, 0)
    const document = JSON.parse(result.stdout) as {
      findings: { subject: { kind: string; name: string }; result: string; warnings: string[] }[]
    }
    t.same(
      document.findings.map((f) => [f.subject.kind, f.subject.name, f.result, f.warnings]),
      [
        [
          'MCPRemoteProxy',
          'remote',
          'warn',
          [
            `spec.toolConfigRef.name: MCPToolConfig "tools" not found: the operator reports ToolConfigNotFound`,
          ],
        ],
      ],
    )
  },
)
