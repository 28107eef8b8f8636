/**
 * A kubeconfig's current cluster and user (already loaded by `@kubernetes/client-node`) as the
 * credentials KubeApi takes, read as kubectl (client-go) reads them. The client applies the CA, a
 * client certificate, a static token, basic auth, impersonation and auth providers (OIDC); what it
 * does differently from kubectl is done here instead:
 * - `tokenFile` (which it does not read at all): read at start, a missing or empty file being an
 *   error, then again as client-go reads it (token-file.ts), so a long-running `serve` follows a
 *   rotated token. It wins over `token`, as in client-go.
 * - `exec`: our own bounded runner (exec-credential.ts), since the client's has no time limit,
 *   no KUBERNETES_EXEC_INFO and nothing that ends it at shutdown. As in client-go, a plugin is
 *   used only when the user has no token, token file, basic auth or client certificate.
 * - `proxy-url`: KubeApi tunnels through it (proxy-tunnel.ts); the client's agent is not used.
 * - `insecure-skip-tls-verify: true` with a CA is refused, as client-go refuses it.
 * - `certificate-authority`, `client-certificate`, `client-key`: read by the bounded reader
 *   (kubeconfig-files.ts), once at start so that a file that cannot work fails before anything
 *   listens, then for each request as the client read them before (so a rotated file is used);
 *   the client is handed a copy of the config that names no file.
 */

import type https from 'node:https'
import type { Cluster, KubeConfig, User } from '@kubernetes/client-node'
import { setBearerToken } from './cluster-credentials.ts'
import type { ClusterCredentials } from './cluster-credentials.ts'
import { ExecCredentialSource } from './exec-credential.ts'
import type { ExecClusterInfo, ExecConfig } from './exec-credential.ts'
import { readTlsFiles, tlsFilePaths } from './kubeconfig-files.ts'
import type { TlsFileContents, TlsFilePaths } from './kubeconfig-files.ts'
import { proxyName } from './proxy-tunnel.ts'
import { CachedTokenFile, readTrimmedFile } from './token-file.ts'
import type { TokenLogger } from './token-file.ts'

/** client-go's words (transport.TLSConfigFor), so a search for kubectl's error finds this one. */
export const INSECURE_WITH_CA =
  'specifying a root certificates file with the insecure flag is not allowed'

export interface KubeconfigUserOptions {
  /** The current user's `tokenFile`, absolute. */
  readonly tokenFile?: string | undefined
  /**
   * The current user's `exec`, already checked, and removed from the user `config` holds (or
   * the client would run the plugin itself).
   */
  readonly exec?: ExecConfig | undefined
  /** The environment an exec plugin inherits. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly execTimeoutMs?: number | undefined
  readonly logger?: TokenLogger | undefined
  /** Milliseconds on some monotonic clock, for the token file's schedule; tests pass their own. */
  readonly now?: (() => number) | undefined
}

/**
 * The current context's credentials, checked but not yet read: `start()` reads the token file and
 * runs the exec plugin once, so what cannot work fails before anything listens. An Error saying
 * what is wrong with the cluster or user.
 */
export function kubeConfigCredentials(
  config: KubeConfig,
  options: KubeconfigUserOptions = {},
): KubeconfigCredentials {
  const cluster = config.getCurrentCluster()
  if (cluster?.server === undefined) throw new Error('the kubeconfig has no current cluster')
  if (cluster.skipTLSVerify && (cluster.caFile || cluster.caData)) {
    const ca = cluster.caData ? 'certificate-authority-data' : 'certificate-authority'
    throw new Error(
      `cluster ${JSON.stringify(cluster.name)}: ${INSECURE_WITH_CA} (insecure-skip-tls-verify: true with ${ca})`,
    )
  }
  return new KubeconfigCredentials(config, cluster, readProxyUrl(cluster), options)
}

/**
 * `config` with its current cluster's and user's TLS files left out, for the client to apply the
 * rest (its read of a file is synchronous and unbounded). The `-data` forms stay: a file, read
 * here, is applied over them afterwards, as the client let a file win.
 */
function withoutTlsFiles(config: KubeConfig, cluster: Cluster, user: User | null): KubeConfig {
  // The client's class from the instance: importing it here would load the client (some 40 MiB)
  // for in-cluster credentials too.
  const copy = new (config.constructor as new () => KubeConfig)()
  copy.loadFromOptions({
    clusters: config.clusters.map((entry) =>
      entry === cluster ? { ...entry, caFile: undefined } : entry,
    ),
    users: config.users.map((entry) =>
      entry === user ? { ...entry, certFile: undefined, keyFile: undefined } : entry,
    ),
    contexts: config.contexts,
    currentContext: config.currentContext,
  })
  return copy
}

