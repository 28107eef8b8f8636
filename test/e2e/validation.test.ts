/**
 * Validation of the ToolHive kinds through the real API server (docs/enforcement.md#validation):
 * invalid webhook configs are rejected with every message shown by kubectl, a referenced config
 * cannot be deleted, and workload warnings reach the user (a workload is never denied: its CRD says
 * what it may hold).
 */

import t from 'tap'
import { startEnvironment, storeWithoutValidation } from './harness/environment.ts'
import { mustKubectl } from './harness/kubectl.ts'
import { toolHiveObject } from './harness/operator-objects.ts'

const env = await startEnvironment(t)
const { kubectl } = env

const webhookConfig = (namespace: string, name: string, spec: unknown) =>
  toolHiveObject('MCPWebhookConfig', namespace, name, spec)
const server = (namespace: string, name: string, spec: unknown) =>
  toolHiveObject('MCPServer', namespace, name, spec)
const apply = (object: unknown) => kubectl(['apply', '-f', '-'], JSON.stringify(object))

t.test('an invalid webhook config is rejected with all its messages', async (t) => {
  const ns = await env.namespace()
  const result = await apply(
    webhookConfig(ns, 'bad', {
      validating: [
        { name: 'policy', url: 'not-a-valid-url', timeout: '31s', failurePolicy: 'Fail' },
        {
          name: 'audit',
          url: 'http://audit.example.com',
          tlsConfig: { clientCertSecretRef: { name: 'client', key: 'tls.crt' } },
        },
      ],
      mutating: [{ name: 'POLICY', url: 'https://x.example.com' }],
    }),
  )
  t.not(result.code, 0)
  const expected = [
    'The MCPWebhookConfig "bad" is invalid',
    'spec.validating[0].url: Invalid value: "not-a-valid-url": must be an absolute URL with a scheme and host',
    'spec.validating[0].timeout: Invalid value: "31s": must be between 1s and 30s, or 0 for the 10s default',
    'spec.validating[0].failurePolicy: Unsupported value: "Fail": supported values: "fail", "ignore"',
    'spec.validating[1].url: Invalid value: "http://audit.example.com": must use https unless tlsConfig.insecureSkipVerify is true',
    'spec.validating[1].tlsConfig.clientKeySecretRef: Required value: required when clientCertSecretRef is set',
  ]
  for (const text of expected)
    t.ok(result.stderr.includes(text), `kubectl shows: ${text}\n${result.stderr}`)
  t.match(
    result.stderr,
    /spec\.mutating\[0\]\.name: Duplicate value: "POLICY"/,
    'names equal after sanitising',
  )
  t.not((await kubectl(['get', 'mcpwebhookconfig', 'bad', '-n', ns])).code, 0, 'nothing stored')

  const empty = await apply(webhookConfig(ns, 'empty', {}))
  t.match(empty.stderr, /at least one validating or mutating webhook must be defined/)
})

t.test('a valid config is stored; a referenced one cannot be deleted until released', async (t) => {
  const ns = await env.namespace()
  const created = await apply(
    webhookConfig(ns, 'hooks', {
      validating: [
        {
          name: 'policy',
          url: 'https://policy.example.com/validate',
          timeout: '5s',
          failurePolicy: 'fail',
        },
      ],
    }),
  )
  t.equal(created.code, 0, created.stderr)
  for (const name of ['beta', 'alpha']) {
    await mustKubectl(
      kubectl,
      ['apply', '-f', '-'],
      JSON.stringify(server(ns, name, { transport: 'sse', webhookConfigRef: { name: 'hooks' } })),
    )
  }
  // Right after the references are created: the DELETE lists them live, no waiting on a watch.
  const deleted = await kubectl(['delete', 'mcpwebhookconfig', 'hooks', '-n', ns])
  t.not(deleted.code, 0)
  t.match(
    deleted.stderr,
    'MCPWebhookConfig "hooks" is still referenced by MCPServer alpha, MCPServer beta',
  )

  for (const name of ['alpha', 'beta']) {
    await mustKubectl(
      kubectl,
      ['apply', '-f', '-'],
      JSON.stringify(server(ns, name, { transport: 'sse' })),
    )
  }
  const released = await kubectl(['delete', 'mcpwebhookconfig', 'hooks', '-n', ns])
  t.equal(released.code, 0, released.stderr)
})

t.test('workload warnings are shown on apply', async (t) => {
  const ns = await env.namespace()
  const stdio = await apply(server(ns, 'stdio', { transport: 'stdio', replicas: 3 }))
  t.equal(stdio.code, 0, stdio.stderr)
  t.match(stdio.stderr, /Warning: spec\.replicas: stdio transport supports 1 replica/)
  const sessions = await apply(server(ns, 'http', { transport: 'streamable-http', replicas: 2 }))
  t.match(sessions.stderr, /Warning: spec\.replicas: 2 replicas without redis sessionStorage/)
  const missing = await apply(
    server(ns, 'refs', { transport: 'sse', webhookConfigRef: { name: 'nope' } }),
  )
  t.match(
    missing.stderr,
    /Warning: spec\.webhookConfigRef\.name: MCPWebhookConfig "nope" not found: the operator reports NotReady/,
  )
  // ToolHive's CRDs require a redis address; these fixture CRDs state no such rule, and the
  // webhook repeats none of the CRDs' rules: the write is admitted.
  const noAddress = await apply(
    server(ns, 'no-address', { transport: 'sse', sessionStorage: { provider: 'redis' } }),
  )
  t.equal(noAddress.code, 0, noAddress.stderr)
})

t.test(
  'ratcheting: an update that leaves a pre-existing violation alone is allowed with a warning',
  async (t) => {
    const ns = await env.namespace()
    // Store an invalid config the way an old cluster would have one: with the validating webhook
    // out of the way (as before this webhook was installed), then put it back.
    const legacy = webhookConfig(ns, 'legacy', {
      mutating: [{ name: 'm', url: 'http://m.example.com' }],
    })
    await storeWithoutValidation(kubectl, legacy)

    // Another field changes; the stored violation stays: allowed, with a warning.
    const edited = await apply(
      webhookConfig(ns, 'legacy', {
        mutating: [{ name: 'm', url: 'http://m.example.com', timeout: '5s' }],
      }),
    )
    t.equal(edited.code, 0, edited.stderr)
    t.match(edited.stderr, /Warning: spec\.mutating\[0\]\.url: pre-existing violation kept/)
    // The update introduces a violation: denied.
    const worse = await apply(
      webhookConfig(ns, 'legacy', {
        mutating: [{ name: 'm', url: 'http://m.example.com', timeout: 'abc' }],
      }),
    )
    t.not(worse.code, 0)
    t.match(worse.stderr, 'spec.mutating[0].timeout: Invalid value: "abc"')
    // Changing the violating field to another bad value is denied too.
    const other = await apply(
      webhookConfig(ns, 'legacy', {
        mutating: [{ name: 'm', url: 'http://other.example.com', timeout: '5s' }],
      }),
    )
    t.not(other.code, 0)
    t.match(other.stderr, 'must use https unless tlsConfig.insecureSkipVerify is true')
  },
)
