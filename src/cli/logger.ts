/**
 * The root logger: JSON lines (pino) on stdout, one instance passed down. Every field of every
 * line, the message and child bindings included, passes through the one rendering point
 * (policy/messages/render.ts): secrets redacted, a value cut at 256 characters and a message at
 * 4 KiB, so a 1 MiB uid or a kubeconfig's `https://admin:pw@host/?token=…` is never written whole.
 * Errors, under any field, go through pino's own serializer (type, message with its causes, own
 * properties such as `code`); their stack is written only when debug lines are.
 */

import { pino } from 'pino'
import type { Logger, LevelWithSilent } from 'pino'
import type { Writable } from 'node:stream'
import { renderLogFields } from '../policy/messages/render.ts'
import type { ErrorFields } from '../policy/messages/render.ts'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

export function createLogger(level: LevelWithSilent, destination: Writable): Logger {
  const errorFields: ErrorFields = (error) => {
    const { stack, ...fields } = pino.stdSerializers.err(error)
    return logger.isLevelEnabled('debug') ? { ...fields, stack } : fields
  }
  const render = (fields: Record<string, unknown>) => renderLogFields(fields, errorFields)
  const logger: Logger = pino(
    {
      level,
      base: { service: 'mcp-admission' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        bindings: render,
        log: render,
      },
      serializers: {
        // Errors are already serialized and rendered by the log formatter.
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
    return child.call(this, render(bindings), options)
  } as Logger['child']
  return logger
}
