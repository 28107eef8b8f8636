/** The root logger: JSON lines (pino) on stderr-free stdout, one instance passed down. */

import { pino } from 'pino'
import type { Logger, LevelWithSilent } from 'pino'
import type { Writable } from 'node:stream'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

export function createLogger(level: LevelWithSilent, destination: Writable): Logger {
  return pino(
    {
      level,
      base: { service: 'mcp-admission' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  )
}
