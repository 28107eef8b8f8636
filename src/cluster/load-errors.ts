/** The object loader's errors: one line each, naming the file, never echoing raw input. */

import { getSystemErrorMessage } from 'node:util'
import { errorMessage, escapeControls, excerpt, printableLine } from '../policy/messages/render.ts'

/**
 * Thrown for unreadable or malformed object files; the message names the file and document. It
 * is one line whatever it quotes: a file name with a newline or an escape sequence is escaped.
 */
export class ObjectFileError extends Error {
  override name = 'ObjectFileError'
  constructor(message: string) {
    super(escapeControls(message))
  }
}

/** `PATH: no such file or directory`, `PATH: permission denied`: the system's words, no code. */
export function fileSystemError(path: string, error: unknown): ObjectFileError {
  const { errno, code } = error as NodeJS.ErrnoException
  const reason =
    typeof errno === 'number' ? getSystemErrorMessage(errno) : (code ?? errorMessage(error))
  // A path is cut as a denial cuts a value: however long, the reason after it stays visible.
  return new ObjectFileError(`${excerpt(path)}: ${printableLine(reason)}`)
}
