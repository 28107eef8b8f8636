/**
 * A rollout of mcp-admission refuses no write (issue 35). Two replicas of `serve` behind the
 * shipped Service and webhook configurations (unmodified but for the caBundle), which the API
 * server reaches through the service network, whose endpoints are kept as the kubelet, the
 * endpoints controller and kube-proxy keep them: readiness polled as the chart's readinessProbe
 * says, a deleted pod out of the endpoints at once, open connections left where they are. A steady
 * stream of proxy Deployment and RunConfig ConfigMap writes (UPDATEs and CREATEs, at least 20 a
 * second, as cluster admin straight to the API server) runs throughout, and every write's outcome
 * is kept:
 *  1. a restart of one replica at a time with the chart's settings (pod deleted: endpoint removed;
 *     preStop sleep; SIGTERM: not ready, `--shutdown-delay`, drain, exit; the replacement becomes
 *     an endpoint when its probe passes; then the other) refuses not one write;
 *  2. SIGKILL of the replica holding the API server's connections: its endpoint stays until the
 *     probe has failed `failureThreshold` times, as in a cluster. How many writes fail, and for
 *     how long, is measured and bounded.
 */

import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { SERVE_SETTINGS } from '../../src/cli/serve-settings.ts'
import { createDevCertificates, writeDevCertificates } from '../../src/http/dev-certs.ts'
import { proxyDeployment, runConfigFor, workload } from '../helpers/proxy.ts'
import {
  NOT_PROBED,
  SERVICE_NAMESPACE,
  adminClient,
  afterProbe,
  mustKubectl,
  nextReady,
  renderBaseWith,
  startEnvironment,
  waitFor,
  waitUntilWebhooksAreCalled,
} from './harness/environment.ts'
import type {
  ApiAnswer,
  Endpoint,
  ReadinessProbe,
  RunningAdmission,
  ServiceEndpoints,
} from './harness/environment.ts'

type Any = Record<string, any>

const SERVICE = 'mcp-admission'
const CONTENT_CHECKSUM = 'toolhive.stacklok.dev/content-checksum'
const RUNCONFIG_CHECKSUM = 'toolhive.stacklok.dev/runconfig-checksum'
/** Writers, each one write every WRITE_PERIOD_MS: 25 writes a second offered. */
const WRITERS = 5
const WRITE_PERIOD_MS = 200
const MIN_RATE = 20
/** The stream stops by itself at either bound, whatever happens to the test. */
const STREAM_LIMIT = { ms: 300_000, writes: 10_000 }
/** Writes go on this long after the last event, so its after-effects are in the record. */
const SETTLE_MS = 3_000

const env = await startEnvironment(t, { serviceNetwork: true, service: false })
const { plane, kubectl, network } = env

// The install as `manifests/base` ships it (the chart with certificates.source=secret): the
// Deployment says how its pods are probed and stopped, the Service and webhook configurations are
// what the API server calls.
const shipped = parseAllDocuments(await renderBaseWith(kubectl, plane.dir, [])).map(
  (document) => document.toJS() as Any,
)
const podSpec = shipped.find((object) => object['kind'] === 'Deployment')!['spec'].template.spec
const container = podSpec.containers[0]
const readinessProbe = container.readinessProbe
/** The chart's readinessProbe, with the kubelet's defaults where it sets none. */
const probe: ReadinessProbe = {
  path: readinessProbe.httpGet.path,
  periodMs: (readinessProbe.periodSeconds ?? 10) * 1000,
  timeoutMs: (readinessProbe.timeoutSeconds ?? 1) * 1000,
  successThreshold: readinessProbe.successThreshold ?? 1,
  failureThreshold: readinessProbe.failureThreshold ?? 3,
}
const preStopMs = container.lifecycle.preStop.sleep.seconds * 1000
const gracePeriodMs = podSpec.terminationGracePeriodSeconds * 1000
// The chart passes no --shutdown-delay (checked below): a pod runs with the service's in-cluster
// default.
const shutdownDelay = SERVE_SETTINGS.shutdownDelay.default.cluster
const shutdownDelayMs = Number(/^(\d+)s$/.exec(shutdownDelay)?.[1] ?? NaN) * 1000
t.comment(
  `chart: readiness every ${probe.periodMs} ms, failureThreshold ${probe.failureThreshold}; preStop ${preStopMs} ms; --shutdown-delay ${shutdownDelay}; terminationGracePeriod ${gracePeriodMs} ms`,
)

