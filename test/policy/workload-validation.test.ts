import t from 'tap'
import {
  MESSAGE_LIMITS,
  formatViolation,
  renderWarnings,
} from '../../src/policy/messages/render.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import type { ValidationInput } from '../../src/policy/result.ts'
import { MCPSERVER_MESSAGES, validateWorkload } from '../../src/policy/workload-validation.ts'
import type { WorkloadFacts } from '../../src/policy/workload-validation.ts'

const KINDS = ['MCPServer', 'MCPRemoteProxy', 'VirtualMCPServer'] as const
const REDIS = { provider: 'redis', address: 'redis:6379' }

function workload(spec: unknown, kind: string = 'MCPServer', version = 'v1beta1'): KubeObject {
  return {
    apiVersion: `toolhive.stacklok.dev/${version}`,
    kind,
    metadata: { name: 'demo', namespace: 'default' },
    spec,
  }
}

function validate(
  object: KubeObject | undefined,
  facts: WorkloadFacts = {},
  operation: ValidationInput['operation'] = 'CREATE',
) {
  return validateWorkload({ operation, object, oldObject: undefined }, facts)
}

function rendered(object: KubeObject): string[] {
  return validate(object).violations.map(formatViolation)
}

t.test('fields every workload kind shares', async (t) => {
  const cases: { name: string; spec: unknown; expected: string[] }[] = [
    { name: 'empty spec', spec: {}, expected: [] },
    {
      name: 'everything valid',
      spec: {
        replicas: 0,
        backendReplicas: 2,
        proxyPort: 8080,
        sessionStorage: { ...REDIS, db: 0 },
      },
      expected: [],
    },
    {
      name: 'negative and fractional counts',
      spec: { replicas: -1, backendReplicas: 1.5 },
      expected: [
        'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
        'spec.backendReplicas: Invalid value: "number": must be of type integer',
      ],
    },
    {
      name: 'proxyPort out of range',
      spec: { proxyPort: 0 },
      expected: ['spec.proxyPort: Invalid value: 0: must be between 1 and 65535, inclusive'],
    },
    {
      name: 'proxyPort above range',
      spec: { proxyPort: 65536 },
      expected: ['spec.proxyPort: Invalid value: 65536: must be between 1 and 65535, inclusive'],
    },
    {
      name: 'replicas beyond int32',
      spec: { replicas: 2 ** 31 },
      expected: [
        'spec.replicas: Invalid value: 2147483648: must be less than or equal to 2147483647',
      ],
    },
    {
      name: 'replicas as a string',
      spec: { replicas: '3' },
      expected: ['spec.replicas: Invalid value: "string": must be of type integer'],
    },
    {
      name: 'redis without address',
      spec: { sessionStorage: { provider: 'redis' } },
      expected: ['spec.sessionStorage.address: Required value: address is required'],
    },
    {
      name: 'redis with an empty address',
      spec: { sessionStorage: { provider: 'redis', address: '' } },
      expected: ['spec.sessionStorage.address: Required value: address is required'],
    },
    {
      name: 'unknown provider, negative db, half a passwordRef',
      spec: { sessionStorage: { provider: 'etcd', db: -2, passwordRef: { name: 'redis-auth' } } },
      expected: [
        'spec.sessionStorage.provider: Unsupported value: "etcd": supported values: "memory", "redis"',
        'spec.sessionStorage.db: Invalid value: -2: must be greater than or equal to 0',
        'spec.sessionStorage.passwordRef.key: Required value',
      ],
    },
    {
      name: 'missing provider',
      spec: { sessionStorage: { address: 'redis:6379' } },
      expected: ['spec.sessionStorage.provider: Required value'],
    },
    {
      name: 'sessionStorage of the wrong type',
      spec: { sessionStorage: ['redis'] },
      expected: ['spec.sessionStorage: Invalid value: "array": must be of type object'],
    },
    {
      name: 'webhookConfigRef without a name',
      spec: { webhookConfigRef: {} },
      expected: ['spec.webhookConfigRef.name: Required value'],
    },
  ]
  for (const kind of KINDS) {
    for (const { name, spec, expected } of cases) {
      t.same(rendered(workload(spec, kind)), expected, `${kind}: ${name}`)
    }
  }
})

