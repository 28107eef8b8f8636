/**
 * `node bench/view-peak.ts [servers…]` (default 10000 100000): the start-up peak of `serve`
 * reading its view from a cluster, against its RSS at ready. The cluster is a stand-in
 * (list-server.ts) serving the bench:cluster population in 500-object pages, so a size takes
 * seconds to a minute where bench:cluster takes ten; bench:cluster remains the figure of record.
 * The server runs as it ships (dist/, the Node flags of `npm start`), without the reconciler, and
 * reads the stand-in as a pod does (in-cluster config; root, for the mount namespace).
 * Peak is VmHWM and RSS is VmRSS from /proc/<pid>/status, read at the first /readyz 200. Then
 * every watch is expired (410 Gone) and the relist's peak is VmRSS sampled every 20 ms until each
 * collection is watched again: a relist holds the old view and the new list's kept objects at once.
 */

import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureDevCertificates } from '../src/http/dev-cert-dir.ts'
import { startListServer, viewCollections } from './list-server.ts'
import { memory } from './proc.ts'
import { startProduct } from './processes.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const MiB = 2 ** 20
const sizes = process.argv.slice(2).map(Number)
if (sizes.length === 0) sizes.push(10_000, 100_000)

async function heapUsedMiB(probePort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${probePort}/metrics`)).text()
  const match = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)
  return match ? Number(match[1]) / MiB : Number.NaN
}

execFileSync(
  process.execPath,
  [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
  { cwd: ROOT, stdio: 'inherit' },
)
const tmp = await mkdtemp(join(tmpdir(), 'mcp-admission-view-peak-'))
try {
  const certDir = join(tmp, 'certs')
  await ensureDevCertificates(certDir)
  // The stand-in serves with the development pair; the pod's service account trusts its CA.
  const read = (file: string) => readFile(join(certDir, file), 'utf8')
  const tls = { key: await read('tls.key'), cert: await read('tls.crt') }
  const serviceAccountDir = join(tmp, 'serviceaccount')
  await mkdir(serviceAccountDir)
  await writeFile(join(serviceAccountDir, 'token'), 'bench')
  await writeFile(join(serviceAccountDir, 'ca.crt'), await read('ca.crt'))
  const rows = [
    'servers  objects  ready s  peak MiB  RSS at ready MiB  heap used MiB  relist peak MiB  RSS after MiB',
  ]
  for (const servers of sizes) {
    const unknown = new Set<string>()
    const cluster = await startListServer(viewCollections(servers), tls, (path) =>
      unknown.add(path),
    )
    try {
      const product = await startProduct({
        certDir,
        args: ['--no-reconciler'],
        pod: { serviceAccountDir, server: cluster.url, workDir: join(tmp, 'pod') },
      })
      const { rss, peak } = memory(product.pid)
      const heap = await heapUsedMiB(product.probePort!)
      let relistPeak = 0
      const sampler = setInterval(() => {
        relistPeak = Math.max(relistPeak, memory(product.pid).rss)
      }, 20)
      await cluster.expireWatches()
      clearInterval(sampler)
      const after = memory(product.pid).rss
      relistPeak = Math.max(relistPeak, after)
      await product.stop()
      rows.push(
        [
          String(servers).padStart(7),
          String(cluster.objects).padStart(8),
          (product.readyMs / 1000).toFixed(1).padStart(8),
          (peak / MiB).toFixed(0).padStart(9),
          (rss / MiB).toFixed(0).padStart(17),
          heap.toFixed(0).padStart(14),
          (relistPeak / MiB).toFixed(0).padStart(16),
          (after / MiB).toFixed(0).padStart(14),
        ].join(' '),
      )
      process.stderr.write(`${rows.at(-1)}\n`)
      if (unknown.size > 0) process.stderr.write(`not served: ${[...unknown].join(', ')}\n`)
    } finally {
      cluster.close()
    }
  }
  process.stdout.write(`${rows.join('\n')}\n`)
} finally {
  await rm(tmp, { recursive: true, force: true })
}
