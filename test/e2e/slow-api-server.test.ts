/**
 * A slow API server never refuses the operator's own write (docs/enforcement.md#a-slow-api-server),
 * through the real API server. The service reads the cluster through its kubeconfig's `proxy-url`,
 * a delaying CONNECT proxy (harness/delaying-proxy.ts) that holds back the answers to a share of
 * its requests past the 2 s live-read deadline. 1,000 MCPServers (60 % stdio), their RunConfig
 * ConfigMaps and proxy Deployments are stored before any delay; then every Deployment is written
 * again (PUT, a real pod-template change, the stamps as the operator wrote them) by a writer
 * impersonating the operator's service account, 64 in flight:
 *  - with the operator named without its namespace (`--operator-service-account=toolhive-operator`,
 *    the fallback off: today's code path) and every read delayed, writes are refused in-band;
 *  - with `toolhive-system/toolhive-operator` and every read delayed, none is, and every stored
 *    Deployment still holds the invariants that need no live read (stamps as written, the
 *    generation env entry, the grace period, the stdio cap from the cache); with 10 % of the
 *    reads delayed, none is either;
 *  - under the delay a writer other than the operator, an operator write without the checksum
 *    annotation (as v0.33.0 wrote them) and one lowering the generation are refused in-band;
 *  - the fallbacks are counted (`mcp_admission_live_read_fallbacks_total`), annotated on the
 *    write in the audit log, and logged at most every 10 s.
 * Each burst's time is reported (t.comment), beside the same burst with no delay and with the
 * webhooks off, for docs/performance.md.
 */

import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { effectiveContentChecksum } from '../../src/policy/content-checksum.ts'
import { generationEnvEntry } from '../../src/policy/generation-env.ts'
import { proxyDeployment } from '../helpers/proxy.ts'
import { startDelayingProxy } from './harness/delaying-proxy.ts'
import type { DelayingProxy, Slowness } from './harness/delaying-proxy.ts'
import { OPERATOR_ACCOUNT, adminClient, startEnvironment, waitFor } from './harness/environment.ts'
import type { ApiAnswer, ApiClient, RunningAdmission } from './harness/environment.ts'

type Any = Record<string, any>
const CHECKSUM = 'toolhive.stacklok.dev/runconfig-checksum'
const GENERATION = 'toolhive.stacklok.dev/mcpserver-generation'
/** Changed by every burst, so each write is a real change that reaches etcd. */
const REVISION = 'e2e.mcp-admission.toolhive.stacklok.dev/revision'
const FALLBACK_AUDIT_KEY = 'deployments.mcp-admission.toolhive.stacklok.dev/live_read_fallback'
const FALLBACKS = 'mcp_admission_live_read_fallbacks_total'
const FALLBACK_LOG =
  'live reads missed their deadline: operator writes admitted without the freshness proof'
// The read's request may be named before the reason (`GET /api/v1/...: `).
const IN_BAND =
  /cannot read (MCPServer|ConfigMap) \S+ from the API server: (GET \S+: )?no answer before the deadline/

const SERVERS = 1_000
const NAMESPACES = 10
const IN_FLIGHT = 64
/** Past the 2 s live-read deadline (src/admission/deadline.ts), inside the webhook's 5 s. */
const DELAY_MS = 2_500
const EVERY_READ: Slowness = { delayMs: DELAY_MS, share: 1 }
const TENTH_OF_READS: Slowness = { delayMs: DELAY_MS, share: 0.1 }
const NO_DELAY: Slowness = { delayMs: 0, share: 0 }
/** No burst of 1,000 writes takes this long, even at the webhook's 5 s per write. */
const BURST_DEADLINE_MS = 180_000
const OPERATOR_USER = `system:serviceaccount:${OPERATOR_ACCOUNT.namespace}:${OPERATOR_ACCOUNT.name}`

