/**
 * What `mcp-admission audit -o json` reported (`{"findings": [...], "summary": [...]}`, every
 * object that is not clean and a count per kind), checked against what the stand-in holds: each
 * kind audited in full, and exactly the planted Deployments failing (a write now would change
 * them), nothing denied or warned.
 */

import type { ChildRun } from './child-run.ts'

interface Reported {
  readonly findings: readonly {
    readonly result: string
    readonly subject: { readonly kind: string; readonly namespace: string; readonly name: string }
  }[]
  readonly summary: readonly { readonly kind: string; readonly audited: number }[]
}

export interface AuditCheck {
  /** Objects reported as denied or patched (the exit status's "findings"). */
  readonly failing: number
  /** One line: the results by kind and what was audited. */
  readonly detail: string
  /** What differs from the expectation; empty when the audit found exactly the planted defects. */
  readonly problems: readonly string[]
}

/**
 * `expected`: objects per kind the audit must have read; `planted`: `namespace/name` of every
 * Deployment with a defect.
 */
export function checkAudit(
  run: ChildRun,
  expected: ReadonlyMap<string, number>,
  planted: ReadonlySet<string>,
): AuditCheck {
  let reported: Reported
  try {
    if (run.stdoutBytes > run.stdout.length) throw new Error(`${run.stdoutBytes} bytes of output`)
    reported = JSON.parse(run.stdout) as Reported
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    return { failing: Number.NaN, detail: 'no JSON report', problems: [`unreadable: ${why}`] }
  }
  const problems: string[] = []
  const byResult = new Map<string, number>()
  const failing = new Set<string>()
  for (const { result, subject } of reported.findings) {
    const key = `${result} ${subject.kind}`
    byResult.set(key, (byResult.get(key) ?? 0) + 1)
    if (result === 'deny' || result === 'patch')
      failing.add(`${subject.kind} ${subject.namespace}/${subject.name}`)
  }
  const audited = new Map(reported.summary.map(({ kind, audited }) => [kind, audited]))
  for (const [kind, count] of expected)
    if (audited.get(kind) !== count)
      problems.push(`${kind}: ${audited.get(kind) ?? 0} audited, ${count} listed`)
  const wanted = new Set([...planted].map((name) => `Deployment ${name}`))
  for (const key of failing) if (!wanted.has(key)) problems.push(`not planted: ${key}`)
  for (const key of wanted) if (!failing.has(key)) problems.push(`missed: ${key}`)
  for (const [key, count] of byResult)
    if (!key.startsWith('patch Deployment')) problems.push(`${count} × ${key}`)
  const results = [...byResult].map(([key, count]) => `${count} ${key}`).join(', ') || 'none'
  const listed = [...audited].map(([kind, count]) => `${count} ${kind}`).join(', ')
  return {
    failing: failing.size,
    detail: `findings: ${results}; audited: ${listed}`,
    problems,
  }
}
