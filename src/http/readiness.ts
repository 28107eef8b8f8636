/** Readiness: every registered check passes and no shutdown has begun. */

export class Readiness {
  readonly #checks = new Map<string, () => boolean>()
  #shuttingDown = false

  /** Registers a named condition that must hold for the service to be ready. */
  require(name: string, check: () => boolean): void {
    this.#checks.set(name, check)
  }

  /** Marks the service as shutting down; it stays unready from then on. */
  beginShutdown(): void {
    this.#shuttingDown = true
  }

  /** The names of the checks that fail now (`shutting down` during shutdown). */
  failing(): string[] {
    const failing = [...this.#checks].filter(([, check]) => !check()).map(([name]) => name)
    return this.#shuttingDown ? ['shutting down', ...failing] : failing
  }
}
