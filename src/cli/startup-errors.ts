/**
 * Start-up failures as one line that names the flag and its value (`--port 9443: address already
 * in use`), printed by program.ts with exit 2: a misconfigured pod says what to fix instead of
 * dumping a stack, and exit 1 stays "denied".
 */

import { ObjectFileError } from '../cluster/load-objects.ts'
import type { ServerConfig } from '../http/server.ts'
import { errorCode, fileErrorReason, messageOf, StartupProblem } from '../http/startup-problem.ts'
import { UsageError } from './io.ts'
import type { KubeconfigSetting } from './serve-config.ts'

/** The service could not start; the message is the whole line after `mcp-admission: `. */
export class StartupError extends Error {
  override name = 'StartupError'
}

/** The flag that sets each server setting (the environment variables mirror them). */
const FLAG_OF: Readonly<Record<keyof ServerConfig, string>> = {
  host: '--host',
  port: '--port',
  probeHost: '--probe-host',
  probePort: '--probe-port',
  certDir: '--cert-dir',
  certPollIntervalMs: '--cert-poll-interval',
  shutdownDelayMs: '--shutdown-delay',
  drainTimeoutMs: '--drain-timeout',
  keepAliveTimeoutMs: '--keep-alive-timeout',
  clientCaFile: '--client-ca',
}

/**
 * The error to report for a failed start. Errors that already print as one line (a bad flag, an
 * unreadable objects file) pass through; anything unforeseen still becomes one line.
 */
export function asStartupError(error: unknown): Error {
  if (
    error instanceof StartupError ||
    error instanceof UsageError ||
    error instanceof ObjectFileError
  ) {
    return error
  }
  if (error instanceof StartupProblem) {
    return new StartupError(`${FLAG_OF[error.setting]} ${error.value}: ${error.reason}`, {
      cause: error,
    })
  }
  return new StartupError(`cannot start: ${messageOf(error)}`, { cause: error })
}

/** A kubeconfig that cannot be read or parsed, named by the flag or variable that gave it. */
export function kubeconfigError(
  setting: KubeconfigSetting,
  path: string,
  error: unknown,
): StartupError {
  const reason =
    errorCode(error) === undefined
      ? `not a valid kubeconfig: ${messageOf(error)}`
      : fileErrorReason(error)
  return new StartupError(`${setting} ${path}: ${reason}`, { cause: error })
}
