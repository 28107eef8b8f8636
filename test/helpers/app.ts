/** An admission app for `inject` tests, with its metrics. */

import { Writable } from 'node:stream'
import type { Logger, LevelWithSilent } from 'pino'
import { createLogger } from '../../src/cli/logger.ts'
import { createAdmission } from '../../src/admission/webhook.ts'
import type { Enforcement } from '../../src/admission/enforcement.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { buildAdmissionApp } from '../../src/http/app.ts'
import { createMetrics } from '../../src/metrics/metrics.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'

/**
 * The service's own logger (every field rendered by policy/messages/render.ts) keeping its JSON
 * lines in memory, for assertions on what is logged.
 */
export function memoryLogger(level: LevelWithSilent = 'debug'): {
  logger: Logger
  lines: () => Record<string, unknown>[]
} {
  const chunks: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'))
      callback()
    },
  })
  return {
    logger: createLogger(level, sink),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  }
}

export function testApp(
  objects: KubeObject[] = [],
  options: { readonly enforcement?: Enforcement } = {},
) {
  const metrics = createMetrics()
  const log = memoryLogger()
  const app = buildAdmissionApp({
    admission: createAdmission({ view: new MemoryView(objects), ...options }),
    logger: log.logger,
    metrics,
  })
  return { app, metrics, logLines: log.lines }
}