// The serving pair for the Service's DNS name, as the chart's Secret holds it; every replica
// serves it.
const certDir = join(plane.dir, 'serving-certs')
const certificates = await createDevCertificates({
  hosts: [`${SERVICE}.${SERVICE_NAMESPACE}.svc`],
  validDays: 2,
})
await writeDevCertificates(certDir, certificates)
await mustKubectl(
  kubectl,
  ['apply', '--server-side', '-f', '-'],
  JSON.stringify(shipped.find((object) => object['kind'] === 'Service')),
)
const endpoints: ServiceEndpoints = await network.endpoints(
  kubectl,
  SERVICE_NAMESPACE,
  SERVICE,
  443,
  probe,
)

/** What happened when, for the timeline printed at the end. */
const marks: { at: number; what: string }[] = []
const mark = (what: string) => marks.push({ at: Date.now(), what })

interface Replica {
  readonly name: string
  readonly admission: RunningAdmission
  readonly endpoint: Endpoint
}

/**
 * A pod: `serve` with the shutdown settings the chart's pod has (the default `--shutdown-delay`,
 * `--drain-timeout` and `--keep-alive-timeout`), an endpoint of the Service from the moment it
 * listens, ready once its probe passes (up to a probe period after it is).
 */
async function startReplica(name: string): Promise<Replica> {
  mark(`${name}: started`)
  const admission = await env.startAdmission({
    certDir,
    args: [`--shutdown-delay=${shutdownDelay}`],
    waitUntilReady: false,
  })
  const endpoint = endpoints.add(
    name,
    Number(new URL(admission.admissionUrl).port),
    admission.probeUrl,
  )
  return { name, admission, endpoint }
}

async function untilReady(replica: Replica): Promise<void> {
  await waitFor(
    `${replica.name} to become a ready endpoint`,
    async () => (replica.endpoint.ready ? true : undefined),
    { timeoutMs: 60_000, intervalMs: 20, process: replica.admission.process },
  )
  mark(`${replica.name}: ready endpoint`)
}

const replicas = [await startReplica('a'), await startReplica('b')]
for (const replica of replicas) await untilReady(replica)

// The shipped webhook configurations, calling the Service, with the serving pair's CA.
const caBundle = Buffer.from(certificates.ca).toString('base64')
const webhookConfigurations = shipped
  .filter((object) => String(object['kind']).endsWith('WebhookConfiguration'))
  .map((configuration) => {
    for (const webhook of configuration['webhooks'] as Any[]) {
      if (webhook['clientConfig'].service?.name !== SERVICE)
        throw new Error(`webhook ${webhook['name']} does not call the Service`)
      webhook['clientConfig'].caBundle = caBundle
    }
    return configuration
  })
await mustKubectl(
  kubectl,
  ['apply', '--server-side', '-f', '-'],
  JSON.stringify({ apiVersion: 'v1', kind: 'List', items: webhookConfigurations }),
)
const namespace = await env.namespace('rollout')
await waitUntilWebhooksAreCalled(kubectl, namespace)

// One MCPServer per writer with its RunConfig ConfigMap and proxy Deployment, as the operator
// writes them; each writer rewrites and recreates only its own objects.
const inNamespace = <T extends Any>(object: T): T => ({
  ...object,
  metadata: { ...object['metadata'], namespace },
})
const owners: Any[] = []
for (let writer = 0; writer < WRITERS; writer++) {
  const name = `server-${writer}`
  const server = inNamespace(
    workload('MCPServer', name, {
      spec: { image: 'ghcr.io/example/server:1', transport: 'streamable-http' },
    }) as Any,
  )
  delete server['metadata'].uid
  delete server['metadata'].generation
  await mustKubectl(kubectl, ['create', '-f', '-'], JSON.stringify(server))
  owners.push(
    JSON.parse(
      await mustKubectl(kubectl, ['get', 'mcpserver', name, '-n', namespace, '-o', 'json']),
    ) as Any,
  )
}

const api = adminClient(plane, { maxSockets: 2 * WRITERS, timeoutMs: 30_000 })
t.teardown(() => {
  api.close()
})

type Operation = `${'CREATE' | 'UPDATE' | 'DELETE'} ${'ConfigMap' | 'Deployment'}`

/** One write and what came of it (times are `Date.now()`). */
interface Write {
  readonly writer: number
  readonly operation: Operation
  readonly start: number
  readonly end: number
  /** The HTTP status; 0 when the request itself failed. */
  readonly status: number
  readonly ok: boolean
  readonly message: string
}

