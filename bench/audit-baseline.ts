/**
 * `node bench/audit-baseline.ts KUBECONFIG PAGE_SIZE`: the least an audit can do, which
 * bench/audit.ts measures beside `mcp-admission audit`: read the kubeconfig as the product does,
 * then page through exactly the lists the audit reads (audit-lists.ts) with the product's
 * own client (KubeApi: same agent, TLS and JSON.parse), keeping nothing. Prints the items per
 * list as JSON.
 */

import { loadKubeconfigCredentials } from '../src/cli/kubeconfig.ts'
import { KubeApi } from '../src/cluster/kube-api.ts'
import { AUDIT_LISTS } from './audit-lists.ts'

const [file, pageSize] = process.argv.slice(2)
if (file === undefined || pageSize === undefined)
  throw new Error('usage: audit-baseline.ts KUBECONFIG PAGE_SIZE')
const credentials = await loadKubeconfigCredentials({
  kind: 'kubeconfig',
  files: [file],
  setting: '--kubeconfig',
  value: file,
})
// As the audit allows a page (REQUEST_TIMEOUT_MS in src/cli/audit.ts).
const api = new KubeApi(credentials, { requestTimeoutMs: 30_000 })
const counts: Record<string, number> = {}
for (const { path, labelSelector } of AUDIT_LISTS) {
  let items = 0
  let token: string | undefined
  do {
    const page = (await api.get(path, { limit: pageSize, continue: token, labelSelector })) as
      { items?: unknown[]; metadata?: { continue?: string } } | undefined
    if (page === undefined) throw new Error(`GET ${path}: 404`)
    items += page.items?.length ?? 0
    token = page.metadata?.continue === '' ? undefined : page.metadata?.continue
  } while (token !== undefined)
  counts[`${path}${labelSelector === undefined ? '' : `?labelSelector=${labelSelector}`}`] = items
}
api.close()
process.stdout.write(`${JSON.stringify(counts)}\n`)
