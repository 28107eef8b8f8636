/**
 * A server-side dry-run CREATE, as `kubectl create --dry-run=server --validate=warn` sends it
 * (`?dryRun=All&fieldValidation=Warn`), straight to the test API server with the admin
 * certificate: one request per object rather than one kubectl process, so thousands of objects
 * take seconds. The answer is what kubectl would print from: the Status causes and the warnings.
 */

import https from 'node:https'
import type { ControlPlane } from './control-plane.ts'

export interface DryRunAnswer {
  readonly code: number
  /** `field: message` per Status cause (`<nil>` for none), or the Status message when it has none. */
  readonly causes: readonly string[]
  /** The API server's warnings (`unknown field "spec.replica"`). */
  readonly warnings: readonly string[]
}

interface Status {
  kind?: string
  message?: string
  details?: { causes?: { field?: string; message?: string }[] }
}

export function dryRunCreate(
  plane: ControlPlane,
  path: string,
  object: unknown,
): Promise<DryRunAnswer> {
  const body = JSON.stringify(object)
  return new Promise((resolve, reject) => {
    const request = https.request(
      `${plane.server}${path}?dryRun=All&fieldValidation=Warn`,
      {
        method: 'POST',
        ca: plane.pki.caPem,
        cert: plane.pki.adminCertPem,
        key: plane.pki.adminKeyPem,
        headers: { 'content-type': 'application/json' },
        timeout: 30_000,
      },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (c: Buffer) => chunks.push(c))
        response.once('end', () => {
          const code = response.statusCode ?? 0
          const warnings = warningsOf(response.headers.warning)
          const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Status
          if (code < 300) {
            resolve({ code, causes: [], warnings })
            return
          }
          const causes = answer.details?.causes ?? []
          resolve({
            code,
            causes:
              causes.length > 0
                ? causes.map((c) => `${c.field ?? ''}: ${c.message ?? ''}`)
                : [answer.message ?? ''],
            warnings,
          })
        })
      },
    )
    request.once('timeout', () => request.destroy(new Error('dry run timed out')))
    request.once('error', reject)
    request.end(body)
  })
}

/** The text of each `299 - "…"` warning header value (Go-quoted, several joined by `, `). */
function warningsOf(header: string | string[] | undefined): string[] {
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header]
  return values.flatMap((value) =>
    [...value.matchAll(/299 - ("(?:[^"\\]|\\.)*")/g)].map(
      (m) => JSON.parse(m[1] ?? '""') as string,
    ),
  )
}