const isAdmitted = (write: Write) => !write.operation.startsWith('DELETE')

/** The ConfigMap and Deployment of `owner`, written for the `cycle`-th time. */
function objectsOf(owner: Any, cycle: number) {
  const name = owner['metadata'].name as string
  const configMap = inNamespace(
    runConfigFor('MCPServer', name, JSON.stringify({ name, cycle })) as Any,
  )
  const deployment = inNamespace(
    proxyDeployment('MCPServer', name, {
      uid: owner['metadata'].uid,
      env: [{ name: 'CYCLE', value: String(cycle) }],
    }) as Any,
  )
  return {
    configMaps: `/api/v1/namespaces/${namespace}/configmaps`,
    deployments: `/apis/apps/v1/namespaces/${namespace}/deployments`,
    configMap,
    deployment,
    name,
  }
}

/** Whether the answer to an admitted write holds the webhook's stamp. */
function stamped(operation: Operation, body: Any): boolean {
  return operation.endsWith('ConfigMap')
    ? Boolean(body['metadata']?.annotations?.[CONTENT_CHECKSUM])
    : Boolean(body['spec']?.template?.metadata?.annotations?.[RUNCONFIG_CHECKSUM])
}

async function send(
  writer: number,
  operation: Operation,
  method: string,
  path: string,
  body?: unknown,
): Promise<Write> {
  const start = Date.now()
  let answer: ApiAnswer
  try {
    answer = await api.send(method, path, body)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    return { writer, operation, start, end: Date.now(), status: 0, ok: false, message }
  }
  const end = Date.now()
  const parsed = (() => {
    try {
      return JSON.parse(answer.body) as Any
    } catch {
      return {}
    }
  })()
  const success = answer.status >= 200 && answer.status < 300
  const ok = success && (operation.startsWith('DELETE') || stamped(operation, parsed))
  const message = ok
    ? ''
    : success
      ? 'admitted without the webhook’s stamp'
      : String(parsed['message'] ?? answer.body.slice(0, 300))
  return { writer, operation, start, end, status: answer.status, ok, message }
}

/**
 * The stream: WRITERS closed loops, each starting one admitted write every WRITE_PERIOD_MS (or
 * as soon as the last answered, when that took longer), cycling through UPDATE ConfigMap, UPDATE
 * Deployment, CREATE ConfigMap and CREATE Deployment (each after deleting the object).
 */
function startStream() {
  const writes: Write[] = []
  const started = Date.now()
  let stopped = false
  const running = () =>
    !stopped && Date.now() - started < STREAM_LIMIT.ms && writes.length < STREAM_LIMIT.writes
  const writer = async (index: number) => {
    const owner = owners[index]!
    // Whether each object is stored. A CREATE the webhook refused leaves none, and the writer
    // creates it again at its next write, as the operator's requeue does; like the operator, it
    // writes no Deployment while the RunConfig ConfigMap it failed to write is missing.
    const stored = { ConfigMap: true, Deployment: true }
    const answered = (write: Write) => write.status >= 200 && write.status < 300
    for (let cycle = 0; running(); cycle++) {
      const slot = Date.now()
      const { configMaps, deployments, configMap, deployment, name } = objectsOf(owner, cycle)
      const kind = !stored.ConfigMap || cycle % 2 === 0 ? 'ConfigMap' : 'Deployment'
      const [collection, object] =
        kind === 'ConfigMap' ? [configMaps, configMap] : [deployments, deployment]
      const path = `${collection}/${kind === 'ConfigMap' ? `${name}-runconfig` : name}`
      // Cycles 0 and 1 update, 2 and 3 delete and create again.
      if (stored[kind] && cycle % 4 >= 2) {
        const deleted = await send(index, `DELETE ${kind}`, 'DELETE', path)
        writes.push(deleted)
        if (answered(deleted) || deleted.status === 404) stored[kind] = false
      }
      if (stored[kind]) {
        const updated = await send(index, `UPDATE ${kind}`, 'PUT', path, object)
        writes.push(updated)
        if (updated.status === 404) stored[kind] = false
      } else {
        const created = await send(index, `CREATE ${kind}`, 'POST', collection, object)
        writes.push(created)
        stored[kind] = answered(created) || created.status === 409
      }
      await sleep(Math.max(0, slot + WRITE_PERIOD_MS - Date.now()))
    }
  }
  // Each writer's objects exist before its loop starts: the ConfigMap, then the Deployment.
  const loops = owners.map(async (owner, index) => {
    const { configMaps, deployments, configMap, deployment } = objectsOf(owner, -1)
    for (const [operation, path, body] of [
      ['CREATE ConfigMap', configMaps, configMap],
      ['CREATE Deployment', deployments, deployment],
    ] as const) {
      const write = await send(index, operation, 'POST', path, body)
      writes.push(write)
      if (!write.ok) throw new Error(`${operation} of writer ${index}: ${write.message}`)
    }
    await writer(index)
  })
  const done = Promise.all(loops)
  return {
    writes,
    started,
    running,
    async stop() {
      stopped = true
      await done
    },
  }
}

