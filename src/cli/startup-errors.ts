/**
 * Start-up failures as one line that names the flag and its value (`--port 9443: address already
 * in use`), printed by program.ts with exit 2: a misconfigured pod says what to fix instead of
 * dumping a stack, and exit 1 stays "denied".
 */

import { ObjectFileError } from '../cluster/load-objects.ts'
import { StartupProblem } from '../http/startup-problem.ts'
import { errorMessage, excerpt } from '../policy/messages/render.ts'
import { UsageError } from './io.ts'
import type { ServerSettingNames } from './serve-config.ts'

/** The service could not start; the message is the whole line after `mcp-admission: `. */
export class StartupError extends Error {
  override name = 'StartupError'
}

/**
 * The error to report for a failed start. Errors that already print as one line (a bad flag, an
 * unreadable objects file) pass through; a server's problem is named by the flag or variable that
 * set the value (`names`, from the config); anything unforeseen still becomes one line.
 */
export function asStartupError(error: unknown, names: ServerSettingNames): Error {
  if (
    error instanceof StartupError ||
    error instanceof UsageError ||
    error instanceof ObjectFileError
  ) {
    return error
  }
  if (error instanceof StartupProblem) {
    // The value is cut as a denial cuts one: however long, the reason after it stays visible.
    return new StartupError(`${names[error.setting]} ${excerpt(error.value)}: ${error.reason}`, {
      cause: error,
    })
  }
  return new StartupError(`cannot start: ${errorMessage(error)}`, { cause: error })
}
