/**
 * The enforcement settings through the real API server. `--validation-actions` decides what a
 * violation of an MCPWebhookConfig does: Deny refuses the write (as before the setting existed),
 * Warn stores it and shows each violation as a kubectl warning, Audit stores it and records each
 * violation in the API server's audit log as the webhook's `validation_failure` annotation; the
 * refused DELETE of a referenced config follows the same setting. `--mutation-mode=observe`
 * stores what the writer sent and records the patch it would have applied as
 * `mutation_observed`. `mcp_admission_violations_total` counts each violation per action taken;
 * `mcp_admission_mutations_total` tells the modes apart by its `mode` label.
 *
 * One environment with the audit log; one mcp-admission per setting, the webhooks switched to it
 * in turn and the one before stopped, so each write below is answered by the setting under test.
 */

import t from 'tap'
import { proxyDeployment, runConfigFor } from '../helpers/proxy.ts'
import { auditEventOf, mustKubectl, startEnvironment, waitFor } from './harness/environment.ts'
import type { AuditQuery, RunningAdmission } from './harness/environment.ts'
import { toolHiveObject } from './harness/operator-objects.ts'

type Any = Record<string, any>

/** The shipped webhooks' names (manifests/base/webhooks.yaml): the audit annotations' prefix. */
const WEBHOOK_CONFIGS = 'webhookconfigs.mcp-admission.toolhive.stacklok.dev'
const DEPLOYMENTS = 'deployments.mcp-admission.toolhive.stacklok.dev'
const RUNCONFIGS = 'runconfigs.mcp-admission.toolhive.stacklok.dev'

/** Two violations in one entry, each its own message (as validation.test.ts shows them). */
const INVALID_SPEC = { validating: [{ name: 'policy', url: 'not-a-valid-url', timeout: '31s' }] }
const VIOLATIONS = [
  'spec.validating[0].url: Invalid value: "not-a-valid-url": must be an absolute URL with a scheme and host',
  'spec.validating[0].timeout: Invalid value: "31s": must be between 1s and 30s, or 0 for the 10s default',
]
const VALID_SPEC = {
  validating: [{ name: 'policy', url: 'https://policy.example.com/validate', timeout: '5s' }],
}

/** One entry of the `validation_failure` audit annotation. */
interface ValidationFailure {
  readonly message: string
  readonly policy: string
  readonly rule: string
  readonly validationActions: readonly string[]
}
/** One entry of the `mutation_observed` audit annotation: a JSON Patch operation not applied. */
interface ObservedOperation {
  readonly op: string
  readonly path: string
}

const env = await startEnvironment(t, { auditLog: true })
const { kubectl } = env

const webhookConfig = (namespace: string, name: string, spec: unknown) =>
  toolHiveObject('MCPWebhookConfig', namespace, name, spec)
const mcpServer = (namespace: string, name: string, spec: unknown) =>
  toolHiveObject('MCPServer', namespace, name, spec)
const create = (object: unknown) => kubectl(['create', '-f', '-'], JSON.stringify(object))
async function get(kind: string, name: string, namespace: string): Promise<Any> {
  return JSON.parse(
    await mustKubectl(kubectl, ['get', kind, name, '-n', namespace, '-o', 'json']),
  ) as Any
}
const stored = async (kind: string, name: string, namespace: string) =>
  (await kubectl(['get', kind, name, '-n', namespace])).code === 0
const violations = (admission: RunningAdmission, action: 'deny' | 'warn' | 'audit') =>
  admission.metric('mcp_admission_violations_total', { kind: 'MCPWebhookConfig', action })

/** The instance the webhooks call now. */
let serving: RunningAdmission = env.admission
const switchProbes = await env.namespace('switch')

/**
 * Starts mcp-admission with `args`, points the webhooks at it and stops the previous instance
 * once the API server calls the new one through both configurations: they are separate objects,
 * which the API server picks up each on its own schedule.
 */
async function serveWith(...args: string[]): Promise<RunningAdmission> {
  const next = await env.startAdmission({ args })
  await env.registerWebhooks(next)
  const validations = () =>
    next.metric('controller_runtime_webhook_requests_total', { webhook: '/validate' })
  const before = await validations()
  const probe = JSON.stringify(webhookConfig(switchProbes, 'switch-probe', VALID_SPEC))
  await waitFor(
    'the API server to call the validating webhook on the new instance',
    async () => {
      await mustKubectl(kubectl, ['create', '--dry-run=server', '-f', '-'], probe)
      return (await validations()) > before ? true : undefined
    },
    { timeoutMs: 30_000, intervalMs: 250, process: next.process },
  )
  await serving.stop()
  serving = next
  return next
}