t.test('transport is checked on MCPServer only', async (t) => {
  const bad =
    'spec.transport: Unsupported value: "http": supported values: "stdio", "streamable-http", "sse"'
  t.same(rendered(workload({ transport: 'http' })), [bad])
  t.same(rendered(workload({ transport: 'sse' })), [])
  t.same(rendered(workload({ transport: 'http' }, 'MCPRemoteProxy')), [])
})

t.test("MCPServer cross-field rules use the CRD's words", async (t) => {
  const auth = { oidcConfigRef: { name: 'oidc' } }
  const cases: { name: string; spec: unknown; expected: string[] }[] = [
    {
      name: 'authzConfig with authzConfigRef',
      spec: { authzConfig: { type: 'inline' }, authzConfigRef: { name: 'shared' } },
      expected: [`spec.authzConfig: Forbidden: ${MCPSERVER_MESSAGES.authzExclusive}`],
    },
    {
      name: 'rateLimiting without session storage',
      spec: { rateLimiting: { shared: {} } },
      expected: [`spec.rateLimiting: Forbidden: ${MCPSERVER_MESSAGES.rateLimitingRedis}`],
    },
    {
      name: 'rateLimiting with memory session storage',
      spec: { rateLimiting: {}, sessionStorage: { provider: 'memory' } },
      expected: [`spec.rateLimiting: Forbidden: ${MCPSERVER_MESSAGES.rateLimitingRedis}`],
    },
    {
      name: 'rateLimiting with redis',
      spec: { rateLimiting: {}, sessionStorage: REDIS },
      expected: [],
    },
    {
      name: 'perUser without authentication',
      spec: { rateLimiting: { perUser: {} }, sessionStorage: REDIS },
      expected: [`spec.rateLimiting.perUser: Forbidden: ${MCPSERVER_MESSAGES.perUserAuth}`],
    },
    {
      name: 'perUser with externalAuthConfigRef',
      spec: {
        rateLimiting: { perUser: {} },
        sessionStorage: REDIS,
        externalAuthConfigRef: { name: 'x' },
      },
      expected: [],
    },
    {
      name: 'per-tool perUser without authentication',
      spec: {
        rateLimiting: {
          tools: [
            { name: 'a', shared: {} },
            { name: 'b', perUser: {} },
          ],
        },
        sessionStorage: REDIS,
      },
      expected: [
        `spec.rateLimiting.tools[1].perUser: Forbidden: ${MCPSERVER_MESSAGES.perToolAuth}`,
      ],
    },
    {
      name: 'per-tool perUser with oidcConfigRef',
      spec: { rateLimiting: { tools: [{ perUser: {} }] }, sessionStorage: REDIS, ...auth },
      expected: [],
    },
  ]
  for (const { name, spec, expected } of cases) {
    t.same(rendered(workload(spec)), expected, name)
    t.same(
      rendered(workload(spec, 'VirtualMCPServer')),
      [],
      `not applied to VirtualMCPServer: ${name}`,
    )
  }
  t.equal(
    MCPSERVER_MESSAGES.perToolAuth,
    'per-tool perUser rate limiting requires authentication (oidcConfigRef or externalAuthConfigRef)',
  )
})

