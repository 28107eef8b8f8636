/**
 * `mcp-admission audit`: the cluster as it is, checked now. Every ToolHive object of the kinds the
 * cluster serves, every RunConfig ConfigMap and every proxy Deployment (the objects the webhooks
 * are sent: the same label selectors) is admitted through the service's own pipeline (admit.ts)
 * as if written now, and reported: would be denied, would be patched, warned, or clean; an item of
 * a list that is not an object as stored is reported as an error, never audited as one.
 *
 * - ToolHive objects are admitted as a CREATE, so no error is forgiven because it was already
 *   stored; ConfigMaps and Deployments as an UPDATE of the stored object to itself (the way their
 *   writer rewrites them, which keeps the rule that a stamped generation never goes down).
 * - What the rules read (owners, webhook configs, RunConfig checksums) is kept as the service's
 *   cache keeps it, trimmed; everything else is read a page at a time and dropped.
 * - Read only: get and list, as the service's own account or a person's.
 * - It always ends: each request within `--request-timeout` (60 s), body included; every list
 *   within 10,000 pages (list-pages.ts); a 429 waited out at most 10 times (throttled-reads.ts);
 *   and, given `--timeout`, the whole audit within it, or exit 2 saying what it was reading.
 */

import { createDecide } from '../admission/decide.ts'
import { KubeApi } from '../cluster/kube-api.ts'
import type { KubeApiError } from '../cluster/kube-api.ts'
import { waitingOutThrottling } from '../cluster/throttled-reads.ts'
import { discoverServedKinds } from '../cluster/kind-discovery.ts'
import { MemoryView } from '../cluster/memory-view.ts'
import { LIVE_ONLY_RESOURCES, apiVersionOf } from '../cluster/resources.ts'
import type { ViewResource } from '../cluster/resources.ts'
import type { MalformedItem } from '../cluster/list-pages.ts'
import { trimForView } from '../cluster/trim.ts'
import { TOOLHIVE_KIND_TABLE } from '../policy/kinds.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { RUNCONFIG_COMPONENTS, RUNCONFIG_COMPONENT_LABEL } from '../policy/names.ts'
import { admit } from './admit-object.ts'
import { AuditSummary, findingOf, malformedFinding } from './audit-findings.ts'
import { auditWriter } from './audit-output.ts'
import type { AuditFinding } from './audit-findings.ts'
import type { AuditOutput } from './audit-output.ts'
import { clusterCredentials, eachPage, unreachable } from './cluster-command.ts'
import { EXIT, UsageError } from './io.ts'
import type { CliIo } from './io.ts'
import { auditProgress } from './audit-progress.ts'

/** A duration as given on the command line (quoted back in errors) and in milliseconds. */
export interface GivenDuration {
  readonly text: string
  readonly ms: number
}

interface AuditOptions {
  readonly kubeconfig?: string | undefined
  readonly output: AuditOutput
  /** `--cluster-name`: labels the reports and is in each result's properties. */
  readonly clusterName?: string | undefined
  /** Each request's limit, from its first byte sent to its answer's last byte received. */
  readonly requestTimeout: GivenDuration
  /** The whole audit's, if given: none by default, as a cluster of any size is read to its end. */
  readonly timeout?: GivenDuration | undefined
}

/**
 * kubectl's own has none; a page of 500 large objects over a slow link (a laptop through a VPN or
 * a proxy) takes far longer than an admission-time read may, and a minute is plenty for it.
 */
export const AUDIT_REQUEST_TIMEOUT = '60s'

/** A wait for a 429 this long or longer is said on standard error. */
const NOTICED_WAIT_MS = 1_000

/** The selectors of the webhooks' objectSelectors: what they are sent is what is audited. */
const RUNCONFIG_SELECTOR = `${RUNCONFIG_COMPONENT_LABEL} in (${RUNCONFIG_COMPONENTS.join(',')})`
const PROXY_SELECTOR = 'toolhive=true'

