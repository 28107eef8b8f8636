/**
 * The Go peer (bench/cluster/peer/, its main.go says what it is): built from the Go module proxy
 * with the machine's Go into a cache outside the repository, keyed by a hash of its sources (as
 * the e2e suite caches its builds), and started against the bench's API server as mcp-admission's
 * service account (a kubeconfig with its token), with development certificates of its own. It is
 * handed to the measurements as a RunningAdmission, so they drive both services the same way.
 */

import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, readdir, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createDevCertificates, writeDevCertificates } from '../../src/http/dev-certs.ts'
import {
  cacheRoot,
  goVersion,
  isFile,
  run,
  startProcess,
  sumSeries,
} from '../../test/e2e/harness/environment.ts'
import type { Environment, RunningAdmission } from '../../test/e2e/harness/environment.ts'
import { freePort } from '../../test/helpers/ports.ts'

/** The peer's process name (its binary's), as the CPU meter and the report name it. */
export const PEER = 'go-peer'

const SOURCES = fileURLToPath(new URL('peer/', import.meta.url))

/** The peer's binary, built once per source hash and Go version. */
export async function ensurePeer(log: (line: string) => void): Promise<string> {
  const hash = createHash('sha256')
  for (const file of (await readdir(SOURCES)).sort()) {
    hash.update(file).update(await readFile(join(SOURCES, file)))
  }
  const go = await goVersion()
  const dir = join(cacheRoot('bench-peer'), `${hash.digest('hex').slice(0, 16)}-${go}`)
  const binary = join(dir, PEER)
  if (await isFile(binary)) return binary
  await mkdir(dir, { recursive: true })
  log(`building the Go peer with ${go} into ${dir}`)
  // -mod=readonly: go.sum must already hold every module, so a build never edits the sources.
  await run('go', ['build', '-trimpath', '-mod=readonly', '-o', `${binary}.tmp`, '.'], SOURCES, log)
  await rename(`${binary}.tmp`, binary)
  return binary
}

/**
 * Starts the peer; returns once it was spawned (the caller waits for /readyz). It reads the cluster
 * through `reading.kubeconfig` when given (else mcp-admission's service-account kubeconfig), with
 * `reading.env` added to its environment.
 */
export async function startPeer(
  env: Environment,
  binary: string,
  reading: {
    readonly kubeconfig?: string
    readonly env?: Readonly<Record<string, string>>
  } = {},
): Promise<RunningAdmission> {
  const dir = await mkdtemp(join(env.plane.dir, `${PEER}-`))
  const certDir = join(dir, 'certs')
  const certificates = await createDevCertificates({ hosts: ['127.0.0.1'], validDays: 2 })
  await writeDevCertificates(certDir, certificates)
  const [port, probePort] = [await freePort(), await freePort()]
  const kubeconfig = reading.kubeconfig ?? (await env.serviceAccountKubeconfig())
  const args = [`--port=${port}`, `--probe-address=127.0.0.1:${probePort}`, `--cert-dir=${certDir}`]
  const peer = startProcess(PEER, binary, args, {
    logFile: join(dir, `${PEER}.log`),
    env: { ...process.env, ...reading.env, KUBECONFIG: kubeconfig },
  })
  env.onStop(() => peer.stop())
  const probeUrl = `http://127.0.0.1:${probePort}`
  const probe = async (path: string) => {
    const response = await fetch(`${probeUrl}${path}`)
    return { status: response.status, body: await response.text() }
  }
  return {
    process: peer,
    admissionUrl: `https://127.0.0.1:${port}`,
    probeUrl,
    caPem: certificates.ca,
    certDir,
    probe,
    metric: async (name, labels = {}) => sumSeries((await probe('/metrics')).body, name, labels),
    stop: () => peer.stop(),
  }
}
