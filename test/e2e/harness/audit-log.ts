/**
 * The API server's audit log, for e2e files that assert on what the cluster records of a request:
 * above all the `auditAnnotations` an admission webhook returns, which the API server stores in the
 * event's `annotations` as `<webhook name>/<key>`. The Metadata level carries them; nothing of the
 * request or response bodies is logged.
 *
 * Only writes are logged (reads would be most of the file and no test asserts on them), each once,
 * when its response is complete: the annotations are all known only by then. The API server writes
 * the event as the request's handling ends, not in batches, but a client may see its answer a
 * moment before: a test waits for the event (`waitFor`), it does not read once.
 */

import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** The part of an audit.k8s.io/v1 Event the tests read. */
export interface AuditEvent {
  readonly auditID: string
  readonly stage: string
  readonly verb: string
  readonly requestURI: string
  readonly user?: { readonly username?: string }
  /** Who the request acted as (Impersonate-User): `user` stays the one who authenticated. */
  readonly impersonatedUser?: { readonly username?: string }
  readonly objectRef?: {
    readonly resource?: string
    readonly subresource?: string
    readonly namespace?: string
    readonly name?: string
    readonly apiGroup?: string
  }
  readonly responseStatus?: { readonly code?: number }
  readonly annotations?: Readonly<Record<string, string>>
}

/** Which request an event records: its verb and the object it wrote. */
export interface AuditQuery {
  readonly verb: string
  readonly resource: string
  readonly namespace?: string
  readonly name: string
}

export interface AuditLog {
  /** Writes the policy into the plane's directory; returns the flags that turn the log on. */
  readonly apiServerArgs: (dir: string) => Promise<string[]>
  /** Every event written so far, oldest first. */
  readonly events: () => Promise<AuditEvent[]>
}

/** Every write at Metadata level, once complete; reads not at all. */
const POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [{ level: 'None', verbs: ['get', 'list', 'watch'] }, { level: 'Metadata' }],
}

/** An audit log for one control plane; pass its `apiServerArgs` to the plane. */
export function auditLog(): AuditLog {
  let file: string | undefined
  return {
    async apiServerArgs(dir) {
      const policy = join(dir, 'audit-policy.json')
      file = join(dir, 'audit.log')
      await writeFile(policy, JSON.stringify(POLICY))
      return [
        `--audit-policy-file=${policy}`,
        `--audit-log-path=${file}`,
        '--audit-log-format=json',
        // The default, said out loud: each event written as it happens, where batch mode would
        // hold it for up to a second. The file rotates only past 100 MB, which no test writes.
        '--audit-log-mode=blocking',
      ]
    },
    async events() {
      if (file === undefined) throw new Error('the API server was started without the audit log')
      return parseAuditLog(await readFile(file, 'utf8').catch(() => ''))
    },
  }
}

/**
 * The events of the log's JSON lines. A last line without its newline is an event still being
 * written: left for the next read.
 */
export function parseAuditLog(text: string): AuditEvent[] {
  const lines = text.split('\n')
  lines.pop()
  return lines.filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as AuditEvent)
}

/** The last event recording `query`'s request, if it is logged yet. */
export function auditEventOf(
  events: readonly AuditEvent[],
  query: AuditQuery,
): AuditEvent | undefined {
  return events.findLast(
    (event) =>
      event.verb === query.verb &&
      event.objectRef?.resource === query.resource &&
      event.objectRef.name === query.name &&
      (query.namespace === undefined || event.objectRef.namespace === query.namespace),
  )
}
