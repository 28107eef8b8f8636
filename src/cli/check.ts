/**
 * `mcp-admission check`: simulates applying files to a cluster that holds `--objects`. Each object
 * is admitted as a CREATE through mutation, then validation, in dependency order; the view then
 * holds it as admitted, so later objects see earlier ones (a Deployment sees its ConfigMap).
 */

import { stringify as toYaml } from 'yaml'
import { applyPatch } from '../admission/patch.ts'
import type { PatchOperation } from '../admission/patch.ts'
import { requestFor, reviewOf } from '../admission/request.ts'
import type { AdmissionResponse } from '../admission/review.ts'
import { createAdmission } from '../admission/webhook.ts'
import type { Admission } from '../admission/webhook.ts'
import { MemoryView } from '../cluster/memory-view.ts'
import { loadObjects } from '../cluster/load-objects.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { TOOLHIVE_GROUP, toolHiveKind } from '../policy/kinds.ts'
import { groupOf } from '../policy/kube/object.ts'
import { terminalText } from '../policy/messages/render.ts'
import type { CrdCatalog } from '../policy/crd/crd-catalog.ts'
import { loadCrdCatalog, refusalCauses, servedByCatalog } from './crds.ts'
import { EXIT, UsageError } from './io.ts'
import type { CliIo } from './io.ts'

export const CHECK_OUTPUTS = ['text', 'yaml', 'json'] as const
export type CheckOutput = (typeof CHECK_OUTPUTS)[number]

interface CheckOptions {
  readonly objects: readonly string[]
  readonly namespace: string
  readonly output: CheckOutput
  /** CRDs to evaluate ToolHive objects against first, as the API server does. */
  readonly crds?: readonly string[]
  /** Or a kubeconfig whose cluster's ToolHive CRDs are read for the same purpose. */
  readonly kubeconfig?: string | undefined
  /** Unknown fields refuse an object (as `kubectl --validate=strict`), not just warn. */
  readonly strict?: boolean
}

/**
 * What answered a denial: one of the webhooks, the object's CRD (schema and CEL rules), or the
 * API server itself (no CRD serves the kind).
 */
type DenyingStep = 'mutate' | 'validate' | 'crd' | 'server'

interface CrdStep {
  readonly catalog: CrdCatalog
  readonly strict: boolean
}

type CheckVerdict =
  | {
      readonly admitted: true
      readonly object: KubeObject
      readonly patch: PatchOperation[]
      readonly warnings: string[]
    }
  | {
      readonly admitted: false
      readonly webhook: DenyingStep
      readonly causes: string[]
      readonly warnings: string[]
    }

interface CheckedObject {
  readonly label: string
  readonly verdict: CheckVerdict
}

