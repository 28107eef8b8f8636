/**
 * `npm run try:audit`: `mcp-admission audit` as a user runs it, on a fresh clone after `npm ci`,
 * with neither Go nor a cluster. The cluster is the benchmarks' stand-in API server
 * (list-server.ts: HTTPS on 127.0.0.1, an ephemeral port, API discovery of every ToolHive kind)
 * serving a small population with planted findings: the sample objects (`samples/objects`, whose
 * RunConfig ConfigMap and proxy Deployment lack what the operator stamps), the invalid
 * MCPWebhookConfig of `samples/invalid`, and a stdio MCPServer asking for three replicas. A
 * kubeconfig for it is written to a temporary directory, `node dist/main.js audit --kubeconfig
 * FILE` prints its table, and everything is stopped and removed.
 *
 * Exit 0 when the audit ran (exit 1: it found something) and reported exactly the planted
 * findings, each with its result; 1 otherwise, saying what differed.
 *
 *   node bench/try-audit.ts [CLI]   # CLI: the entry point to run, dist/main.js by default (as
 *                                   # `npm ci` builds it); the unit test gives src/main.ts
 */

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LIVE_ONLY_RESOURCES, VIEW_RESOURCES, resourcePath } from '../src/cluster/resources.ts'
import { parseObjects } from '../src/cluster/load-objects.ts'
import { createDevCertificates } from '../src/http/dev-certs.ts'
import type { KubeObject } from '../src/policy/kube/object.ts'
import type { Collection } from './list-server.ts'
import { startListServer } from './list-server.ts'
import { kubeconfigText } from '../test/helpers/kubeconfig.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SAMPLES = [
  'samples/objects/demo.yaml',
  'samples/objects/demo-deployment.yaml',
  'samples/objects/webhook-config.yaml',
  'samples/invalid/webhook-config.yaml',
]
const CLI = process.argv[2] ?? 'dist/main.js'
const CLI_PATH = resolve(ROOT, CLI)
/** The audit is a few lists on loopback; anything near this is a hang. */
const AUDIT_TIMEOUT_MS = 60_000

/** What the audit must report, and why each object is there. */
const PLANTED = [
  {
    line: 'DENY   MCPWebhookConfig default/broken-hooks',
    why: 'an MCPWebhookConfig with invalid fields (samples/invalid/webhook-config.yaml)',
  },
  {
    line: 'PATCH  Deployment default/demo',
    why: 'a proxy Deployment lacking its RunConfig checksum, at 2 replicas of a stdio server',
  },
  {
    line: 'PATCH  ConfigMap default/demo-runconfig',
    why: 'a RunConfig ConfigMap lacking its content checksum',
  },
  {
    line: 'WARN   MCPServer default/scaled-stdio',
    why: 'a stdio MCPServer asking for 3 replicas',
  },
] as const

/** Planted beside the samples: a stdio server runs one proxy, whatever `replicas` asks for. */
const SCALED_STDIO: KubeObject = {
  apiVersion: 'toolhive.stacklok.dev/v1beta1',
  kind: 'MCPServer',
  metadata: { name: 'scaled-stdio', namespace: 'default' },
  spec: { image: 'ghcr.io/stackloklabs/fetch:latest', transport: 'stdio', replicas: 3 },
}

async function population(): Promise<KubeObject[]> {
  const objects: KubeObject[] = [SCALED_STDIO]
  for (const file of SAMPLES) objects.push(...parseObjects(await readFile(join(ROOT, file)), file))
  return objects
}

/** Every collection the audit lists, each holding the population's objects of its kind. */
function collections(objects: readonly KubeObject[]): Map<string, Collection> {
  return new Map(
    [...VIEW_RESOURCES, ...LIVE_ONLY_RESOURCES].map((resource) => {
      const items = objects.filter((object) => object.kind === resource.kind)
      return [
        resourcePath(resource),
        { count: items.length, item: (i) => structuredClone(items[i]!) },
      ]
    }),
  )
}

/** Runs the built CLI, its table shown as it comes; resolves with its exit code and stdout. */
function audit(kubeconfig: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, 'audit', '--kubeconfig', kubeconfig], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: AUDIT_TIMEOUT_MS,
    })
    let stdout = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk
      process.stdout.write(chunk)
    })
    child.on('error', reject)
    child.on('close', (code) => {
      resolve({ code, stdout })
    })
  })
}

/** What differs between the audit's table and the planted findings; empty when none does. */
function differences(stdout: string, code: number | null): string[] {
  const reported = stdout.split('\n').filter((line) => /^(DENY|PATCH|WARN|ERROR) /.test(line))
  const problems: string[] = []
  for (const { line, why } of PLANTED)
    if (!reported.includes(line)) problems.push(`not reported: ${line} (${why})`)
  const planted = new Set<string>(PLANTED.map(({ line }) => line))
  for (const line of reported) if (!planted.has(line)) problems.push(`not planted: ${line}`)
  // Exit 1 is the audit's "something would be denied or changed by a write now".
  if (code !== 1) problems.push(`audit exited ${code ?? 'on a signal'}, not 1`)
  return problems
}

async function main(): Promise<number> {
  if (!existsSync(CLI_PATH)) {
    process.stderr.write(`try:audit: no ${CLI}: build it first (npm run build)\n`)
    return 1
  }
  const tmp = await mkdtemp(join(tmpdir(), 'mcp-admission-try-audit-'))
  const { ca, cert, key } = await createDevCertificates()
  const unknown: string[] = []
  const cluster = await startListServer(collections(await population()), { key, cert }, (path) =>
    unknown.push(path),
  )
  try {
    const kubeconfig = join(tmp, 'kubeconfig')
    await writeFile(kubeconfig, kubeconfigText(cluster.url, { ca }), { mode: 0o600 })
    process.stderr.write(
      `try:audit: a stand-in API server at ${cluster.url} serves ${cluster.objects} objects, ${PLANTED.length} with planted findings; running: mcp-admission audit --kubeconfig ${kubeconfig}\n\n`,
    )
    const { code, stdout } = await audit(kubeconfig)
    const problems = differences(stdout, code)
    for (const path of unknown) problems.push(`the stand-in does not serve ${path}`)
    if (problems.length > 0) {
      process.stderr.write(`\ntry:audit: FAILED\n${problems.map((p) => `  ${p}\n`).join('')}`)
      return 1
    }
    process.stderr.write(
      `\ntry:audit: the planted findings were reported:\n${PLANTED.map(({ line, why }) => `  ${line.replace(/ +/g, ' ')}: ${why}\n`).join('')}`,
    )
    return 0
  } finally {
    cluster.close()
    await rm(tmp, { recursive: true, force: true })
  }
}

process.exitCode = await main()
