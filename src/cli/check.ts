/**
 * `mcp-admission check`: simulates applying files to a cluster that holds `--objects`. Each object
 * is admitted as a CREATE through mutation, then validation, in dependency order; the view then
 * holds it as admitted, so later objects see earlier ones (a Deployment sees its ConfigMap).
 */

import { stringify as toYaml } from 'yaml'
import { createDecide } from '../admission/decide.ts'
import { MemoryView } from '../cluster/memory-view.ts'
import { ObjectFileError, loadObjects, loadSourcedObjects } from '../cluster/load-objects.ts'
import type { SourcedObject } from '../cluster/load-objects.ts'
import type { KubeObject } from '../policy/kube/object.ts'
import { productRoutes } from '../admission/routes.ts'
import { TOOLHIVE_GROUP, toolHiveKind } from '../policy/kinds.ts'
import { groupOf } from '../policy/kube/object.ts'
import { jsonQuoted, terminalText } from '../policy/messages/render.ts'
import { admit } from './admit-object.ts'
import type { CrdStep } from './admit.ts'
import type { AdmitVerdict } from './admit-object.ts'
import { loadCrdCatalog, servedByCatalog } from './crds.ts'
import { EXIT, UsageError } from './io.ts'
import { namedBy } from './objects-option.ts'
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

interface CheckedObject {
  readonly label: string
  readonly verdict: AdmitVerdict
  /** False when no rule of mcp-admission and no CRD given applies to the object's kind. */
  readonly checked: boolean
}

/** Why `--strict` needs CRDs: the API server's own checks are not simulated without them. */
export const CRDS_NOT_CHECKED =
  "the CRDs' schemas and CEL rules were not checked: give --crds DIR or --kubeconfig FILE to check them as the API server does"

/**
 * Said once on stderr by every `check` without CRDs. Information, not a warning: nothing is wrong
 * with the input, only part of what the API server would apply was not simulated, and the exit
 * code does not depend on it (docs/cli.md, "`review` and `check`").
 */
export const CRDS_NOT_CHECKED_INFO =
  "info: spec fields were not checked against the CRDs' schemas and CEL rules (give --crds DIR or --kubeconfig FILE to check them as the API server does)"

/** The kinds some webhook rule answers, by `group/kind`. */
const ROUTED_KINDS: ReadonlySet<string> = new Set(
  productRoutes().map((route) => `${route.group}/${route.kind}`),
)

export async function checkCommand(
  paths: readonly string[],
  options: CheckOptions,
  io: CliIo,
): Promise<number> {
  if (paths.length === 0)
    throw new UsageError('check needs at least one file or directory to apply')
  const catalog = await loadCrdCatalog(options, io)
  // --strict asks for what only the CRDs can say: without them it would pass unchecked input.
  if (catalog === undefined && options.strict === true)
    throw new UsageError(`--strict: ${CRDS_NOT_CHECKED}`)
  const crds = catalog && { catalog, strict: options.strict === true }
  const view = new MemoryView(
    await namedBy('--objects', () => loadObjects(options.objects)),
    servedByCatalog(catalog),
  )
  const objects = await loadSourcedObjects(paths, { stdin: io.stdin })
  for (const sourced of objects) withApiVersion(sourced)
  const results = await checkObjects(objects, view, options.namespace, crds)
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
  // Said once the check is done (an unreadable input ends it with its own one line instead).
  if (catalog === undefined) io.stderr.write(`${CRDS_NOT_CHECKED_INFO}\n`)
  const unchecked = options.strict === true && results.some((r) => !r.checked)
  return unchecked || results.some((r) => !r.verdict.admitted) ? EXIT.denied : EXIT.ok
}

/** Admits `objects` one by one into `view`; writes nothing, so checkCommand picks the output. */
async function checkObjects(
  objects: readonly SourcedObject[],
  view: MemoryView,
  namespace: string,
  crds: CrdStep | undefined,
): Promise<CheckedObject[]> {
  const decide = createDecide({ view })
  const results: CheckedObject[] = []
  const firstSeen = new Map<string, string>()
  for (const { object, where } of inDependencyOrder(objects)) {
    const verdict = await admit(decide, object, { namespace, crds })
    if (verdict.admitted) view.put(verdict.object)
    const label = labelOf(object, namespace)
    // The same object twice: each is checked, but the cluster would not take both as created.
    const identity = `${groupOf(object.apiVersion)} ${label}`
    const earlier = firstSeen.get(identity)
    if (earlier === undefined) firstSeen.set(identity, where)
    else
      verdict.warnings.push(
        `also in ${earlier}: kubectl create refuses the repeat (AlreadyExists); kubectl apply applies the later over the earlier`,
      )
    results.push({ label, verdict, checked: isChecked(object, crds) })
  }
  return results
}

/** `group/version` (a DNS subdomain, a DNS-1035 label) or a core `version` such as `v1`. */
const API_VERSION = /^(?:[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?\/)?[a-z](?:[-a-z0-9]*[a-z0-9])?$/

/**
 * Refuses an object that names no usable API version: kubectl refuses it, and without one no rule
 * or CRD could be found for it, so it would pass unchecked. One line naming where, exit 2.
 */
function withApiVersion({ object, where }: SourcedObject): void {
  const apiVersion: unknown = object.apiVersion
  const kind = terminalText(String(object.kind))
  if (apiVersion === undefined || apiVersion === '')
    throw new ObjectFileError(`${where}: ${kind} has no apiVersion`)
  if (typeof apiVersion !== 'string')
    throw new ObjectFileError(
      `${where}: ${kind} apiVersion must be a string, got ${typeof apiVersion}`,
    )
  if (!API_VERSION.test(apiVersion) || apiVersion.length > 317)
    throw new ObjectFileError(
      `${where}: ${kind} apiVersion must be group/version or a version such as v1, got ${jsonQuoted(apiVersion)}`,
    )
}

/**
 * Whether anything judged the object: a webhook rule for its kind, or (given CRDs) its CRD, or the
 * API server's refusal of a ToolHive kind no CRD serves.
 */
function isChecked(object: KubeObject, crds: CrdStep | undefined): boolean {
  const group = groupOf(object.apiVersion)
  if (ROUTED_KINDS.has(`${group}/${String(object.kind)}`)) return true
  return crds !== undefined && (group === TOOLHIVE_GROUP || crds.catalog.defines(object))
}

/**
 * ToolHive kinds in their table's `checkRank` order (webhook configs before the workloads that
 * name them), then ConfigMaps, then the rest, Deployments last: each is admitted after what its
 * policies read.
 */
function inDependencyOrder(objects: readonly SourcedObject[]): SourcedObject[] {
  const rank = ({ object: o }: SourcedObject): number =>
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
  for (const { label, verdict, checked } of results) {
    if (verdict.admitted && !checked) {
      lines.push(
        `unchecked ${label}: no rule of mcp-admission and no CRD given applies to its kind`,
      )
    } else if (verdict.admitted) {
      const changes =
        verdict.patch.length === 0
          ? 'unchanged'
          : `mutated (${verdict.patch.length} patch ${verdict.patch.length === 1 ? 'operation' : 'operations'})`
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
  const unchecked = results.filter((r) => r.verdict.admitted && !r.checked).length
  const admitted = results.length - denied - unchecked
  lines.push(
    `${admitted} admitted (${mutated} mutated), ${denied} denied${unchecked > 0 ? `, ${unchecked} not checked` : ''}`,
  )
  return `${lines.join('\n')}\n`
}