t.test('warnings never deny and stay short', async (t) => {
  const cases: {
    name: string
    spec: unknown
    kind?: string
    facts?: WorkloadFacts
    warnings: string[]
  }[] = [
    {
      name: 'stdio with 3 replicas',
      spec: { replicas: 3 },
      warnings: ['spec.replicas: stdio transport supports 1 replica; the proxy will run 1, not 3'],
    },
    {
      name: 'explicit stdio with redis still capped',
      spec: { transport: 'stdio', replicas: 2, sessionStorage: REDIS },
      warnings: ['spec.replicas: stdio transport supports 1 replica; the proxy will run 1, not 2'],
    },
    {
      name: 'sse with 3 replicas and no redis',
      spec: { transport: 'sse', replicas: 3 },
      warnings: [
        'spec.replicas: 3 replicas without redis sessionStorage; sessions are not shared across replicas',
      ],
    },
    {
      name: 'sse with 3 replicas and redis',
      spec: { transport: 'sse', replicas: 3, sessionStorage: REDIS },
      warnings: [],
    },
    {
      name: 'remote proxy with 2 replicas and memory storage',
      kind: 'MCPRemoteProxy',
      spec: { replicas: 2, sessionStorage: { provider: 'memory' } },
      warnings: [
        'spec.replicas: 2 replicas without redis sessionStorage; sessions are not shared across replicas',
      ],
    },
    {
      name: 'vMCP with 4 replicas',
      kind: 'VirtualMCPServer',
      spec: { replicas: 4 },
      warnings: [
        'spec.replicas: 4 replicas without redis sessionStorage; sessions are not shared across replicas',
      ],
    },
    { name: 'one replica', spec: { replicas: 1 }, warnings: [] },
    {
      name: 'missing webhook config',
      spec: { webhookConfigRef: { name: 'hooks' } },
      facts: { webhookConfigExists: false },
      warnings: [
        'spec.webhookConfigRef.name: MCPWebhookConfig "hooks" does not exist in this namespace',
      ],
    },
    {
      name: 'existing webhook config',
      spec: { webhookConfigRef: { name: 'hooks' } },
      facts: { webhookConfigExists: true },
      warnings: [],
    },
    {
      name: 'unknown whether it exists',
      spec: { webhookConfigRef: { name: 'hooks' } },
      warnings: [],
    },
  ]
  for (const { name, spec, kind, facts, warnings } of cases) {
    const result = validate(workload(spec, kind), facts)
    t.same(result, { violations: [], warnings }, name)
  }
  const long = validate(
    workload({
      transport: 'sse',
      replicas: 2 ** 31 - 1,
      webhookConfigRef: { name: 'h'.repeat(253) },
    }),
    { webhookConfigExists: false },
  )
  t.equal(long.warnings.length, 2)
  const rendered = renderWarnings(long.warnings)
  t.ok(
    rendered.every((w) => w.length <= MESSAGE_LIMITS.warningChars),
    'truncated to 120',
  )
  t.match(rendered[1], /^spec\.webhookConfigRef\.name: MCPWebhookConfig "hhh.*…$/)
})

t.test('scope: kinds, versions and operations', async (t) => {
  const bad = { replicas: -1 }
  t.equal(rendered(workload(bad, 'MCPServer', 'v1alpha1')).length, 1, 'v1alpha1')
  t.equal(rendered(workload(bad, 'MCPServer', 'v1beta1')).length, 1, 'v1beta1')
  t.same(rendered(workload(bad, 'MCPWebhookConfig')), [], 'other ToolHive kinds')
  t.same(rendered(workload(bad, 'Deployment')), [], 'other kinds')
  for (const operation of ['DELETE', 'CONNECT'] as const) {
    t.same(validate(workload(bad), {}, operation), { violations: [], warnings: [] }, operation)
  }
  t.equal(validate(workload(bad), {}, 'UPDATE').violations.length, 1, 'UPDATE')
})

t.test('hostile input never throws', async (t) => {
  const cases: { name: string; object: unknown; expected: string[] }[] = [
    { name: 'no object', object: undefined, expected: [] },
    { name: 'null spec', object: workload(null), expected: [] },
    {
      name: 'array spec',
      object: workload([1]),
      expected: ['spec: Invalid value: "array": must be of type object'],
    },
    { name: 'the object is a number', object: 5, expected: [] },
    {
      name: 'nested wrong types',
      object: workload({
        rateLimiting: { tools: 'all' },
        sessionStorage: { provider: 7, address: 5, passwordRef: 'x' },
        webhookConfigRef: 'hooks',
      }),
      expected: [
        'spec.sessionStorage.provider: Invalid value: "integer": must be of type string',
        'spec.sessionStorage.address: Invalid value: "integer": must be of type string',
        'spec.sessionStorage.passwordRef: Invalid value: "string": must be of type object',
        'spec.webhookConfigRef: Invalid value: "string": must be of type object',
        `spec.rateLimiting: Forbidden: ${MCPSERVER_MESSAGES.rateLimitingRedis}`,
        'spec.rateLimiting.tools: Invalid value: "string": must be of type array',
      ],
    },
    {
      name: '__proto__ keys',
      object: JSON.parse(
        '{"kind":"MCPServer","spec":{"__proto__":{"replicas":-1},"rateLimiting":{"__proto__":{"perUser":{}}},"sessionStorage":{"provider":"redis","address":"r"}}}',
      ),
      expected: [],
    },
    {
      name: 'rateLimiting is a string',
      object: workload({ rateLimiting: 'on', sessionStorage: REDIS }),
      expected: ['spec.rateLimiting: Invalid value: "string": must be of type object'],
    },
  ]
  for (const { name, object, expected } of cases) {
    t.same(rendered(object as KubeObject), expected, name)
  }
})