/** The audit annotation `key` of `query`'s request, parsed; undefined when the event has none. */
async function auditAnnotation<T>(query: AuditQuery, key: string): Promise<T[] | undefined> {
  const event = await waitFor(
    `the audit event of ${query.verb} ${query.resource} ${query.namespace ?? ''}/${query.name}`,
    async () => auditEventOf(await env.auditEvents(), query),
    { timeoutMs: 10_000, intervalMs: 100 },
  )
  const value = event.annotations?.[key]
  return value === undefined ? undefined : (JSON.parse(value) as T[])
}

/** `op path` of each operation a webhook observed in `query`'s request. */
async function observedPatch(query: AuditQuery, webhook: string): Promise<string[]> {
  const operations = await auditAnnotation<ObservedOperation>(query, `${webhook}/mutation_observed`)
  return (operations ?? []).map((operation) => `${operation.op} ${operation.path}`)
}

const createOf = (namespace: string, name: string): AuditQuery => ({
  verb: 'create',
  resource: 'mcpwebhookconfigs',
  namespace,
  name,
})

t.test('Deny (the default): an invalid config is refused as before, and not audited', async (t) => {
  const admission = serving
  const ns = await env.namespace()
  const before = await violations(admission, 'deny')
  const result = await create(webhookConfig(ns, 'bad', INVALID_SPEC))
  t.not(result.code, 0)
  t.match(result.stderr, 'The MCPWebhookConfig "bad" is invalid')
  for (const text of VIOLATIONS) t.match(result.stderr, text, `kubectl shows: ${text}`)
  t.notOk(await stored('mcpwebhookconfig', 'bad', ns), 'nothing stored')
  t.equal((await violations(admission, 'deny')) - before, VIOLATIONS.length, 'one per violation')
  t.equal(
    await auditAnnotation(createOf(ns, 'bad'), `${WEBHOOK_CONFIGS}/validation_failure`),
    undefined,
    'no validation_failure annotation without Audit',
  )
  // The registration's probe ConfigMaps were patched by this instance.
  t.ok(
    (await admission.metric('mcp_admission_mutations_total', {
      resource: 'configmaps',
      changed: 'true',
      mode: 'apply',
    })) > 0,
    'mutations are counted with mode="apply"',
  )
})

t.test('Warn: an invalid config is stored, each violation a kubectl warning', async (t) => {
  const admission = await serveWith('--validation-actions=Warn')
  const ns = await env.namespace()
  const before = await violations(admission, 'warn')
  const result = await create(webhookConfig(ns, 'bad', INVALID_SPEC))
  t.equal(result.code, 0, result.stderr)
  for (const text of VIOLATIONS)
    t.match(result.stderr, `Warning: ${text}`, `kubectl warns: ${text}\n${result.stderr}`)
  t.ok(await stored('mcpwebhookconfig', 'bad', ns), 'stored')
  t.equal((await violations(admission, 'warn')) - before, VIOLATIONS.length, 'one per violation')
  t.equal(await violations(admission, 'deny'), 0, 'nothing denied')
  t.equal(
    await auditAnnotation(createOf(ns, 'bad'), `${WEBHOOK_CONFIGS}/validation_failure`),
    undefined,
    'no validation_failure annotation without Audit',
  )

  t.test('a referenced config is deleted with a warning', async (t) => {
    t.equal((await create(webhookConfig(ns, 'hooks', VALID_SPEC))).code, 0)
    const server = mcpServer(ns, 'alpha', { transport: 'sse', webhookConfigRef: { name: 'hooks' } })
    await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(server))
    const deleted = await kubectl(['delete', 'mcpwebhookconfig', 'hooks', '-n', ns])
    t.equal(deleted.code, 0, deleted.stderr)
    t.match(
      deleted.stderr,
      /Warning: .*MCPWebhookConfig "hooks" is still referenced by MCPServer alpha/,
    )
    t.notOk(await stored('mcpwebhookconfig', 'hooks', ns), 'deleted')
  })
})

t.test('Deny,Audit: an invalid config is refused, and its violations audited', async (t) => {
  const admission = await serveWith('--validation-actions=Deny,Audit')
  const ns = await env.namespace()
  const result = await create(webhookConfig(ns, 'bad', INVALID_SPEC))
  t.not(result.code, 0)
  for (const text of VIOLATIONS) t.match(result.stderr, text, `kubectl shows: ${text}`)
  t.notOk(await stored('mcpwebhookconfig', 'bad', ns), 'nothing stored')
  const failures = await auditAnnotation<ValidationFailure>(
    createOf(ns, 'bad'),
    `${WEBHOOK_CONFIGS}/validation_failure`,
  )
  t.same(failures?.map((failure) => failure.message).sort(), [...VIOLATIONS].sort())
  // The actions configured, as ValidatingAdmissionPolicy's own annotation lists its binding's.
  for (const failure of failures ?? []) t.same(failure.validationActions, ['Deny', 'Audit'])
  t.equal(await violations(admission, 'deny'), VIOLATIONS.length, 'denied: one per violation')
  t.equal(await violations(admission, 'audit'), VIOLATIONS.length, 'audited: one per violation')
})