/**
 * When `replica` answered reviews from `since` on, and began and ended its shutdown, from its log
 * (at debug: a line per review; ISO times, to the millisecond).
 */
async function reviewsLogged(replica: Replica, since: number) {
  const lines = (await readFile(replica.admission.process.logFile, 'utf8')).split('\n')
  const entries = lines.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { time: string; msg: string }
      return [{ time: Date.parse(entry.time), msg: entry.msg }]
    } catch {
      return []
    }
  })
  const at = (msg: string) => entries.find((entry) => entry.msg === msg)?.time
  const reviews = entries.filter(
    (entry) =>
      entry.time >= since &&
      (entry.msg === 'admission allowed' || entry.msg === 'admission patched'),
  )
  return {
    reviews: reviews.map((entry) => entry.time),
    shutdownAt: at('shutting down: not ready, waiting before drain'),
    completeAt: at('shutdown complete'),
  }
}

const written = (writes: readonly Write[], from: number, to = Infinity) =>
  writes.filter((write) => write.start >= from && write.start < to && isAdmitted(write)).length
const seconds = (ms: number) => (ms / 1000).toFixed(1)
const describe = (write: Write, origin: number) =>
  `${write.operation} by writer ${write.writer} at +${write.start - origin} ms, answered +${write.end - origin} ms: ${write.status} ${write.message}`

t.test('the endpoint model: the kubelet’s result runs and round-robin', async (t) => {
  const probe = { successThreshold: 1, failureThreshold: 2 }
  const run = (results: boolean[]) =>
    results.reduce((state, ok) => afterProbe(state, ok, probe), NOT_PROBED).ready
  t.equal(run([]), false, 'not ready before a probe')
  t.equal(run([false, false, false]), false, 'not ready until a probe passes')
  t.equal(run([false, true]), true, 'ready on the first success (successThreshold 1)')
  t.equal(run([true, false]), true, 'one failure is not enough (failureThreshold 2)')
  t.equal(run([true, false, true, false]), true, 'failures must come in a row')
  t.equal(run([true, false, false]), false, 'two in a row are')
  const endpoints = [{ ready: true }, { ready: false }, { ready: true }]
  t.equal(nextReady(endpoints, -1)?.cursor, 0)
  t.equal(nextReady(endpoints, 0)?.cursor, 2, 'a not-ready endpoint is skipped')
  t.equal(nextReady(endpoints, 2)?.cursor, 0, 'and round again')
  t.equal(nextReady([{ ready: false }], 0), undefined, 'none ready: refused')
})

const stream = startStream()
t.teardown(() => stream.stop())
mark('stream started')

