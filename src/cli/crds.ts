/**
 * `--crds PATH`: the CustomResourceDefinitions `check` and `review` evaluate objects against,
 * read like any object path (files or directories, YAML or JSON, Lists), or with `--kubeconfig
 * FILE` those of ToolHive's group that cluster serves (cluster-crds.ts). Every document must be
 * a CRD, and a CRD's version must compile when an object of it is first checked: anything else is
 * a one-line usage error naming the file (or server), the document and, for a version that does
 * not compile, the keyword or rule (exit 2).
 */

import { TOOLHIVE_GROUP } from '../policy/kinds.ts'
import { loadSourcedObjects } from '../cluster/load-objects.ts'
import type { CrdCatalog, CrdInput, CrdVerdict } from '../policy/crd/crd-catalog.ts'
import type { CrdDefinition } from '../policy/crd/crd-definition.ts'
import { renderText, renderViolations } from '../policy/messages/render.ts'
import { readClusterCrds } from './cluster-crds.ts'
import { UsageError } from './io.ts'
import type { CliIo } from './io.ts'

/** Where the CRDs come from: files (`--crds`), the cluster of a kubeconfig, or nowhere. */
export interface CrdSource {
  readonly crds?: readonly string[]
  readonly kubeconfig?: string | undefined
}

/** The catalog of the CRDs the options name, or undefined when they name none. */
export async function loadCrdCatalog(
  source: CrdSource,
  io: Pick<CliIo, 'env' | 'execTimeoutMs' | 'proxyStepTimeoutMs'>,
): Promise<CrdCatalog | undefined> {
  const paths = source.crds ?? []
  if (paths.length > 0 && source.kubeconfig !== undefined) {
    throw new UsageError(
      '--crds and --kubeconfig cannot be used together: give the CRDs as files, or read them from the cluster',
    )
  }
  if (paths.length === 0 && source.kubeconfig === undefined) return undefined
  const sourced =
    source.kubeconfig === undefined
      ? await loadSourcedObjects(paths, { configuration: true })
      : await readClusterCrds(source.kubeconfig, io)
  // Loaded only here: the CEL and RE2 engines (some MiB of heap) are for `--crds`, and `serve`,
  // which imports this module through the CLI, must not pay for them in every pod.
  const [{ crdCatalog }, { CrdInputError, readCrd }] = await Promise.all([
    import('../policy/crd/crd-catalog.ts'),
    import('../policy/crd/crd-definition.ts'),
  ])
  const whereOf = new Map<CrdDefinition, string>()
  for (const { object, where } of sourced) {
    try {
      whereOf.set(readCrd(object), where)
    } catch (error) {
      if (error instanceof CrdInputError) throw new UsageError(`${where}: ${error.message}`)
      throw error
    }
  }
  const catalog = crdCatalog([...whereOf.keys()])
  // A version that does not compile is found when its first object is checked: named by file.
  const named =
    <Result>(step: (input: CrdInput) => Result) =>
    (input: CrdInput): Result => {
      try {
        return step(input)
      } catch (error) {
        const where =
          error instanceof CrdInputError && error.definition && whereOf.get(error.definition)
        if (where) throw new UsageError(`${where}: ${(error as Error).message}`)
        throw error
      }
    }
  return {
    defines: (object) => catalog.defines(object),
    evaluate: named((input) => catalog.evaluate(input)),
    decode: named((input) => catalog.decode(input)),
    validate: named((input) => catalog.validate(input)),
  }
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

/**
 * The view options of a simulated cluster that serves the ToolHive kinds the CRDs define and no
 * other, as `serve` knows a served kind (no MCPWebhookConfig CRD: no webhookConfigRef warnings);
 * without CRDs, every kind.
 */
export function servedByCatalog(catalog: CrdCatalog | undefined): {
  readonly serves?: (kind: string) => boolean
} {
  if (catalog === undefined) return {}
  return { serves: (kind) => catalog.defines({ apiVersion: `${TOOLHIVE_GROUP}/`, kind }) }
}
