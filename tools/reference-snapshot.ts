/**
 * Writes the snapshot of every reference property (`*Ref`, `*Refs`) in a ToolHive release's CRDs:
 * the list test/policy/reference-snapshot.test.ts holds the kind table to (each path either in
 * the table or excluded with a reason), and that the e2e suite regenerates from the Go module to
 * catch a release that adds one (docs/architecture.md, "Where each change goes", a reference).
 *
 *   node tools/reference-snapshot.ts [CRD_DIR]   # default: the release's CRDs from the module proxy
 *
 * A path is written as the kind table writes a reference's holder: dots between fields, `[]` for
 * every item of a list, `{}` for every value of a map (`spec.outgoingAuth.backends{}.externalAuthConfigRef`).
 */

import { readdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseObjects } from '../src/cluster/load-objects.ts'
import { isRecord } from '../src/policy/kube/object.ts'
import type { JsonObject } from '../src/policy/kube/object.ts'

/** The release the snapshot is taken from: the newest the e2e suite runs beside. */
export const SNAPSHOT_RELEASE = 'v0.63.0'
export const SNAPSHOT_FILE = join(
  dirname(fileURLToPath(import.meta.url)),
  'reference-snapshot.json',
)

/** One reference property of one kind at one version. */
export interface SnapshotEntry {
  readonly kind: string
  readonly version: string
  /** The property's path (`spec.groupRef`), wildcards as the kind table writes them. */
  readonly path: string
  /** What it holds: an object (`{name}`, `{kind, name}`, `{name, key}`), a string, or a list of either. */
  readonly shape: string
}

export interface Snapshot {
  readonly release: string
  readonly references: readonly SnapshotEntry[]
}

const REFERENCE = /Refs?$/

/** Every reference property of the CRDs in `directory`, sorted by kind, version and path. */
export async function snapshotOf(directory: string, release: string): Promise<Snapshot> {
  const references: SnapshotEntry[] = []
  for (const file of (await readdir(directory)).filter((name) => /\.ya?ml$/.test(name)).sort()) {
    const path = join(directory, file)
    for (const crd of parseObjects(await readFile(path), path)) {
      const spec = isRecord(crd.spec) ? crd.spec : {}
      const names = isRecord(spec.names) ? spec.names : {}
      const kind = typeof names.kind === 'string' ? names.kind : file
      for (const version of Array.isArray(spec.versions) ? spec.versions : []) {
        if (!isRecord(version) || typeof version.name !== 'string') continue
        const schema = isRecord(version.schema) ? version.schema.openAPIV3Schema : undefined
        if (!isRecord(schema)) continue
        for (const { path: at, shape } of referencePaths(schema, ''))
          references.push({ kind, version: version.name, path: at, shape })
      }
    }
  }
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  references.sort(
    (a, b) => order(a.kind, b.kind) || order(a.version, b.version) || order(a.path, b.path),
  )
  return { release, references }
}

function referencePaths(schema: JsonObject, at: string): { path: string; shape: string }[] {
  const found: { path: string; shape: string }[] = []
  const properties = isRecord(schema.properties) ? schema.properties : {}
  for (const [name, property] of Object.entries(properties)) {
    if (!isRecord(property)) continue
    const path = at === '' ? name : `${at}.${name}`
    if (REFERENCE.test(name)) found.push({ path, shape: shapeOf(property) })
    found.push(...referencePaths(property, path))
    if (isRecord(property.items)) found.push(...nested(property.items, `${path}[]`))
    if (isRecord(property.additionalProperties))
      found.push(...nested(property.additionalProperties, `${path}{}`))
  }
  return found
}

/** The references inside a list's items or a map's values (themselves no reference property). */
function nested(schema: JsonObject, at: string): { path: string; shape: string }[] {
  const found = referencePaths(schema, at)
  if (isRecord(schema.items)) found.push(...nested(schema.items, `${at}[]`))
  if (isRecord(schema.additionalProperties))
    found.push(...nested(schema.additionalProperties, `${at}{}`))
  return found
}

function shapeOf(property: JsonObject): string {
  if (property.type === 'array' && isRecord(property.items))
    return `list of ${shapeOf(property.items)}`
  if (property.type === 'object' && isRecord(property.properties))
    return `{${Object.keys(property.properties).sort().join(', ')}}`
  return typeof property.type === 'string' ? property.type : 'unknown'
}

/** The snapshot as committed: one entry per line, so a drift reads as a diff of lines. */
export function snapshotText(snapshot: Snapshot): string {
  const lines = snapshot.references.map((entry) => `    ${JSON.stringify(entry)}`)
  return `{\n  "release": ${JSON.stringify(snapshot.release)},\n  "references": [\n${lines.join(',\n')}\n  ]\n}\n`
}

/** The release's CRDs, from the Go module proxy (cached as the e2e suite caches them). */
async function releaseCrds(): Promise<string> {
  const { releaseSources } = await import('../test/e2e/toolhive/releases.ts')
  return (await releaseSources(SNAPSHOT_RELEASE)).crds
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const directory = process.argv[2] ?? (await releaseCrds())
  await writeFile(SNAPSHOT_FILE, snapshotText(await snapshotOf(directory, SNAPSHOT_RELEASE)))
  process.stdout.write(`wrote ${SNAPSHOT_FILE} from ${directory}\n`)
}