// The service reads the API server through the delaying proxy, with its own account's token.
const slow: { proxy?: DelayingProxy; kubeconfig?: string } = {}
const env = await startEnvironment(t, {
  auditLog: true,
  service: {
    credentials: async (env) => {
      const proxy = await startDelayingProxy(NO_DELAY)
      env.onStop(() => proxy.close())
      const config = JSON.parse(await readFile(await env.serviceAccountKubeconfig(), 'utf8')) as Any
      config['clusters'][0].cluster['proxy-url'] = proxy.url
      const kubeconfig = join(env.plane.dir, 'service-via-delaying-proxy.kubeconfig')
      await writeFile(kubeconfig, JSON.stringify(config), { mode: 0o600 })
      Object.assign(slow, { proxy, kubeconfig })
      return kubeconfig
    },
    // A name alone: writes labelled the operator's, the fallback never enabled (today's path).
    args: [`--operator-service-account=${OPERATOR_ACCOUNT.name}`],
  },
})
const { proxy, kubeconfig } = slow
if (proxy === undefined || kubeconfig === undefined)
  throw new Error('the service runs without its delaying proxy')

const requestTimeoutMs = 30_000
const admin = adminClient(env.plane, { maxSockets: IN_FLIGHT, timeoutMs: requestTimeoutMs })
const operator = adminClient(env.plane, {
  maxSockets: IN_FLIGHT,
  timeoutMs: requestTimeoutMs,
  // system:masters authorizes the writes; webhooks see the operator's service account.
  impersonate: { user: OPERATOR_USER, groups: ['system:masters'] },
})
t.teardown(() => {
  admin.close()
  operator.close()
})

