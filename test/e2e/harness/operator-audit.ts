/**
 * `mcp-admission audit` beside a real operator and its release's examples (issue 36): two broken
 * objects are planted where no operator repairs them, in a namespace it does not watch: an invalid
 * MCPWebhookConfig stored while the validating webhook was away, and a proxy Deployment whose
 * RunConfig changed after it was written (its checksum stale: its pods would never roll). The
 * audit, run as a user runs it (`node dist/main.js audit`), must find exactly those two among
 * everything the examples and the suite created, and its OpenReports output must apply with
 * kubectl to a cluster serving the OpenReports CRDs of the reports-api Go module.
 */

import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { storeWithoutValidation } from './admission.ts'
import type { Environment } from './environment.ts'
import { mustKubectl } from './kubectl.ts'
import { GROUP, getObject, mcpServer } from './operator-objects.ts'
import type { Any } from './operator.ts'
import { ensureOpenReportsCrds } from './openreports.ts'

const run = promisify(execFile)
const MAIN = join(import.meta.dirname, '../../../dist/main.js')

interface Finding {
  readonly subject: { readonly kind: string; readonly namespace: string; readonly name: string }
  readonly result: 'deny' | 'patch' | 'warn'
  readonly violations: readonly string[]
  readonly changes: readonly { readonly meanings: readonly string[] }[]
}

/** Runs `audit` as the cluster admin; resolves to its exit code and output. */
async function audit(kubeconfig: string, output: string) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [MAIN, 'audit', '--kubeconfig', kubeconfig, '-o', output],
      { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
    )
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string }
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' }
  }
}

export async function auditBesideOperator(
  t: Test,
  env: Environment,
  namespace: string,
): Promise<void> {
  const { kubectl } = env
  await plantBrokenObjects(kubectl, namespace)

  await t.test('audit finds exactly the planted objects', async (t) => {
    const result = await audit(env.plane.kubeconfig, 'json')
    t.equal(result.code, 1, `findings exit 1: ${result.stderr}`)
    const { findings, summary } = JSON.parse(result.stdout) as {
      findings: Finding[]
      summary: { kind: string; audited: number }[]
    }
    const failing = findings
      .filter((f) => f.result === 'deny' || f.result === 'patch')
      .map((f) => `${f.result} ${f.subject.kind} ${f.subject.namespace}/${f.subject.name}`)
    t.same(failing.sort(), [
      `deny MCPWebhookConfig ${namespace}/broken-hooks`,
      `patch Deployment ${namespace}/stale`,
    ])
    const stale = findings.find((f) => f.subject.name === 'stale')
    t.same(
      stale?.changes.flatMap((c) => c.meanings),
      ['RunConfig checksum stale: pods did not roll after the RunConfig changed'],
    )
    const broken = findings.find((f) => f.subject.name === 'broken-hooks')
    t.match(broken?.violations, [/^spec\.validating\[0\]\.url: .*https/])
    t.comment(
      `audited: ${summary.map(({ kind, audited }) => `${audited} ${kind}`).join(', ')}; warnings on ${findings.filter((f) => f.result === 'warn').length} objects`,
    )
    const deployments = summary.find((s) => s.kind === 'Deployment')?.audited ?? 0
    t.ok(deployments > 2, 'the operator-written proxy Deployments were audited too')
  })

  await t.test(
    'audit -o openreports applies with kubectl beside the OpenReports CRDs',
    async (t) => {
      await env.installCrds(await ensureOpenReportsCrds())
      const result = await audit(env.plane.kubeconfig, 'openreports')
      t.equal(result.code, 1, result.stderr)
      const applied = await kubectl(['apply', '-f', '-'], result.stdout)
      t.equal(applied.code, 0, `kubectl apply: ${applied.stderr}`)
      const report = await getReport(env, namespace)
      t.match(report, { source: 'mcp-admission', summary: { fail: 2 } })
      const failed = (report['results'] as Any[]).filter((r) => r['result'] === 'fail')
      t.match(failed, [
        { rule: 'webhook-config', resources: [{ name: 'broken-hooks' }] },
        { rule: 'proxy-deployment', resources: [{ name: 'stale' }] },
      ])
      // Applying the next audit replaces the report: nothing piles up.
      const again = await kubectl(
        ['apply', '-f', '-'],
        (await audit(env.plane.kubeconfig, 'openreports')).stdout,
      )
      t.equal(again.code, 0, again.stderr)
      t.match(again.stdout, /unchanged|configured/)
    },
  )
}

async function getReport(env: Environment, namespace: string): Promise<Any> {
  const text = await mustKubectl(env.kubectl, [
    'get',
    'reports.openreports.io',
    'mcp-admission',
    '-n',
    namespace,
    '-o',
    'json',
  ])
  return JSON.parse(text) as Any
}

/**
 * The invalid config is stored while the validating webhook is away; the stale Deployment is
 * admitted (stamped) like any proxy Deployment, then its RunConfig changes under it.
 */
async function plantBrokenObjects(kubectl: Environment['kubectl'], namespace: string) {
  await storeWithoutValidation(kubectl, {
    apiVersion: `${GROUP}/v1alpha1`,
    kind: 'MCPWebhookConfig',
    metadata: { namespace, name: 'broken-hooks' },
    spec: { validating: [{ name: 'plain', url: 'http://policy.example.com/check' }] },
  })
  await mustKubectl(
    kubectl,
    ['apply', '-f', '-'],
    JSON.stringify(mcpServer('stale', namespace, { transport: 'streamable-http' })),
  )
  const server = (await getObject(kubectl, 'mcpserver', 'stale', namespace)) as Any
  await mustKubectl(kubectl, ['apply', '-f', '-'], JSON.stringify(runConfig(namespace, 'v1')))
  await mustKubectl(
    kubectl,
    ['apply', '-f', '-'],
    JSON.stringify(proxyDeployment(namespace, server)),
  )
  await mustKubectl(kubectl, ['apply', '-f', '-'], JSON.stringify(runConfig(namespace, 'v2')))
}

function runConfig(namespace: string, content: string): Any {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'stale-runconfig',
      namespace,
      labels: { 'toolhive.stacklok.io/component': 'run-config' },
    },
    data: { 'runconfig.json': JSON.stringify({ name: 'stale', content }) },
  }
}

function proxyDeployment(namespace: string, owner: Any): Any {
  const labels = { app: 'mcpserver', toolhive: 'true', 'toolhive-name': 'stale' }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'stale',
      namespace,
      labels,
      ownerReferences: [
        {
          apiVersion: owner['apiVersion'],
          kind: 'MCPServer',
          name: 'stale',
          uid: owner['metadata'].uid,
          controller: true,
        },
      ],
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'toolhive', image: 'ghcr.io/example/proxy:1.0' }] },
      },
    },
  }
}
