/**
 * The root logger: JSON lines (pino) on stdout, one instance passed down. Every field of every
 * line, the message and child bindings included, passes through the one rendering point
 * (policy/messages/render.ts): secrets redacted, a value cut at 256 characters and a message at
 * 4 KiB, so a 1 MiB uid or a kubeconfig's `https://admin:pw@host/?token=…` is never written whole.
 */

import { pino } from 'pino'
import type { Logger, LevelWithSilent } from 'pino'
import type { Writable } from 'node:stream'
import { renderLogFields } from '../policy/messages/render.ts'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

export function createLogger(level: LevelWithSilent, destination: Writable): Logger {
  const logger = pino(
    {
      level,
      base: { service: 'mcp-admission' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        bindings: renderLogFields,
        log: renderLogFields,
      },
      serializers: {
        // Errors are already rendered (`{type, message, stack}`) by the log formatter.
        err: (error: unknown) => error,
        msg: (message: unknown) =>
          typeof message === 'string' ? renderLogFields({ msg: message })['msg'] : message,
      },
    },
    destination,
  )
  // pino formats only the root's bindings; a child's go straight to the line, so render them on
  // the way in. Children inherit this method (pino makes them with Object.create).
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the child's `this`
  const child = logger.child
  logger.child = function (this: Logger, bindings, options) {
    return child.call(this, renderLogFields(bindings), options)
  } as Logger['child']
  return logger
}
