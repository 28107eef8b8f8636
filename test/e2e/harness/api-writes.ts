/**
 * Writes counted where they happen: the API server's own `apiserver_request_total`, updates,
 * patches and server-side applies by resource and subresource. A watch cannot count them: a no-op UPDATE (a writer sends
 * an object, a webhook turns it back into what is stored) stores nothing and sends no watch event,
 * yet it is a request, the webhook's live reads and another reconcile, every time
 * (docs/enforcement.md#never-a-fight-with-the-operator). Pure helpers (`writesIn`, `difference`,
 * `increases`, `interceptedResources`) are exported beside the scrape.
 */

import https from 'node:https'
import type { ControlPlane } from './control-plane.ts'

/** `resource[.group][/subresource]` → writes served. */
export type WriteTally = Map<string, number>

/**
 * The metric's `verb` label for an update is the HTTP method, `PUT` (a create is `POST`); a
 * server-side apply is `APPLY`, other patches `PATCH`.
 */
const WRITE_VERBS = new Set(['PUT', 'PATCH', 'APPLY'])

/** The write requests in an `apiserver_request_total` exposition, by resource. */
export function writesIn(metricsText: string): WriteTally {
  const tally: WriteTally = new Map()
  for (const line of metricsText.split('\n')) {
    const match = /^apiserver_request_total\{([^}]*)\}\s+(\S+)/.exec(line)
    if (!match) continue
    const labels = Object.fromEntries(
      [...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, key, value]) => [key, value]),
    )
    if (!WRITE_VERBS.has(labels['verb'] ?? '')) continue
    const group = labels['group'] ? `.${labels['group']}` : ''
    const sub = labels['subresource'] ? `/${labels['subresource']}` : ''
    const key = `${labels['resource'] ?? '?'}${group}${sub}`
    tally.set(key, (tally.get(key) ?? 0) + Number(match[2]))
  }
  return tally
}

/** What `after` counted beyond `before`, leaving out resources with no writes between them. */
export function difference(after: WriteTally, before: WriteTally): WriteTally {
  const delta: WriteTally = new Map()
  for (const [key, count] of after) {
    const added = count - (before.get(key) ?? 0)
    if (added > 0) delta.set(key, added)
  }
  return delta
}

/** Resources written more often in `measured` than in `baseline`, beyond their slack. */
export function increases(
  measured: WriteTally,
  baseline: WriteTally,
  slack: (resource: string, baseline: number) => number,
): string[] {
  return [...measured]
    .filter(([key, count]) => {
      const before = baseline.get(key) ?? 0
      return count > before + slack(key, before)
    })
    .map(([key, count]) => `${key}: ${baseline.get(key) ?? 0} → ${count}`)
}

type WebhookRule = { apiGroups?: string[]; resources?: string[] }

/**
 * The tally keys of every resource the rendered webhook configurations send to mcp-admission:
 * the only writes its webhooks can change, so the only ones a mutation can turn into a fight.
 */
export function interceptedResources(
  manifests: readonly { kind: string; [key: string]: unknown }[],
): Set<string> {
  const keys = new Set<string>()
  for (const manifest of manifests) {
    if (!manifest.kind.endsWith('WebhookConfiguration')) continue
    const webhooks = (manifest['webhooks'] ?? []) as { rules?: WebhookRule[] }[]
    for (const rule of webhooks.flatMap((webhook) => webhook.rules ?? [])) {
      for (const group of rule.apiGroups ?? [])
        for (const resource of rule.resources ?? []) {
          const [name, sub] = resource.split('/')
          keys.add(`${name}${group ? `.${group}` : ''}${sub ? `/${sub}` : ''}`)
        }
    }
  }
  return keys
}

export function describeTally(tally: WriteTally): string {
  const entries = [...tally].sort(([a], [b]) => a.localeCompare(b))
  const total = entries.reduce((sum, [, count]) => sum + count, 0)
  return `${total} (${entries.map(([key, count]) => `${key} ${count}`).join(', ') || 'none'})`
}

/** The API server's write counters now. */
export async function scrapeWrites(plane: ControlPlane): Promise<WriteTally> {
  return writesIn(await apiServerMetrics(plane))
}

function apiServerMetrics(plane: ControlPlane): Promise<string> {
  const options = {
    ca: plane.pki.caPem,
    cert: plane.pki.adminCertPem,
    key: plane.pki.adminKeyPem,
    timeout: 30_000,
  }
  return new Promise((resolve, reject) => {
    https
      .get(`${plane.server}/metrics`, options, (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('error', reject)
        response.on('end', () => {
          if (response.statusCode === 200) resolve(Buffer.concat(chunks).toString('utf8'))
          else reject(new Error(`GET /metrics: HTTP ${response.statusCode}`))
        })
      })
      .on('error', reject)
      .on('timeout', function (this: { destroy(error: Error): void }) {
        this.destroy(new Error('GET /metrics: timed out'))
      })
  })
}
