/**
 * `--crds PATH`: the CustomResourceDefinitions `check` and `review` evaluate objects against,
 * read like any object path (files or directories, YAML or JSON, Lists). Every document must be
 * a usable CRD: anything else is a one-line usage error naming the file, the document and, for a
 * rule that does not compile, the rule (exit 2).
 */

import { loadSourcedObjects } from '../cluster/load-objects.ts'
import type { CrdCatalog, CrdVerdict } from '../policy/crd/crd-catalog.ts'
import type { CrdDefinition } from '../policy/crd/crd-definition.ts'
import { renderText, renderViolations } from '../policy/messages/render.ts'
import { UsageError } from './io.ts'

/** The catalog of the CRDs in `paths`, or undefined when none were given. */
export async function loadCrdCatalog(paths: readonly string[]): Promise<CrdCatalog | undefined> {
  if (paths.length === 0) return undefined
  // Loaded only here: the CEL and RE2 engines (some MiB of heap) are for `--crds`, and `serve`,
  // which imports this module through the CLI, must not pay for them in every pod.
  const [{ crdCatalog }, { CrdInputError, readCrd }] = await Promise.all([
    import('../policy/crd/crd-catalog.ts'),
    import('../policy/crd/crd-definition.ts'),
  ])
  const definitions: CrdDefinition[] = []
  for (const { object, where } of await loadSourcedObjects(paths)) {
    try {
      definitions.push(readCrd(object))
    } catch (error) {
      if (error instanceof CrdInputError) throw new UsageError(`${where}: ${error.message}`)
      throw error
    }
  }
  return crdCatalog(definitions)
}

/** A refusal's lines, `field: Invalid value: …` (bounded and redacted like a denial's). */
export function refusalCauses(verdict: Exclude<CrdVerdict, { allowed: true }>): string[] {
  if ('decodeError' in verdict) return [renderText(verdict.decodeError)]
  const { causes } = renderViolations(verdict.violations)
  const lines = causes.map((c) => (c.field === '' ? c.message : `${c.field}: ${c.message}`))
  // Past 20 violations or 4 KiB the rest are counted, not listed, as in a denial's message.
  const omitted = verdict.violations.length - causes.length
  if (omitted > 0) lines.push(`and ${omitted} more ${omitted === 1 ? 'error' : 'errors'}`)
  return lines
}