/** Runs `job(i)` for i in [0, count), `concurrency` at a time, each the next once one answers. */
async function inFlight<T>(
  count: number,
  concurrency: number,
  job: (i: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array<T>(count)
  let next = 0
  const stopAt = Date.now() + BURST_DEADLINE_MS
  const worker = async () => {
    while (next < count) {
      if (Date.now() > stopAt) throw new Error(`${count} jobs not done in ${BURST_DEADLINE_MS} ms`)
      const i = next++
      results[i] = await job(i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  return results
}

function must(answer: ApiAnswer, what: string): Any {
  if (answer.status < 200 || answer.status >= 300)
    throw new Error(`${what}: ${answer.status} ${answer.body.slice(0, 500)}`)
  return JSON.parse(answer.body) as Any
}

function messageOf(answer: ApiAnswer): string {
  try {
    const status = JSON.parse(answer.body) as { message?: unknown }
    if (typeof status.message === 'string') return status.message
  } catch {
    // not a Status
  }
  return answer.body.slice(0, 300)
}

/** One stored MCPServer and what the operator stamps on its proxy Deployment. */
interface Server {
  readonly namespace: string
  readonly name: string
  readonly uid: string
  readonly stdio: boolean
  readonly checksum: string
  readonly generation: number
}

const namespaceOf = (i: number) => `slow-${String(i % NAMESPACES).padStart(2, '0')}`
const nameOf = (i: number) => `mcp-${String(i).padStart(4, '0')}`
/** 60 % stdio, as bench/population.ts spreads them: their proxies are capped at 1 replica. */
const isStdio = (i: number) => i % 5 < 3
/** Half of the proxies are written with 2 replicas: the stdio ones must be stored at 1. */
const replicasWritten = (i: number) => (i % 2 === 0 ? 2 : 1)
const deploymentPath = (server: Server) =>
  `/apis/apps/v1/namespaces/${server.namespace}/deployments/${server.name}`

/**
 * Server i's proxy Deployment as the operator writes it: its stamps, a revision, no generation
 * env entry and no grace period (so the stored ones are the webhook's, also without a live read).
 */
function deploymentOf(
  server: Server,
  write: { readonly revision: number; readonly replicas?: number; readonly generation?: number },
  without: readonly string[] = [],
): Any {
  const annotations = Object.fromEntries(
    [
      [CHECKSUM, server.checksum],
      [GENERATION, String(write.generation ?? server.generation)],
      [REVISION, String(write.revision)],
    ].filter(([key]) => !without.includes(key!)),
  )
  const deployment = proxyDeployment('MCPServer', server.name, {
    uid: server.uid,
    replicas: write.replicas ?? 1,
    podAnnotations: annotations,
  }) as Any
  deployment['metadata'].namespace = server.namespace
  return deployment
}

/**
 * In-band refusals of setup writes with no delay at all: on a loaded machine a live read can miss
 * the deadline by itself (docs/performance.md), and the name-only setting has no fallback.
 */
let setupRefusals = 0

/** A setup write, sent again (at most 5 times) while it is refused in-band. */
async function sendUntilAdmitted(
  client: ApiClient,
  method: string,
  path: string,
  body: unknown,
): Promise<ApiAnswer> {
  for (let attempt = 1; ; attempt++) {
    const answer = await client.send(method, path, body)
    if (answer.status !== 503 || attempt === 5 || !IN_BAND.test(messageOf(answer))) return answer
    setupRefusals++
  }
}

// The population, stored with no delay: MCPServers, RunConfig ConfigMaps (stamped with their
// content checksum by the webhook), and each proxy Deployment written by the operator.
const populated = Date.now()
for (let n = 0; n < NAMESPACES; n++)
  must(
    await admin.send('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespaceOf(n) },
    }),
    `namespace ${namespaceOf(n)}`,
  )
const servers: Server[] = await inFlight(SERVERS, IN_FLIGHT, async (i) => {
  const [namespace, name, stdio] = [namespaceOf(i), nameOf(i), isStdio(i)]
  const stored = must(
    await admin.send(
      'POST',
      `/apis/toolhive.stacklok.dev/v1beta1/namespaces/${namespace}/mcpservers`,
      {
        apiVersion: 'toolhive.stacklok.dev/v1beta1',
        kind: 'MCPServer',
        metadata: { name, namespace },
        spec: {
          image: `ghcr.io/stackloklabs/${name}:1.0.0`,
          transport: stdio ? 'stdio' : 'streamable-http',
          proxyPort: 8080,
          ...(stdio ? {} : { mcpPort: 8081 }),
        },
      },
    ),
    `MCPServer ${namespace}/${name}`,
  )
  const configMap = must(
    await admin.send('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `${name}-runconfig`,
        namespace,
        labels: { 'toolhive.stacklok.io/component': 'run-config' },
      },
      data: {
        'runconfig.json': JSON.stringify({ name, transport: stdio ? 'stdio' : 'streamable-http' }),
      },
    }),
    `ConfigMap ${namespace}/${name}-runconfig`,
  )
  const server: Server = {
    namespace,
    name,
    uid: stored['metadata'].uid as string,
    stdio,
    checksum: effectiveContentChecksum(configMap) ?? '',
    generation: stored['metadata'].generation as number,
  }
  must(
    await sendUntilAdmitted(
      operator,
      'POST',
      `/apis/apps/v1/namespaces/${namespace}/deployments`,
      deploymentOf(server, { revision: 0 }),
    ),
    `Deployment ${namespace}/${name}`,
  )
  return server
})
t.comment(
  `stored ${SERVERS} MCPServers, RunConfig ConfigMaps and proxy Deployments in ${Date.now() - populated} ms (${setupRefusals} Deployment writes refused in-band with no delay, then written again)`,
)

interface Burst {
  readonly ms: number
  readonly refused: readonly { readonly status: number; readonly message: string }[]
}

/** Every Deployment written again at `revision` by `client`, 64 in flight. */
async function burst(client: ApiClient, revision: number): Promise<Burst> {
  const started = Date.now()
  const answers = await inFlight(SERVERS, IN_FLIGHT, async (i) => {
    const server = servers[i]!
    const body = deploymentOf(server, { revision, replicas: replicasWritten(i) })
    return client
      .send('PUT', deploymentPath(server), body)
      .catch((error: unknown): ApiAnswer => ({ status: 0, body: String(error) }))
  })
  const ms = Date.now() - started
  const refused = answers
    .filter((answer) => answer.status < 200 || answer.status >= 300)
    .map((answer) => ({ status: answer.status, message: messageOf(answer) }))
  return { ms, refused }
}

/** "N× status: message" of the most frequent refusals, the names and paths taken out. */
function summary(refused: Burst['refused']): string {
  const counts = new Map<string, number>()
  for (const { status, message } of refused) {
    const shape = `${status}: ${message
      .replace(/^admission webhook "[^"]+" denied the request: /, '')
      .replace(/GET \S+: /g, '')
      .replace(/slow-\d+\/mcp-\d+/g, '<ns>/<name>')
      .slice(0, 200)}`
    counts.set(shape, (counts.get(shape) ?? 0) + 1)
  }
  const shapes = [...counts].sort(([, a], [, b]) => b - a)
  const shown = shapes.slice(0, 4).map(([shape, count]) => `${count}× ${shape}`)
  if (shapes.length > 4) shown.push(`${shapes.length - 4} other shapes`)
  return shown.join('; ') || 'none'
}

/** Every stored proxy Deployment, listed page by page. */
async function storedDeployments(): Promise<Map<string, Any>> {
  const found = new Map<string, Any>()
  let next = ''
  do {
    const query = `labelSelector=toolhive%3Dtrue&limit=500${next ? `&continue=${encodeURIComponent(next)}` : ''}`
    const page = must(await admin.send('GET', `/apis/apps/v1/deployments?${query}`), 'list')
    for (const item of page['items'] as Any[])
      found.set(`${item['metadata'].namespace}/${item['metadata'].name}`, item)
    next = (page['metadata'].continue as string | undefined) ?? ''
  } while (next !== '')
  return found
}

/** What a stored Deployment breaks of the invariants after a burst at `revision`. */
function problemsOf(
  server: Server,
  index: number,
  stored: Any | undefined,
  revision: number,
): string[] {
  const at = `${server.namespace}/${server.name}`
  if (!stored) return [`${at}: not stored`]
  const template = stored['spec'].template
  const annotations = (template.metadata?.annotations ?? {}) as Record<string, string>
  const problems: string[] = []
  const expect = (what: string, actual: unknown, wanted: unknown) => {
    if (JSON.stringify(actual) !== JSON.stringify(wanted))
      problems.push(`${at}: ${what} ${JSON.stringify(actual)}, not ${JSON.stringify(wanted)}`)
  }
  expect('revision', annotations[REVISION], String(revision))
  expect('checksum', annotations[CHECKSUM], server.checksum)
  expect('generation', annotations[GENERATION], String(server.generation))
  const proxyContainer = (template.spec.containers as Any[]).find((c) => c['name'] === 'toolhive')
  const entries = ((proxyContainer?.['env'] ?? []) as Any[]).filter(
    (entry) => entry['name'] === 'THV_MCPSERVER_GENERATION',
  )
  expect('generation env', entries, [generationEnvEntry()])
  // The API server defaults it to 30 as well: asserted so a change on either side is seen.
  expect('terminationGracePeriodSeconds', template.spec.terminationGracePeriodSeconds, 30)
  expect('replicas', stored['spec'].replicas, server.stdio ? 1 : replicasWritten(index))
  return problems
}

async function assertInvariants(t: Test, revision: number): Promise<void> {
  const stored = await storedDeployments()
  const problems = servers.flatMap((server, i) =>
    problemsOf(server, i, stored.get(`${server.namespace}/${server.name}`), revision),
  )
  t.equal(problems.length, 0, `every stored Deployment holds the invariants (${SERVERS} checked)`)
  if (problems.length > 0) t.comment(problems.slice(0, 10).join('\n'))
}

/** The service's fallback log lines: at least one, with its count, and not more than every 10 s. */
function fallbackLogLines(text: string): { time: number; fallbacks: unknown }[] {
  const lines: { time: number; fallbacks: unknown }[] = []
  for (const line of text.split('\n')) {
    if (!line.includes(FALLBACK_LOG)) continue
    try {
      const entry = JSON.parse(line) as { time?: unknown; fallbacks?: unknown }
      lines.push({ time: Number(entry.time), fallbacks: entry.fallbacks })
    } catch {
      // not a JSON line
    }
  }
  return lines
}

let service: RunningAdmission = env.admission

await t.test(
  "today's behaviour: every read delayed, the operator named without its namespace",
  async (t) => {
    proxy.set(EVERY_READ)
    proxy.resetCounts()
    const { ms, refused } = await burst(operator, 1).finally(() => {
      proxy.set(NO_DELAY)
    })
    t.ok(refused.length > 0, 'operator writes are refused')
    t.equal(
      refused.filter((each) => each.status === 503 && IN_BAND.test(each.message)).length,
      refused.length,
      'every refusal in-band: 503, naming the read that missed the deadline',
    )
    t.comment(
      `every read delayed ${DELAY_MS} ms, name-only setting: ${refused.length} of ${SERVERS} operator writes refused, burst ${ms} ms (${summary(refused)}); proxy ${JSON.stringify(proxy.counts())}`,
    )
    t.equal(await service.metric(FALLBACKS), 0, 'a name alone never falls back')
  },
)

await t.test('the service restarted with the operator namespace/name', async (t) => {
  const next = await env.startAdmission({
    credentials: async () => kubeconfig,
    args: [`--operator-service-account=${OPERATOR_ACCOUNT.namespace}/${OPERATOR_ACCOUNT.name}`],
  })
  await env.registerWebhooks(next)
  await service.stop()
  service = next
  t.pass('the webhooks call the new instance')
})

await t.test('no delay: no operator write refused', async (t) => {
  const before = await service.metric(FALLBACKS, { kind: 'MCPServer' })
  const { ms, refused } = await burst(operator, 2)
  t.equal(refused.length, 0, `no operator write refused (${summary(refused)})`)
  const fallbacks = (await service.metric(FALLBACKS, { kind: 'MCPServer' })) - before
  t.comment(
    `burst of ${SERVERS} operator writes, ${IN_FLIGHT} in flight, no delay: ${ms} ms (${fallbacks} fallbacks: reads that missed the deadline on their own)`,
  )
})

await t.test('every read delayed: no operator write refused', async (t) => {
  const logFrom = (await readFile(service.process.logFile, 'utf8')).length
  const before = await service.metric(FALLBACKS, { kind: 'MCPServer' })
  const started = Date.now()
  proxy.set(EVERY_READ)
  proxy.resetCounts()
  const { ms, refused } = await burst(operator, 3).finally(() => {
    proxy.set(NO_DELAY)
  })
  t.equal(refused.length, 0, `no operator write refused (${summary(refused)})`)
  t.comment(
    `every read delayed ${DELAY_MS} ms, namespace/name setting: ${refused.length} of ${SERVERS} refused, burst ${ms} ms; proxy ${JSON.stringify(proxy.counts())}`,
  )
  const fallbacks = (await service.metric(FALLBACKS, { kind: 'MCPServer' })) - before
  t.ok(fallbacks >= SERVERS, `${FALLBACKS}{kind="MCPServer"} up by ${fallbacks} ≥ ${SERVERS}`)
  await assertInvariants(t, 3)

  const lines = fallbackLogLines((await readFile(service.process.logFile, 'utf8')).slice(logFrom))
  const elapsed = Date.now() - started
  t.ok(
    lines.some((line) => typeof line.fallbacks === 'number' && line.fallbacks > 0),
    'an info line gives the count',
  )
  t.ok(
    lines.length <= Math.floor(elapsed / 10_000) + 1,
    `at most one line every 10 s (${lines.length} in ${elapsed} ms)`,
  )
})

await t.test('10 % of the reads delayed: no operator write refused', async (t) => {
  const before = await service.metric(FALLBACKS, { kind: 'MCPServer' })
  proxy.set(TENTH_OF_READS)
  proxy.resetCounts()
  const { ms, refused } = await burst(operator, 4).finally(() => {
    proxy.set(NO_DELAY)
  })
  t.equal(refused.length, 0, `no operator write refused (${summary(refused)})`)
  const fallbacks = (await service.metric(FALLBACKS, { kind: 'MCPServer' })) - before
  t.ok(fallbacks > 0, 'the writes whose reads were delayed fell back')
  t.comment(
    `10 % of reads delayed ${DELAY_MS} ms: ${refused.length} of ${SERVERS} refused, ${fallbacks} fallbacks, burst ${ms} ms; proxy ${JSON.stringify(proxy.counts())}`,
  )
  await assertInvariants(t, 4)
})

await t.test('under the delay, what the fallback does not cover is refused in-band', async (t) => {
  // A generation above 1 on server 2, stored with no delay, to lower afterwards.
  const lowered = servers[2]!
  const serverPath = `/apis/toolhive.stacklok.dev/v1beta1/namespaces/${lowered.namespace}/mcpservers/${lowered.name}`
  for (const port of [8090, 8091])
    must(
      await admin.send(
        'PATCH',
        serverPath,
        { spec: { proxyPort: port } },
        'application/merge-patch+json',
      ),
      'MCPServer spec change',
    )
  const bumped = { ...lowered, generation: 3 }
  const rewritten = must(
    await sendUntilAdmitted(
      operator,
      'PUT',
      deploymentPath(bumped),
      deploymentOf(bumped, { revision: 5 }),
    ),
    'the Deployment at generation 3',
  )
  t.equal(
    rewritten['spec'].template.metadata.annotations[GENERATION],
    '3',
    'the Deployment stored at generation 3 (no delay)',
  )

  proxy.set(EVERY_READ)
  try {
    const other = await admin.send(
      'PUT',
      deploymentPath(servers[0]!),
      deploymentOf(servers[0]!, { revision: 5 }),
    )
    t.equal(other.status, 503, 'another writer: refused, 503')
    t.match(messageOf(other), 'cannot read', 'naming the read')
    t.match(messageOf(other), 'no answer before the deadline', 'and why')

    const v033 = await operator.send(
      'PUT',
      deploymentPath(servers[1]!),
      deploymentOf(servers[1]!, { revision: 5 }, [CHECKSUM]),
    )
    t.equal(v033.status, 503, 'an operator write without the checksum annotation: refused, 503')
    t.match(messageOf(v033), IN_BAND, 'in-band, naming the read')
    t.match(messageOf(v033), CHECKSUM, 'naming the annotation it lacks')

    const lower = await operator.send(
      'PUT',
      deploymentPath(bumped),
      deploymentOf(bumped, { revision: 6, generation: 2 }),
    )
    t.equal(lower.status, 503, 'an operator write lowering the generation: refused, 503')
    t.match(messageOf(lower), IN_BAND, 'in-band, naming the read')
    t.match(messageOf(lower), `lowers ${GENERATION} from 3 to 2`, 'and the generations')
  } finally {
    proxy.set(NO_DELAY)
  }
})

await t.test('the fallback is recorded on the write in the audit log', async (t) => {
  const event = await waitFor(
    'an audit event with the fallback annotation',
    async () =>
      (await env.auditEvents()).find(
        (each) =>
          each.verb === 'update' &&
          each.objectRef?.resource === 'deployments' &&
          each.impersonatedUser?.username === OPERATOR_USER &&
          each.annotations?.[FALLBACK_AUDIT_KEY] !== undefined,
      ),
    { timeoutMs: 10_000, intervalMs: 500 },
  ).catch(() => undefined)
  t.ok(event, `an operator update carries ${FALLBACK_AUDIT_KEY}`)
})

await t.test('the same burst with the webhooks off', async (t) => {
  await env.unregisterWebhooks()
  const { ms, refused } = await burst(operator, 7)
  t.equal(refused.length, 0, `no write refused (${summary(refused)})`)
  t.comment(`burst of ${SERVERS} operator writes, ${IN_FLIGHT} in flight, no webhook: ${ms} ms`)
})
