/**
 * What `startServer` listens on and how it shuts down, in its own module: start-up problems
 * (startup-problem.ts) name these settings, and the server's modules import those problems.
 */

export interface ServerConfig {
  readonly host: string
  readonly port: number
  readonly probeHost: string
  readonly probePort: number
  readonly certDir: string
  readonly certPollIntervalMs: number
  /** Time between turning unready and closing the listener, for endpoints to stop routing here. */
  readonly shutdownDelayMs: number
  /** How long in-flight requests may take to finish before connections are cut. */
  readonly drainTimeoutMs: number
  /** Idle keep-alive; longer than the API server's 90 s pool timeout so it closes first. */
  readonly keepAliveTimeoutMs: number
  /**
   * PEM file of the CA that signs the API server's client certificate. When set, every client
   * must present a certificate it signed (the API server's webhook client configuration).
   */
  readonly clientCaFile?: string | undefined
}
