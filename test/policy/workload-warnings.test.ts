import t from 'tap'
import { MESSAGE_LIMITS, renderWarnings } from '../../src/policy/messages/render.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import type { ValidationInput } from '../../src/policy/result.ts'
import { workloadWarnings } from '../../src/policy/workload-warnings.ts'
import type { WorkloadFacts } from '../../src/policy/workload-warnings.ts'

const KINDS = ['MCPServer', 'MCPRemoteProxy', 'VirtualMCPServer'] as const
const REDIS = { provider: 'redis', address: 'redis:6379' }
/** The facts of namespace `default` without the MCPWebhookConfig `name`. */
const withoutConfig = (name = 'hooks'): WorkloadFacts => ({
  targets: new Map([[`MCPWebhookConfig/${name}`, undefined]]),
})
const HOOKS_MISSING =
  'spec.webhookConfigRef.name: MCPWebhookConfig "hooks" not found: the operator reports NotReady'
const THREE_NO_REDIS =
  'spec.replicas: 3 replicas without redis sessionStorage; sessions are not shared across replicas'

/** An inline composite tool the operator accepts. */
const inlineTool = (name: string) => ({
  name,
  description: `${name} it`,
  steps: [{ id: 'run', type: 'tool', tool: `${name}.run` }],
})

function workload(spec: unknown, kind: string = 'MCPServer', version = 'v1beta1'): KubeObject {
  return {
    apiVersion: `toolhive.stacklok.dev/${version}`,
    kind,
    metadata: { name: 'demo', namespace: 'default' },
    spec,
  }
}

function warnings(
  object: KubeObject | undefined,
  facts: WorkloadFacts = {},
  operation: ValidationInput['operation'] = 'CREATE',
): string[] {
  return workloadWarnings({ operation, object, oldObject: undefined }, facts)
}