t.test(
  'a restart of one replica at a time, with the chart’s settings, refuses no write',
  async (t) => {
    t.notMatch(
      (container.args as string[]).join(' '),
      /shutdown-delay/,
      'the chart’s pods run with the default --shutdown-delay',
    )
    // Both replicas hold some of the API server's connections before the first goes.
    await waitFor(
      'the API server to hold connections to both replicas, and 50 writes done',
      async () =>
        replicas.every((replica) => replica.endpoint.open > 0) &&
        written(stream.writes, stream.started) >= 50
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 50 },
    )
    // One replica at a time, each replaced only once it is gone: one replica serves alone meanwhile,
    // as in a node drain under the PodDisruptionBudget (minAvailable 1). The Deployment's own
    // rollout (maxSurge 1, maxUnavailable 0) starts the replacement first, which is easier. The
    // preStop sleep is the chart's 5 s although the endpoint goes here at once (in a cluster it
    // covers kube-proxy's delay in dropping it): in it the API server goes on sending reviews on its
    // kept-alive connections to the terminating replica, as in a cluster, before SIGTERM.
    const began = Date.now()
    for (const [index, name] of [
      [0, 'a2'],
      [1, 'b2'],
    ] as const) {
      const old = replicas[index]!
      // The pod is deleted: the endpoints controller drops it from the ready endpoints at once,
      // then the kubelet runs its preStop hook, then sends SIGTERM; SIGKILL at the grace period.
      const deleted = Date.now()
      old.endpoint.terminate()
      const openAtDeletion = old.endpoint.open
      mark(`${old.name}: pod deleted, endpoint removed (open connections: ${openAtDeletion})`)
      t.ok(openAtDeletion > 0, `the API server held ${openAtDeletion} connections to ${old.name}`)
      await sleep(preStopMs)
      mark(`${old.name}: preStop done, SIGTERM`)
      const sigterm = Date.now()
      await old.admission.process.stop(gracePeriodMs - preStopMs)
      const exit = await old.admission.process.exited
      mark(`${old.name}: exited (${exit})`)
      t.equal(exit, 0, `${old.name} exited by itself, before the grace period's SIGKILL`)
      t.ok(
        Date.now() - deleted < gracePeriodMs,
        `${old.name} was gone ${Date.now() - deleted} ms after its deletion (grace period ${gracePeriodMs} ms)`,
      )
      // The API server keeps its connections to the old replica (conntrack keeps them there) and
      // uses them until the replica, once SIGTERM has come, answers with `Connection: close`; what
      // is still open when its listener closes is cut.
      const log = await reviewsLogged(old, deleted)
      const duringPreStop = log.reviews.filter((time) => time < sigterm).length
      const listenerClosed = (log.shutdownAt ?? NaN) + shutdownDelayMs
      const closes = old.endpoint.closes.filter((time) => time >= deleted)
      const cut = closes.filter((time) => time >= listenerClosed - 10).length
      t.comment(
        `${old.name}: ${openAtDeletion} connections open when its endpoint went; on them ${log.reviews.length} reviews after (${duringPreStop} during preStop, ${log.reviews.length - duringPreStop} after SIGTERM); ${closes.length - cut} closed before its listener closed, ${cut} idle ones cut by that close; SIGTERM to shutdown complete ${(log.completeAt ?? NaN) - sigterm} ms`,
      )
      // The drain is what moves the API server off: once the service has begun shutting down every
      // answer says `Connection: close`, so each connection it kept carries at most two more
      // reviews (one answered as the shutdown began, its response already without the header,
      // then one that closes it). Without the drain they go on for the whole delay (83 and 129 on
      // 3 and 6 connections in one run).
      const afterShutdown = log.reviews.filter((time) => time >= (log.shutdownAt ?? 0)).length
      t.ok(
        afterShutdown <= 2 * openAtDeletion,
        `${old.name}: ${afterShutdown} reviews after its shutdown began, on ${openAtDeletion} connections: at most two each`,
      )
      const replacement = await startReplica(name)
      await untilReady(replacement)
      replicas[index] = replacement
    }
    const ended = Date.now()
    await sleep(SETTLE_MS)
    const during = [...stream.writes]
    const failed = during.filter((write) => !write.ok)
    const count = written(during, stream.started)
    t.comment(
      `rolling restart: ${seconds(ended - began)} s; ${written(during, began, ended)} admitted writes during it, ${count} since the stream started`,
    )
    t.same(
      failed.map((write) => describe(write, stream.started)),
      [],
      `no write refused or failed (${count} admitted writes)`,
    )
  },
)

