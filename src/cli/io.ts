/** What CLI commands may touch of the process, passed in by main.ts so commands stay testable. */

import type { Readable, Writable } from 'node:stream'
import type { Backoff } from '../cluster/backoff.ts'

export interface CliIo {
  readonly stdout: Writable
  readonly stderr: Writable
  readonly stdin: Readable
  readonly env: Readonly<Record<string, string | undefined>>
  /** Keeps the process alive and calls `close` on SIGTERM/SIGINT (main.ts wires the signals). */
  readonly runUntilSignal: (close: () => Promise<void>) => void
  /** Where the pod's service account is mounted; the kubelet's path unless a test says otherwise. */
  readonly serviceAccountDir?: string
  /** How long a kubeconfig's exec plugin may run; EXEC_TIMEOUT_MS unless a test says otherwise. */
  readonly execTimeoutMs?: number
  /** Each step of opening a kubeconfig proxy's tunnel; kubectl's 10 s unless a test says otherwise. */
  readonly proxyStepTimeoutMs?: number
  /** The least wait before `audit` retries a 429; the reflector's unless a test says otherwise. */
  readonly throttleBackoff?: Backoff
}

/** Process exit codes of every command. */
export const EXIT = { ok: 0, denied: 1, usage: 2 } as const

/** An error the user caused (bad flag, unreadable file): printed without a stack, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}