export async function auditCommand(options: AuditOptions, io: CliIo): Promise<number> {
  const deadline = runDeadline(options.timeout)
  const credentials = await clusterCredentials('audit', options.kubeconfig, io)
  const api = new KubeApi(credentials, {
    requestTimeoutMs: options.requestTimeout.ms,
    wholeRequestTimeoutMs: options.requestTimeout.ms,
    proxyStepTimeoutMs: io.proxyStepTimeoutMs,
  })
  const progress = auditProgress(io.stderr)
  // What is being read, for the line that says the audit ran out of time.
  let reading = 'API discovery'
  // A wait a person would notice is said on standard error (never in the report itself).
  const onWait = (_error: KubeApiError, waitMs: number) => {
    if (waitMs < NOTICED_WAIT_MS) return
    progress.done()
    io.stderr.write(
      `mcp-admission: ${credentials.server} is throttling reads (429): reading ${reading} again in ${Math.ceil(waitMs / 1000)} s\n`,
    )
  }
  const reads = waitingOutThrottling(api, {
    onWait,
    ...(io.throttleBackoff ? { backoff: io.throttleBackoff } : {}),
  })
  try {
    const served = await discoverServedKinds(reads, deadline.signal).catch((error: unknown) => {
      throw unreachable(credentials, 'read API discovery', error)
    })
    const view = new MemoryView([], { serves: (kind) => served.has(kind) })
    const decide = createDecide({ view })
    const writer = auditWriter(
      options.output,
      io.stdout,
      { now: new Date(), clusterName: options.clusterName },
      io.stderr,
    )
    const summary = new AuditSummary()
    const add = (finding: AuditFinding) => {
      summary.add(finding)
      writer.add(finding)
      progress.count(finding.subject.kind)
    }
    const report = (object: KubeObject, verdict: Parameters<typeof findingOf>[1]) => {
      add(findingOf(object, verdict))
    }
    // An item that is not an object as stored is reported, never audited as one nor dropped.
    const reportMalformed = (resource: ViewResource, malformed: readonly MalformedItem[]) => {
      for (const item of malformed)
        add(malformedFinding(apiVersionOf(resource), resource.kind, item))
    }
    const listing = (
      resource: ViewResource,
      selector: string | undefined,
      onPage: Parameters<typeof eachPage>[4],
    ) => {
      reading = `the list of ${resource.plural}`
      return eachPage(reads, credentials, resource, selector, onPage, deadline.signal)
    }
    // Webhook configs before the workloads that name them, workloads before their Deployments.
    const kinds = [...TOOLHIVE_KIND_TABLE].sort((a, b) => a.checkRank - b.checkRank)
    for (const { kind } of kinds) {
      const resource = served.get(kind)
      if (!resource) continue
      await listing(resource, undefined, async ({ objects, malformed }) => {
        reportMalformed(resource, malformed)
        for (const object of objects) view.put(trimForView(kind, object))
        for (const object of objects) report(object, await admit(decide, object, { namespace: '' }))
      })
    }
    for (const [resource, selector] of [
      [liveOnly('ConfigMap'), RUNCONFIG_SELECTOR],
      [liveOnly('Deployment'), PROXY_SELECTOR],
    ] as const) {
      await listing(resource, selector, async ({ objects, malformed }) => {
        reportMalformed(resource, malformed)
        for (const object of objects) {
          const verdict = await admit(decide, object, {
            namespace: '',
            operation: 'UPDATE',
            oldObject: object,
          })
          report(object, verdict)
          // Deployments read ConfigMaps; nothing reads a Deployment, so none is kept.
          if (resource.kind === 'ConfigMap') view.put(trimForView('ConfigMap', object))
        }
      })
    }
    progress.done()
    writer.end(summary)
    return summary.failing > 0 || summary.errors > 0 ? EXIT.denied : EXIT.ok
  } catch (error) {
    // Whatever a read said when the deadline cut it short, running out of time is the reason.
    if (options.timeout && deadline.signal.aborted)
      throw new UsageError(
        `audit ran out of time: --timeout ${options.timeout.text} passed while reading ${reading} from ${credentials.server}`,
      )
    throw error
  } finally {
    deadline.clear()
    progress.done()
    api.close()
  }
}

/** The whole run's deadline: a signal aborted when `timeout` passes, or never without one. */
function runDeadline(timeout: GivenDuration | undefined): {
  signal: AbortSignal
  clear: () => void
} {
  const controller = new AbortController()
  if (timeout === undefined) return { signal: controller.signal, clear: () => undefined }
  const timer = setTimeout(() => {
    controller.abort()
  }, timeout.ms)
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer)
    },
  }
}

function liveOnly(kind: 'ConfigMap' | 'Deployment'): ViewResource {
  const resource = LIVE_ONLY_RESOURCES.find((each) => each.kind === kind)
  if (!resource) throw new Error(`no resource for ${kind}`)
  return resource
}