// What the API server does when a webhook's connection is reset or its dial refused (read in
// k8s.io/apiserver v0.37.2 admission/plugin/webhook/mutating/dispatcher.go, client-go v0.37.2
// rest/request.go and with_retry.go, Go 1.26 net/http/transport.go): the call is one
// `rest.Request.Do` of a POST. client-go retries a POST only on a 429 or 5xx answer carrying
// Retry-After, never on a connection error (its retry of resets and EOFs is for GETs), and Go's
// transport resends a request on a reused connection only when none of it was written (or the
// method is idempotent). So a review written to a connection the replica's death resets fails
// (`EOF`), as does one on a new connection kube-proxy still sends to the dead endpoint (refused),
// and with failurePolicy Fail the write is refused: `failed calling webhook …`.
t.test('SIGKILL of a replica: the writes sent to it fail until its probe fails', async (t) => {
  // The victim is the replica holding more of the API server's connections: the worse case.
  const victim = [...replicas].sort((a, b) => b.endpoint.open - a.endpoint.open)[0]!
  const openAtKill = victim.endpoint.open
  const routedBefore = victim.endpoint.connections
  const failedBefore = stream.writes.filter((write) => !write.ok).length
  const killed = Date.now()
  victim.admission.process.child.kill('SIGKILL')
  mark(`${victim.name}: SIGKILL (open connections: ${openAtKill})`)
  // Its endpoint stays until the kubelet's probe has failed failureThreshold times in a row.
  const limit = probe.periodMs * probe.failureThreshold + probe.timeoutMs
  await waitFor(
    `${victim.name}'s endpoint to go when its probe fails`,
    async () => (victim.endpoint.ready ? undefined : true),
    { timeoutMs: limit + 10_000, intervalMs: 20 },
  )
  const removed =
    endpoints.events.find((event) => event.endpoint === victim.name && event.event === 'not ready')
      ?.at ?? Date.now()
  mark(`${victim.name}: not ready, out of the endpoints`)
  const routedToDead = victim.endpoint.connections - routedBefore
  await sleep(SETTLE_MS)
  await stream.stop()
  mark('stream stopped')

  const after = stream.writes.filter((write) => write.end >= killed)
  const failed = after.filter((write) => !write.ok)
  t.equal(failedBefore, 0, 'nothing had failed before the kill')
  const first = Math.min(...failed.map((write) => write.start))
  const last = Math.max(...failed.map((write) => write.end))
  const window = failed.length > 0 ? last - first : 0
  t.comment(
    `SIGKILL: ${failed.length} of ${written(after, killed)} admitted writes from the kill on failed, ${failed.length > 0 ? `from +${first - killed} ms to +${last - killed} ms after it (${seconds(window)} s)` : 'none'}; endpoint removed ${removed - killed} ms after the kill; ${openAtKill} connections open at the kill, ${routedToDead} new ones routed to the dead replica`,
  )
  for (const write of failed.slice(0, 20)) t.comment(`  failed: ${describe(write, killed)}`)
  t.ok(
    removed - killed <= limit,
    `the endpoint went within period × failureThreshold + timeout (${limit} ms)`,
  )
  // Each connection to the dead replica fails at most one write: a reset or refused connection
  // is discarded by the API server's client, and a webhook call is made once.
  t.ok(
    failed.length <= openAtKill + routedToDead,
    `at most one failed write per connection it held or was routed (${openAtKill + routedToDead})`,
  )
  t.ok(failed.length <= MIN_RATE, `at most a second's worth of writes failed (${MIN_RATE})`)
  t.ok(
    failed.every((write) => write.start <= removed),
    'no write started after the endpoint went failed',
  )
  t.ok(
    window <= limit + 1_000,
    `the failures span at most the probe's detection time (${limit} ms) and a second`,
  )
})

t.test('the stream', async (t) => {
  await stream.stop()
  const { writes } = stream
  const admitted = writes.filter(isAdmitted)
  const elapsed = (Math.max(...writes.map((write) => write.end)) - stream.started) / 1000
  const rate = admitted.length / elapsed
  const byOperation = new Map<string, number>()
  for (const write of admitted)
    byOperation.set(write.operation, (byOperation.get(write.operation) ?? 0) + 1)
  t.comment(
    `${admitted.length} admitted writes in ${elapsed.toFixed(1)} s (${rate.toFixed(1)}/s: ${[...byOperation].map(([operation, count]) => `${operation} ${count}`).join(', ')}), ${writes.length - admitted.length} deletes`,
  )
  t.ok(rate >= MIN_RATE, `at least ${MIN_RATE} writes a second (${rate.toFixed(1)})`)
  t.ok(writes.length < STREAM_LIMIT.writes, 'the stream ended by the test, not by its bound')
  t.same(network.refused, [], 'the API server dialled nothing but the Service')
  t.equal(endpoints.unavailable, 0, 'never a connection with no endpoint ready')
  const origin = stream.started
  const timeline = [
    ...marks.map((entry) => ({ at: entry.at, what: entry.what })),
    ...endpoints.events.map((event) => ({
      at: event.at,
      what: `endpoint ${event.endpoint}: ${event.event}`,
    })),
  ].sort((a, b) => a.at - b.at)
  for (const entry of timeline)
    t.comment(`  ${seconds(entry.at - origin).padStart(6)} s  ${entry.what}`)
})