t.test('the warnings, each short', async (t) => {
  const cases: {
    name: string
    spec: unknown
    kind?: string
    facts?: WorkloadFacts
    expected: string[]
  }[] = [
    {
      name: 'stdio with 3 replicas',
      spec: { replicas: 3 },
      expected: ['spec.replicas: stdio transport supports 1 replica; the proxy will run 1, not 3'],
    },
    {
      name: 'explicit stdio with redis still capped',
      spec: { transport: 'stdio', replicas: 2, sessionStorage: REDIS },
      expected: ['spec.replicas: stdio transport supports 1 replica; the proxy will run 1, not 2'],
    },
    {
      name: 'sse with 3 replicas and no redis',
      spec: { transport: 'sse', replicas: 3 },
      expected: [THREE_NO_REDIS],
    },
    {
      name: 'sse with 3 replicas and redis',
      spec: { transport: 'sse', replicas: 3, sessionStorage: REDIS },
      expected: [],
    },
    {
      name: 'remote proxy with 2 replicas and memory storage',
      kind: 'MCPRemoteProxy',
      spec: { replicas: 2, sessionStorage: { provider: 'memory' } },
      expected: [
        'spec.replicas: 2 replicas without redis sessionStorage; sessions are not shared across replicas',
      ],
    },
    {
      name: 'vMCP with 4 replicas',
      kind: 'VirtualMCPServer',
      spec: { replicas: 4 },
      expected: [
        'spec.replicas: 4 replicas without redis sessionStorage; sessions are not shared across replicas',
      ],
    },
    { name: 'one replica', spec: { replicas: 1 }, expected: [] },
    {
      name: 'missing webhook config',
      spec: { webhookConfigRef: { name: 'hooks' } },
      facts: withoutConfig(),
      expected: [HOOKS_MISSING],
    },
    {
      name: 'existing webhook config',
      spec: { webhookConfigRef: { name: 'hooks' } },
      facts: {
        targets: new Map([['MCPWebhookConfig/hooks', { kind: 'MCPWebhookConfig' }]]),
      },
      expected: [],
    },
    {
      name: 'another config is missing',
      spec: { webhookConfigRef: { name: 'hooks' } },
      facts: withoutConfig('other'),
      expected: [],
    },
    {
      // Only MCPServer has the field (the CRDs of v0.63.0 prune it from the other two).
      name: 'a remote proxy names no webhook config',
      kind: 'MCPRemoteProxy',
      spec: { webhookConfigRef: { name: 'hooks' } },
      facts: withoutConfig(),
      expected: [],
    },
    {
      name: 'unknown whether it exists',
      spec: { webhookConfigRef: { name: 'hooks' } },
      expected: [],
    },
  ]
  for (const { name, spec, kind, facts, expected } of cases) {
    t.same(warnings(workload(spec, kind), facts), expected, name)
  }
  const long = warnings(
    workload({
      transport: 'sse',
      replicas: 2 ** 31 - 1,
      webhookConfigRef: { name: 'h'.repeat(253) },
    }),
    withoutConfig('h'.repeat(253)),
  )
  t.equal(long.length, 2)
  const rendered = renderWarnings(long)
  t.ok(
    rendered.every((w) => w.length <= MESSAGE_LIMITS.warningChars),
    'truncated to 120',
  )
  t.match(rendered[1], /^spec\.webhookConfigRef\.name: MCPWebhookConfig "hhh.*…$/)
})

t.test("the CRDs' rules are theirs: breaking them draws no word from this rule", async (t) => {
  // Each of these breaks a rule of ToolHive's CRDs (schema or CEL) in some release; the API
  // server denies it before this webhook is asked.
  const specs: Record<string, unknown> = {
    'negative and fractional counts': { replicas: -1, backendReplicas: 1.5 },
    'replicas as a string': { replicas: '3' },
    'proxyPort out of range': { proxyPort: 65536 },
    'an unknown transport': { transport: 'http' },
    'redis without address': { sessionStorage: { provider: 'redis' } },
    'unknown provider, negative db, half a passwordRef': {
      sessionStorage: { provider: 'etcd', db: -2, passwordRef: { name: 'Redis_Pass' } },
    },
    'webhookConfigRef without a name': { webhookConfigRef: {} },
    'authzConfig with authzConfigRef': {
      authzConfig: { type: 'inline' },
      authzConfigRef: { name: 'shared' },
    },
    'rate limiting per user without session storage or authentication': {
      rateLimiting: { perUser: {}, tools: [{ name: 'a', perUser: {} }] },
    },
    'a negative proxyReadTimeout': { proxyReadTimeout: '-1s' },
  }
  for (const kind of KINDS) {
    for (const [name, spec] of Object.entries(specs)) {
      t.same(warnings(workload(spec, kind), withoutConfig()), [], `${kind}: ${name}`)
    }
  }
})

t.test('scope: kinds, versions and operations', async (t) => {
  const spec = { transport: 'sse', replicas: 3 }
  t.same(warnings(workload(spec, 'MCPServer', 'v1alpha1')), [THREE_NO_REDIS], 'v1alpha1')
  t.same(warnings(workload(spec, 'MCPServer', 'v1beta1')), [THREE_NO_REDIS], 'v1beta1')
  t.same(warnings(workload(spec, 'MCPWebhookConfig')), [], 'other ToolHive kinds')
  t.same(warnings(workload(spec, 'Deployment')), [], 'other kinds')
  t.same(warnings(workload(spec), {}, 'UPDATE'), [THREE_NO_REDIS], 'UPDATE')
  for (const operation of ['DELETE', 'CONNECT'] as const) {
    t.same(warnings(workload(spec), {}, operation), [], operation)
  }
})

t.test('a remoteUrl the operator will refuse when it reconciles', async (t) => {
  const refuse = 'spec.remoteUrl: the operator will refuse it: '
  const cases: { name: string; kind: string; spec: unknown; expected: string[] }[] = [
    {
      name: 'a private address',
      kind: 'MCPRemoteProxy',
      spec: { remoteUrl: 'http://10.0.0.1:8080/mcp' },
      expected: [`${refuse}IP address 10.0.0.1 falls within blocked range 10.0.0.0/8`],
    },
    {
      name: 'a private address the object allows',
      kind: 'MCPRemoteProxy',
      spec: { remoteUrl: 'http://10.0.0.1:8080/mcp', allowPrivateEndpoint: true },
      expected: [],
    },
    {
      name: 'an in-cluster name',
      kind: 'MCPServerEntry',
      spec: { remoteUrl: 'http://mcp.tools.svc.cluster.local/' },
      expected: [
        `${refuse}hostname "mcp.tools.svc.cluster.local" matches blocked internal hostname "cluster.local"`,
      ],
    },
    {
      name: 'an in-cluster name the object allows',
      kind: 'MCPServerEntry',
      spec: { remoteUrl: 'http://mcp.tools.svc.cluster.local/', allowPrivateEndpoint: true },
      expected: [],
    },
    {
      // Only the boolean counts, as Go's bool field reads it (the CRD's schema says boolean).
      name: 'allowPrivateEndpoint as a string',
      kind: 'MCPRemoteProxy',
      spec: { remoteUrl: 'http://192.168.1.1/', allowPrivateEndpoint: 'true' },
      expected: [`${refuse}IP address 192.168.1.1 falls within blocked range 192.168.0.0/16`],
    },
    {
      name: 'the metadata server, whatever the option',
      kind: 'MCPServerEntry',
      spec: { remoteUrl: 'http://169.254.169.254/', allowPrivateEndpoint: true },
      expected: [`${refuse}IP address 169.254.169.254 falls within blocked range 169.254.0.0/16`],
    },
    {
      name: "a URL Go cannot parse: its reason, without Go's repeat of the URL",
      kind: 'MCPRemoteProxy',
      spec: { remoteUrl: 'https://example.com:80:90/mcp' },
      expected: [`${refuse}invalid port ":80:90" after host`],
    },
    {
      name: 'no host',
      kind: 'MCPRemoteProxy',
      spec: { remoteUrl: 'http:///mcp' },
      expected: [`${refuse}remote URL must have a valid host`],
    },
    {
      // Go reads no IP in it, and no DNS is done: the operator accepts it.
      name: 'loopback in decimal',
      kind: 'MCPRemoteProxy',
      spec: { remoteUrl: 'http://2130706433/' },
      expected: [],
    },
    {
      name: 'a public URL',
      kind: 'MCPServerEntry',
      spec: { remoteUrl: 'https://mcp.example.com/mcp' },
      expected: [],
    },
    {
      name: 'beside a replicas warning',
      kind: 'MCPRemoteProxy',
      spec: { remoteUrl: 'http://localhost/', replicas: 3 },
      expected: [
        THREE_NO_REDIS,
        `${refuse}hostname "localhost" matches blocked internal hostname "localhost"`,
      ],
    },
    {
      name: 'an MCPServer has no remoteUrl the operator checks',
      kind: 'MCPServer',
      spec: { remoteUrl: 'http://localhost/' },
      expected: [],
    },
    {
      name: 'nor has a VirtualMCPServer',
      kind: 'VirtualMCPServer',
      spec: { remoteUrl: 'http://localhost/' },
      expected: [],
    },
    { name: 'no remoteUrl', kind: 'MCPRemoteProxy', spec: {}, expected: [] },
    { name: 'no spec', kind: 'MCPServerEntry', spec: 'http://localhost/', expected: [] },
    {
      name: 'a remoteUrl of another type',
      kind: 'MCPServerEntry',
      spec: { remoteUrl: 5 },
      expected: [],
    },
  ]
  for (const { name, kind, spec, expected } of cases) {
    t.same(warnings(workload(spec, kind)), expected, name)
  }
  const entry = workload({ remoteUrl: 'http://[fd00::1]/' }, 'MCPServerEntry', 'v1alpha1')
  const warned = [`${refuse}IP address fd00::1 falls within blocked range fc00::/7`]
  t.same(warnings(entry), warned, 'v1alpha1')
  t.same(warnings(entry, {}, 'UPDATE'), warned, 'UPDATE')
  t.same(warnings(entry, {}, 'DELETE'), [], 'DELETE')

  const rendered = renderWarnings(
    warnings(workload({ remoteUrl: `http://${'a'.repeat(100)}.cluster.local/` }, 'MCPRemoteProxy')),
  )
  t.equal(rendered.length, 1)
  t.ok(
    rendered.every((w) => w.length <= MESSAGE_LIMITS.warningChars),
    'cut to 120',
  )
  t.match(rendered[0], /^spec\.remoteUrl: the operator will refuse it: hostname "aaa.*…$/)
})

t.test('hostile input never throws', async (t) => {
  const cases: { name: string; object: unknown }[] = [
    { name: 'no object', object: undefined },
    { name: 'null spec', object: workload(null) },
    { name: 'array spec', object: workload([{ replicas: 3 }]) },
    { name: 'the object is a number', object: 5 },
    {
      name: 'nested wrong types',
      object: workload({
        replicas: { n: 3 },
        sessionStorage: 'redis',
        webhookConfigRef: 'hooks',
      }),
    },
    {
      name: '__proto__ keys',
      object: JSON.parse('{"kind":"MCPServer","spec":{"__proto__":{"replicas":3}}}'),
    },
  ]
  for (const { name, object } of cases) {
    t.same(warnings(object as KubeObject, withoutConfig()), [], name)
  }
})

t.test(
  'references: every path of the table, a target of the wrong type, composite names',
  async (t) => {
    const found = (kind: string, spec: unknown): KubeObject => ({
      kind,
      metadata: { name: 'x' },
      spec,
    })
    const facts = (entries: [string, KubeObject | undefined][]): WorkloadFacts => ({
      targets: new Map(entries),
    })
    t.same(
      warnings(
        workload({ toolConfigRef: { name: 'tools' }, groupRef: { name: 'g' } }, 'MCPRemoteProxy'),
        facts([
          ['MCPToolConfig/tools', undefined],
          ['MCPGroup/g', found('MCPGroup', {})],
        ]),
      ),
      [
        'spec.toolConfigRef.name: MCPToolConfig "tools" not found: the operator reports ToolConfigNotFound',
      ],
    )
    t.same(
      warnings(
        workload(
          { groupRef: { name: 'g' }, externalAuthConfigRef: { name: 'a' } },
          'MCPServerEntry',
        ),
        facts([
          ['MCPGroup/g', undefined],
          ['MCPExternalAuthConfig/a', undefined],
        ]),
      ),
      [
        'spec.groupRef.name: MCPGroup "g" not found: the operator reports GroupRefNotFound',
        'spec.externalAuthConfigRef.name: MCPExternalAuthConfig "a" not found: the operator reports AuthConfigNotFound',
      ],
    )
    const authServer = workload({ authServerRef: { kind: 'MCPExternalAuthConfig', name: 'auth' } })
    t.same(
      warnings(
        authServer,
        facts([
          ['MCPExternalAuthConfig/auth', found('MCPExternalAuthConfig', { type: 'tokenExchange' })],
        ]),
      ),
      [
        'spec.authServerRef.name: MCPExternalAuthConfig "auth" has spec.type "tokenExchange", not "embeddedAuthServer": the operator refuses it',
      ],
      'a target that is not what the reference requires',
    )
    t.same(
      warnings(
        authServer,
        facts([
          [
            'MCPExternalAuthConfig/auth',
            found('MCPExternalAuthConfig', { type: 'embeddedAuthServer' }),
          ],
        ]),
      ),
      [],
    )
    const virtual = workload(
      {
        groupRef: { name: 'g' },
        config: {
          compositeTools: [inlineTool('deploy'), inlineTool('release')],
          compositeToolRefs: [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'gone' }],
        },
      },
      'VirtualMCPServer',
    )
    const definition = (tool: string) => found('VirtualMCPCompositeToolDefinition', { name: tool })
    t.same(
      warnings(
        virtual,
        facts([
          ['MCPGroup/g', found('MCPGroup', {})],
          ['VirtualMCPCompositeToolDefinition/a', definition('deploy')],
          ['VirtualMCPCompositeToolDefinition/b', definition('triage')],
          ['VirtualMCPCompositeToolDefinition/c', definition('triage')],
          ['VirtualMCPCompositeToolDefinition/gone', undefined],
        ]),
      ),
      [
        'spec.config.compositeToolRefs[3].name: VirtualMCPCompositeToolDefinition "gone" not found: the operator reports CompositeToolRefNotFound',
        'spec.config.compositeToolRefs[0].name: tool "deploy" is also defined by spec.config.compositeTools[0]: the operator fails to reconcile it',
        'spec.config.compositeToolRefs[2].name: tool "triage" is also defined by spec.config.compositeToolRefs[1].name: the operator fails to reconcile it',
      ],
    )
  },
)

t.test(
  'inline composite tools of a VirtualMCPServer: what the operator will fail it for',
  async (t) => {
    const tools = (...compositeTools: unknown[]) =>
      workload({ groupRef: { name: 'g' }, config: { compositeTools } }, 'VirtualMCPServer')
    t.same(warnings(tools(inlineTool('deploy'), inlineTool('release'))), [], 'valid tools')
    const broken = {
      ...inlineTool('deploy'),
      steps: [
        { id: 'build', type: 'tool', tool: 'make.build', dependsOn: ['test'] },
        { id: 'test', type: 'tool', tool: 'make.test', dependsOn: ['build'] },
      ],
    }
    const found = warnings(tools(inlineTool('deploy'), broken), {}, 'UPDATE')
    t.same(found, [
      'spec.config.compositeTools[1] is invalid: the operator will fail this VirtualMCPServer (Valid=False)',
      'spec.config.compositeTools[1].name: Duplicate value: "deploy"',
      'spec.config.compositeTools[1].steps[0].dependsOn: Forbidden: dependency cycle detected: build -> test -> build',
    ])
    t.same(renderWarnings(found), found, 'each within the 120 characters a warning may have')
    t.ok(found.every((warning) => warning.length <= MESSAGE_LIMITS.warningChars))
    t.same(
      warnings(workload({ config: { compositeTools: [broken] } }, 'MCPServer')),
      [],
      'only a VirtualMCPServer has them',
    )
  },
)