export async function checkCommand(
  paths: readonly string[],
  options: CheckOptions,
  io: CliIo,
): Promise<number> {
  if (paths.length === 0)
    throw new UsageError('check needs at least one file or directory to apply')
  const catalog = await loadCrdCatalog(options)
  const crds = catalog && { catalog, strict: options.strict === true }
  const view = new MemoryView(await loadObjects(options.objects), servedByCatalog(catalog))
  const results = await checkObjects(await loadObjects(paths), view, options.namespace, crds)
  const report = formatReport(results)
  if (options.output === 'text') {
    io.stdout.write(report)
  } else {
    // The report goes to stderr so stdout stays a clean document for pipes.
    io.stderr.write(report)
    const admitted = results.flatMap((r) => (r.verdict.admitted ? [r.verdict.object] : []))
    io.stdout.write(
      options.output === 'json'
        ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: admitted }, null, 2)}\n`
        : admitted.map((o) => toYaml(o)).join('---\n'),
    )
  }
  return results.some((r) => !r.verdict.admitted) ? EXIT.denied : EXIT.ok
}

/** Admits `objects` one by one into `view`; writes nothing, so checkCommand picks the output. */
async function checkObjects(
  objects: readonly KubeObject[],
  view: MemoryView,
  namespace: string,
  crds: CrdStep | undefined,
): Promise<CheckedObject[]> {
  const admission = createAdmission({ view })
  const results: CheckedObject[] = []
  for (const object of inDependencyOrder(objects)) {
    const verdict = await admit(admission, object, namespace, crds)
    if (verdict.admitted) view.put(verdict.object)
    results.push({ label: labelOf(object, namespace), verdict })
  }
  return results
}

async function admit(
  admission: Admission,
  object: KubeObject,
  namespace: string,
  crds: CrdStep | undefined,
): Promise<CheckVerdict> {
  const ns = typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : namespace
  let withNamespace: KubeObject = { ...object, metadata: { ...object.metadata, namespace: ns } }

  // The API server decodes (prunes, defaults) and validates a custom resource against its CRD
  // before the validating webhooks; the mutating webhook never changes these kinds, so the CRD's
  // whole verdict can come first.
  if (
    crds !== undefined &&
    groupOf(object.apiVersion) === TOOLHIVE_GROUP &&
    !crds.catalog.defines(object)
  ) {
    // What the API server answers for a kind no CRD of the cluster serves.
    return {
      admitted: false,
      webhook: 'server',
      causes: [
        `no matches for kind ${JSON.stringify(String(object.kind))} in version ${JSON.stringify(String(object.apiVersion))}: no CustomResourceDefinition given serves it`,
      ],
      warnings: [],
    }
  }
  const crd = crds?.catalog.evaluate({
    operation: 'CREATE',
    object: withNamespace,
    strict: crds.strict,
  })
  const crdWarnings = crd?.warnings ?? []
  if (crd !== undefined && !crd.allowed) {
    return {
      admitted: false,
      webhook: 'crd',
      causes: refusalCauses(crd),
      warnings: [...crdWarnings],
    }
  }
  if (crd !== undefined) withNamespace = crd.object

  const mutation = await answer(admission, withNamespace, 'mutate', ns)
  if (!mutation.allowed) return refusal('mutate', mutation, [...crdWarnings])
  const patch = decodePatch(mutation)
  const mutated = applyPatch(withNamespace, patch)

  const validation = await answer(admission, mutated, 'validate', ns)
  const warnings = [...crdWarnings, ...(mutation.warnings ?? []), ...(validation.warnings ?? [])]
  if (!validation.allowed) return refusal('validate', validation, warnings)
  return { admitted: true, object: mutated, patch, warnings }
}

async function answer(
  admission: Admission,
  object: KubeObject,
  webhook: 'mutate' | 'validate',
  namespace: string,
): Promise<AdmissionResponse> {
  const outcome = await admission.review(
    reviewOf(requestFor(object, { operation: 'CREATE', namespace })),
    webhook,
  )
  if (!outcome.ok) throw new UsageError(outcome.message) // only if requestFor built a bad envelope
  return outcome.review.response
}

function refusal(
  webhook: 'mutate' | 'validate',
  response: AdmissionResponse,
  warnings: string[],
): CheckVerdict {
  const causes =
    response.status?.details?.causes.map((c) =>
      c.field === '' ? c.message : `${c.field}: ${c.message}`,
    ) ?? []
  return {
    admitted: false,
    webhook,
    causes: causes.length > 0 ? causes : [response.status?.message ?? 'denied'],
    warnings: [...warnings, ...(response.warnings ?? [])],
  }
}

function decodePatch(response: AdmissionResponse): PatchOperation[] {
  return response.patch === undefined
    ? []
    : (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as PatchOperation[])
}

/**
 * ToolHive kinds in their table's `checkRank` order (webhook configs before the workloads that
 * name them), then ConfigMaps, then the rest, Deployments last: each is admitted after what its
 * policies read.
 */
function inDependencyOrder(objects: readonly KubeObject[]): KubeObject[] {
  const rank = (o: KubeObject): number =>
    toolHiveKind(o.kind)?.checkRank ??
    (o.kind === 'ConfigMap' ? 10 : o.kind === 'Deployment' ? 12 : 11)
  return [...objects].sort((a, b) => rank(a) - rank(b)) // stable: file order within a rank
}

/**
 * `Kind namespace/name`, as kubectl names an object to people (not the views' index key). Each
 * part is printed as is when printable, else quoted Go-style (`"a\nOK: forged"`): a name can
 * neither start a line of its own nor send escape sequences to the terminal.
 */
function labelOf(object: KubeObject, namespace: string): string {
  const metadata = object.metadata
  const name =
    typeof metadata?.name === 'string' && metadata.name !== ''
      ? metadata.name
      : `${String(metadata?.generateName)}*`
  const ns = typeof metadata?.namespace === 'string' ? metadata.namespace : namespace
  return `${terminalText(String(object.kind))} ${terminalText(ns)}/${terminalText(name)}`
}

/** The human-readable summary: one line per object, its patch, warnings and denials. */
function formatReport(results: readonly CheckedObject[]): string {
  const lines: string[] = []
  for (const { label, verdict } of results) {
    if (verdict.admitted) {
      const changes =
        verdict.patch.length === 0
          ? 'unchanged'
          : `mutated (${verdict.patch.length} patch operations)`
      lines.push(`admitted ${label}: ${changes}`)
      for (const op of verdict.patch) lines.push(`    ${op.op} ${terminalText(op.path)}`)
    } else {
      const by =
        verdict.webhook === 'crd'
          ? 'its CustomResourceDefinition'
          : verdict.webhook === 'server'
            ? 'the API server'
            : `the ${verdict.webhook} webhook`
      lines.push(`DENIED   ${label} by ${by}:`)
      for (const cause of verdict.causes) lines.push(`    ${cause}`)
    }
    for (const warning of verdict.warnings) lines.push(`    warning: ${warning}`)
  }
  const denied = results.filter((r) => !r.verdict.admitted).length
  const mutated = results.filter((r) => r.verdict.admitted && r.verdict.patch.length > 0).length
  lines.push(`${results.length - denied} admitted (${mutated} mutated), ${denied} denied`)
  return `${lines.join('\n')}\n`
}