t.test('Audit, mutations observed', async (t) => {
  const admission = await serveWith('--validation-actions=Audit', '--mutation-mode=observe')

  t.test(
    'an invalid config is stored with no warning; the audit log holds each violation',
    async (t) => {
      const ns = await env.namespace()
      const result = await create(webhookConfig(ns, 'bad', INVALID_SPEC))
      t.equal(result.code, 0, result.stderr)
      t.notMatch(result.stderr, /Warning: spec\./, 'no warning')
      t.ok(await stored('mcpwebhookconfig', 'bad', ns), 'stored')
      const failures = await auditAnnotation<ValidationFailure>(
        createOf(ns, 'bad'),
        `${WEBHOOK_CONFIGS}/validation_failure`,
      )
      t.same(failures?.map((failure) => failure.message).sort(), [...VIOLATIONS].sort())
      for (const failure of failures ?? []) {
        t.equal(failure.policy, 'mcp-admission')
        t.ok(typeof failure.rule === 'string' && failure.rule !== '', `a rule id: ${failure.rule}`)
        t.same(failure.validationActions, ['Audit'])
      }
      t.equal(await violations(admission, 'audit'), VIOLATIONS.length, 'one per violation')
      t.equal(await violations(admission, 'warn'), 0)
      t.equal(await violations(admission, 'deny'), 0)
    },
  )

  t.test('a RunConfig ConfigMap and proxy Deployment are stored as written', async (t) => {
    const ns = await env.namespace()
    const mutations = (resource: string) =>
      admission.metric('mcp_admission_mutations_total', {
        resource,
        changed: 'true',
        writer: 'other',
        mode: 'observe',
      })
    await mustKubectl(
      kubectl,
      ['create', '-f', '-'],
      JSON.stringify(mcpServer(ns, 'observed', { transport: 'sse' })),
    )
    const owner = await get('mcpserver.toolhive.stacklok.dev', 'observed', ns)

    // With an annotation already there, the patch adds single keys (not the whole map).
    const runConfig = runConfigFor('MCPServer', 'observed') as Any
    runConfig['metadata'] = {
      ...runConfig['metadata'],
      namespace: ns,
      annotations: { 'example.com/owner': 'e2e' },
    }
    const configMapsBefore = await mutations('configmaps')
    await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(runConfig))
    t.equal(
      (await mutations('configmaps')) - configMapsBefore,
      1,
      'the ConfigMap counted as observed',
    )
    const storedMap = await get('configmap', 'observed-runconfig', ns)
    t.same(storedMap['metadata'].annotations, { 'example.com/owner': 'e2e' }, 'no content checksum')
    const mapPatch = await observedPatch(
      { verb: 'create', resource: 'configmaps', namespace: ns, name: 'observed-runconfig' },
      RUNCONFIGS,
    )
    const checksum = 'add /metadata/annotations/toolhive.stacklok.dev~1content-checksum'
    t.ok(mapPatch.includes(checksum), `observed: ${checksum}\n${mapPatch.join('\n')}`)

    const deployment = proxyDeployment('MCPServer', 'observed', {
      uid: owner['metadata'].uid,
      podAnnotations: { 'example.com/team': 'blue' },
    }) as Any
    deployment['metadata'].namespace = ns
    const deploymentsBefore = await mutations('deployments')
    await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(deployment))
    t.equal(
      (await mutations('deployments')) - deploymentsBefore,
      1,
      'the Deployment counted as observed',
    )
    const template = (await get('deployment', 'observed', ns))['spec'].template
    t.same(
      template.metadata.annotations,
      { 'example.com/team': 'blue' },
      'no checksum or generation',
    )
    t.equal(template.spec.containers[0].env, undefined, 'no generation env entry')
    const paths = await observedPatch(
      { verb: 'create', resource: 'deployments', namespace: ns, name: 'observed' },
      DEPLOYMENTS,
    )
    for (const path of [
      'add /spec/template/metadata/annotations/toolhive.stacklok.dev~1runconfig-checksum',
      'add /spec/template/metadata/annotations/toolhive.stacklok.dev~1mcpserver-generation',
    ])
      t.ok(paths.includes(path), `observed: ${path}\n${paths.join('\n')}`)
  })
})
