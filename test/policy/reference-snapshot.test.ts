/**
 * Every reference property of the newest release's CRDs (tools/reference-snapshot.json, written
 * by tools/reference-snapshot.ts and checked against the Go module by the e2e suite) is either a
 * reference of the kind table or excluded here with its reason, so a reference upstream adds is
 * a failing test, not a silent gap in the warnings and the delete guard.
 */

import t from 'tap'
import snapshot from '../../tools/reference-snapshot.json' with { type: 'json' }
import { TOOLHIVE_KIND_TABLE } from '../../src/policy/kinds.ts'
import type { KindTable } from '../../src/policy/kinds.ts'

/** Why a snapshot path is not a reference of the table, by the pattern of its property name. */
const EXCLUDED: readonly { readonly pattern: RegExp; readonly reason: string }[] = [
  {
    pattern: /(SecretRefs?|passwordRef|secretKeyRef|TokenRef)$/,
    reason: 'names a Secret: out of scope, the service never reads Secrets',
  },
  { pattern: /(caBundleRef|configMapRef)$/, reason: 'names a ConfigMap: out of scope' },
  {
    pattern: /(issuerRef|trustDomainRef)$/,
    reason: 'names a token issuer or a SPIFFE trust domain, not an object',
  },
  { pattern: /^status\./, reason: 'written by the operator, not by users: nothing to warn about' },
  {
    pattern: /^spec\.config\.groupRef$/,
    reason: "a VirtualMCPServer's; the operator overwrites it with spec.groupRef.name",
  },
]

/** The holder of each reference of the table (`spec.toolConfigRef.name` → `spec.toolConfigRef`). */
function tablePaths(kinds: KindTable): Set<string> {
  const paths = new Set<string>()
  for (const entry of kinds)
    for (const [version, references] of Object.entries(entry.references ?? {}))
      for (const { path } of references)
        paths.add(`${entry.kind} ${version} ${path.replace(/(\[\])?\.name$/, '')}`)
  return paths
}

t.test(
  'every reference property upstream has is in the table or excluded for a reason',
  async (t) => {
    t.equal(snapshot.release, 'v0.63.0', 'the newest release the suite runs beside')
    const inTable = tablePaths(TOOLHIVE_KIND_TABLE)
    const unexplained = snapshot.references.filter(
      ({ kind, version, path }) =>
        !inTable.has(`${kind} ${version} ${path}`) &&
        !EXCLUDED.some(({ pattern }) => pattern.test(path)),
    )
    t.same(unexplained, [], 'each needs a table entry (src/policy/kinds.ts) or an exclusion here')
    const upstream = new Set(
      snapshot.references.map(({ kind, version, path }) => `${kind} ${version} ${path}`),
    )
    t.same(
      [...inTable].filter((path) => !upstream.has(path)),
      [],
      'and the table names no reference upstream does not have',
    )
    for (const { pattern, reason } of EXCLUDED)
      t.ok(
        snapshot.references.some(({ path }) => pattern.test(path)),
        `the exclusion "${reason}" still matches something`,
      )
  },
)

t.test('a reference upstream adds fails the comparison', async (t) => {
  const added = { kind: 'MCPServer', version: 'v1beta1', path: 'spec.registryRef', shape: '{name}' }
  const inTable = tablePaths(TOOLHIVE_KIND_TABLE)
  t.notOk(inTable.has(`${added.kind} ${added.version} ${added.path}`))
  t.notOk(EXCLUDED.some(({ pattern }) => pattern.test(added.path)))
})