/** `proxy-url` as client-go takes it, less socks5; an Error that never shows a password. */
function readProxyUrl(cluster: Cluster): URL | undefined {
  const value = cluster.proxyUrl
  if (value === undefined || value === '') return undefined
  const named = `cluster ${JSON.stringify(cluster.name)}: proxy-url`
  let proxy: URL
  try {
    proxy = new URL(value)
  } catch {
    throw new Error(`${named}: not a URL`)
  }
  if (proxy.protocol === 'socks5:') {
    throw new Error(
      `${named} ${proxyName(proxy)}: SOCKS5 proxies are not supported; an HTTP or HTTPS proxy (CONNECT) is`,
    )
  }
  if (proxy.protocol !== 'http:' && proxy.protocol !== 'https:') {
    throw new Error(
      `${named}: unsupported scheme ${JSON.stringify(proxy.protocol.slice(0, -1))}, must be http or https`,
    )
  }
  return proxy
}

export class KubeconfigCredentials implements ClusterCredentials {
  readonly server: string
  readonly proxy: URL | undefined
  readonly #config: KubeConfig
  readonly #cluster: Cluster
  readonly #options: KubeconfigUserOptions
  /** The config the client applies: `#config` without the TLS files, which are read here. */
  readonly #client: KubeConfig
  readonly #tlsFiles: TlsFilePaths
  readonly #owners: { readonly cluster: string; readonly user: string }
  #tokenFile: CachedTokenFile | undefined
  #exec: ExecCredentialSource | undefined

  constructor(
    config: KubeConfig,
    cluster: Cluster,
    proxy: URL | undefined,
    options: KubeconfigUserOptions,
  ) {
    this.server = cluster.server
    this.proxy = proxy
    this.#config = config
    this.#cluster = cluster
    this.#options = options
    const user = config.getCurrentUser()
    this.#client = withoutTlsFiles(config, cluster, user)
    this.#tlsFiles = tlsFilePaths(cluster, user)
    this.#owners = {
      cluster: `cluster ${JSON.stringify(cluster.name)}`,
      user: `user ${JSON.stringify(user?.name ?? '')}`,
    }
  }

  /**
   * Reads the TLS files, then the token file, or runs the exec plugin, once; an Error saying why
   * it cannot (a KubeconfigFileError for a TLS file).
   */
  async start(): Promise<void> {
    const tls = await this.#readTlsFiles()
    const { tokenFile, exec } = this.#options
    if (tokenFile !== undefined) {
      const read = await readTrimmedFile(tokenFile)
      if ('problem' in read) throw new Error(`tokenFile ${read.problem}`)
      this.#tokenFile = new CachedTokenFile({
        file: tokenFile,
        token: read.text,
        what: 'the kubeconfig user token file',
        logger: this.#options.logger ?? { info: () => undefined, warn: () => undefined },
        now: this.#options.now,
      })
      return
    }
    if (exec === undefined || hasOtherCredentials(this.#config.getCurrentUser())) return
    this.#exec = new ExecCredentialSource({
      config: exec,
      env: this.#options.env ?? {},
      timeoutMs: this.#options.execTimeoutMs,
      cluster: exec.provideClusterInfo ? this.#clusterInfo(tls.ca) : { server: this.server },
    })
    await this.#exec.credential()
  }

  async applyTo(options: https.RequestOptions, signal?: AbortSignal): Promise<void> {
    const tls = await this.#readTlsFiles()
    await this.#client.applyToHTTPSOptions(options)
    if (tls.ca !== undefined) options.ca = tls.ca
    if (tls.cert !== undefined) options.cert = tls.cert
    if (tls.key !== undefined) options.key = tls.key
    // The client's agent would bypass ours (and its proxy support); KubeApi brings its own.
    delete options.agent
    if (this.#tokenFile) setBearerToken(options, await this.#tokenFile.token())
    else if (this.#exec) {
      const credential = await this.#exec.credential(signal)
      if (credential.token !== undefined) setBearerToken(options, credential.token)
      if (credential.cert !== undefined) options.cert = credential.cert
      if (credential.key !== undefined) options.key = credential.key
    }
  }

  async refresh(): Promise<void> {
    await (this.#tokenFile ?? this.#exec)?.refresh()
  }

  close(): void {
    this.#exec?.close()
  }

  /** Each TLS file the cluster and user name, read again (a rotated certificate is used). */
  #readTlsFiles(): Promise<TlsFileContents> {
    return readTlsFiles(this.#tlsFiles, this.#owners)
  }

  /** The cluster for KUBERNETES_EXEC_INFO, the CA file's contents inline as client-go sends it. */
  #clusterInfo(caFile: Buffer | undefined): ExecClusterInfo {
    const cluster = this.#cluster
    const ca = cluster.caData ?? caFile?.toString('base64')
    return {
      server: cluster.server,
      ...(ca ? { 'certificate-authority-data': ca } : {}),
      ...(cluster.tlsServerName ? { 'tls-server-name': cluster.tlsServerName } : {}),
      ...(cluster.skipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
      ...(cluster.proxyUrl ? { 'proxy-url': cluster.proxyUrl } : {}),
    }
  }
}

/** client-go uses an exec plugin only when nothing else identifies the user (exec.go). */
function hasOtherCredentials(user: User | null): boolean {
  if (!user) return false
  return Boolean(user.token || user.username || user.password || user.certData || user.certFile)
}
