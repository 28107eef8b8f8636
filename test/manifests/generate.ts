/**
 * The kustomize install (everything in manifests/ but charts/) generated from the Helm chart, the
 * one hand-written source of the install objects: `npm run manifests` writes it, `npm run
 * manifests -- --check` only reports what is out of date. The chart is rendered by the real helm
 * of the e2e suite (test/e2e/harness/helm.ts: cached under ~/.cache/mcp-admission, built from the
 * Go module proxy when missing; `E2E_HELM` names another binary).
 *
 * The layout follows what users apply: `manifests/` = `base` + `components/cert-manager` is the
 * chart's defaults; `base` is what the defaults keep with certificates.source=secret (the chart's
 * own objects, nothing of cert-manager); `components/cert-manager` is what the default
 * certificates.source=cert-manager adds (its Issuers and Certificates, the CA-injection
 * annotations as patches); each optional component (OPTIONAL_COMPONENTS: network-policy,
 * monitoring) is what its switch (networkPolicy.enabled=true, monitoring.*.enabled=true) adds.
 * Any other difference between those renders stops the generator, since kustomize could not
 * compose it back. Each rendered document keeps its comments and its template's file name; Helm's
 * own labels and `# Source:` lines are dropped. The Namespace, which the chart leaves to its user,
 * is added to the base.
 *
 * First it writes the chart's generated parts from the tables (chart-sources.ts): the webhook
 * configurations, `templates/webhooks.yaml`, and the `webhooks` entries of values.yaml and
 * values.schema.json from the webhook table (webhooks-template.ts), each webhook sent what the
 * rules it serves match (the rule table); and `templates/_toolhive-kinds.tpl`, the ToolHive rules
 * of those webhooks and of the RBAC, from the kind and rule tables (kinds-template.ts). So the
 * render below already says what the tables say.
 *
 * Every generated file starts with a header naming its source and the command, and the digests of
 * the chart and of the rest of the file: test/manifests/generated.test.ts fails without helm on a
 * file edited by hand or a chart changed since (and on a generated part of the chart that is not
 * what the tables generate now), and test/e2e/chart.test.ts regenerates everything and compares.
 */

import { createHash } from 'node:crypto'
import { readFile, readdir, rm, rmdir, writeFile, mkdir } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { format, resolveConfig } from 'prettier'
import { parseAllDocuments, stringify } from 'yaml'
import type { Document } from 'yaml'
import { ensureHelm, helmFor, mustHelm } from '../e2e/harness/helm.ts'
import type { Helm } from '../e2e/harness/helm.ts'
import { sourceStates } from './chart-sources.ts'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
export const MANIFESTS_DIR = join(REPO, 'manifests')
/** The chart, relative to manifests/; everything else there is generated. */
export const CHART = 'charts/mcp-admission'
export const CHART_DIR = join(MANIFESTS_DIR, CHART)
export const COMMAND = 'npm run manifests'
/** The kustomize install's release: name and namespace `mcp-admission`, as the chart's docs use. */
const RELEASE = 'mcp-admission'
const NAMESPACE = 'mcp-admission'

/** Labels the chart sets by Helm's convention, and why; the kustomize files leave them out. */
export const HELM_ONLY_LABELS: Readonly<Record<string, string>> = {
  'helm.sh/chart': 'Helm convention: the chart name and version',
  'app.kubernetes.io/managed-by': 'Helm convention: "Helm"',
  'app.kubernetes.io/instance': 'Helm convention: the release name',
  'app.kubernetes.io/version':
    'Helm convention: the app version (kustomize has it in the image tag only)',
}

/** An optional component: the objects `values` (helm `--set`s) add to the chart's defaults. */
interface OptionalComponent {
  readonly dir: string
  readonly values: readonly string[]
  /** One line for the full install's list of components. */
  readonly summary: string
  /** The comment of its kustomization.yaml. */
  readonly comment: readonly string[]
}

export const OPTIONAL_COMPONENTS: readonly OptionalComponent[] = [
  {
    dir: 'network-policy',
    values: ['networkPolicy.enabled=true'],
    summary: 'optional ingress policy',
    comment: [
      'Optional (networkPolicy.enabled in the chart): an ingress policy admitting traffic to the',
      'pods only on the webhook and probe/metrics ports. Add it with',
      '`components: [components/network-policy]` in an overlay.',
    ],
  },
  {
    dir: 'monitoring',
    values: [
      'monitoring.serviceMonitor.enabled=true',
      'monitoring.prometheusRule.enabled=true',
      'monitoring.dashboard.enabled=true',
    ],
    summary: 'optional ServiceMonitor, alerts and Grafana dashboard',
    comment: [
      "Optional (the chart's monitoring.serviceMonitor, .prometheusRule and .dashboard): a",
      'ServiceMonitor, a PrometheusRule with the alerts of docs/monitoring.md (the',
      'prometheus-operator CRDs must be installed) and the Grafana dashboard as a ConfigMap for',
      "Grafana's dashboard sidecar. Add it with `components: [components/monitoring]` in an",
      "overlay; a Prometheus that selects by label needs that label added (kustomize's labels).",
    ],
  },
]

/** The caBundle value given for the certificates.source=secret render; the base leaves it out. */
const PLACEHOLDER_CA_BUNDLE = 'generator-placeholder'

type K8sObject = {
  apiVersion: string
  kind: string
  metadata: {
    name: string
    namespace?: string
    labels?: Record<string, string>
    annotations?: Record<string, string>
  }
  [key: string]: unknown
}

/** One document of a render: its template's file name, its key and its (editable) document. */
interface Rendered {
  readonly template: string
  readonly key: string
  readonly object: K8sObject
  readonly document: Document
}

/** A JSON patch adding annotations to one object, as the cert-manager component applies it. */
interface AnnotationPatch {
  readonly kind: string
  readonly name: string
  readonly annotations: Record<string, string>
  readonly hasAnnotations: boolean
}

/** Every generated file, keyed by its path under manifests/ (posix), with its full text. */
export type GeneratedFiles = Map<string, string>

/**
 * Renders the chart with `helm` and lays it out as the kustomize install. `values` (helm flags)
 * are added to every render: the e2e test uses them to prove that a changed chart is noticed.
 */
export async function generate(
  helm: Helm,
  values: readonly string[] = [],
): Promise<GeneratedFiles> {
  const full = await render(helm, values)
  const secret = await render(helm, [
    ...values,
    '--set',
    'certificates.source=secret',
    '--set',
    `certificates.caBundle=${PLACEHOLDER_CA_BUNDLE}`,
  ])

  // The base and the cert-manager component: the defaults against certificates.source=secret.
  const secretObjects = byKey(secret)
  const base: Rendered[] = []
  const certManager: Rendered[] = []
  const patches: AnnotationPatch[] = []
  for (const rendered of full) {
    const other = secretObjects.get(rendered.key)
    if (other === undefined) {
      certManager.push(rendered)
      continue
    }
    const annotations = rendered.object.metadata.annotations ?? {}
    const otherAnnotations = other.object.metadata.annotations ?? {}
    const added = Object.fromEntries(
      Object.entries(annotations).filter(([key, value]) => otherAnnotations[key] !== value),
    )
    const mine = structuredClone(rendered.object)
    mine.metadata.annotations = Object.fromEntries(
      Object.entries(annotations).filter(([key]) => !(key in added)),
    )
    const theirs = structuredClone(other.object)
    theirs.metadata.annotations = otherAnnotations
    withoutPlaceholderCaBundle(theirs)
    if (!isDeepStrictEqual(mine, theirs))
      throw new Error(
        `${rendered.key}: certificates.source=cert-manager changes more than annotations and the ` +
          'caBundle, which the cert-manager component cannot express; change the chart or teach ' +
          'test/manifests/generate.ts',
      )
    if (Object.keys(added).length > 0) {
      for (const key of Object.keys(added))
        rendered.document.deleteIn(['metadata', 'annotations', key])
      const kept = Object.keys(mine.metadata.annotations).length > 0
      if (!kept) rendered.document.deleteIn(['metadata', 'annotations'])
      patches.push({
        kind: rendered.object.kind,
        name: rendered.object.metadata.name,
        annotations: added,
        hasAnnotations: kept,
      })
    }
    base.push(rendered)
  }
  const fullKeys = new Set(full.map((rendered) => rendered.key))
  for (const key of secretObjects.keys())
    if (!fullKeys.has(key))
      throw new Error(
        `${key}: rendered only with certificates.source=secret; the base holds what the defaults render`,
      )

  // Each optional component: what its switch adds to the defaults, nothing else.
  const optional: [OptionalComponent, Rendered[]][] = []
  for (const component of OPTIONAL_COMPONENTS) {
    const switched = await render(helm, [
      ...values,
      ...component.values.flatMap((value) => ['--set', value]),
    ])
    const switchedObjects = byKey(switched)
    for (const rendered of full) {
      const other = switchedObjects.get(rendered.key)
      if (other === undefined || !isDeepStrictEqual(rendered.object, other.object))
        throw new Error(
          `${rendered.key}: ${component.values.join(', ')} changes an object of the defaults, ` +
            `which the ${component.dir} component cannot express; it may only add objects`,
        )
    }
    optional.push([component, switched.filter((rendered) => !fullKeys.has(rendered.key))])
  }

  const chart = await chartDigest()
  const files: GeneratedFiles = new Map()
  const add = async (path: string, source: string, body: string) => {
    files.set(path, await withHeader(path, source, body, chart))
  }
  const addRendered = async (dir: string, objects: readonly Rendered[]): Promise<string[]> => {
    const names: string[] = []
    for (const [template, documents] of byTemplate(objects)) {
      names.push(template)
      await add(
        `${dir}/${template}`,
        `${CHART}/templates/${template}`,
        documents.map((rendered) => documentText(rendered.document)).join('---\n'),
      )
    }
    return names
  }

  await add('base/namespace.yaml', CHART, namespaceText(commonLabels(full)))
  const baseFiles = await addRendered('base', base)
  await add(
    'base/kustomization.yaml',
    CHART,
    comments(
      'The mcp-admission base without certificate provisioning: `kubectl apply -k manifests/base`',
      'where the serving certificate Secret and the webhooks caBundle come from elsewhere',
      '(certificates.source=secret in the chart). `manifests/` adds the cert-manager component.',
    ) +
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        namespace: NAMESPACE,
        resources: ['namespace.yaml', ...baseFiles],
      }),
  )

  const certManagerFiles = await addRendered('components/cert-manager', certManager)
  await add(
    'components/cert-manager/kustomization.yaml',
    CHART,
    comments(
      'Serving certificate from cert-manager (certificates.source=cert-manager, the chart default):',
      'a self-signed issuer makes a CA, a CA issuer signs the serving certificate for the',
      "Service's DNS names into the TLS Secret, and cert-manager's CA injector fills both webhook",
      "configurations' caBundle. Leave it out where certificates come from elsewhere (manifests/base).",
    ) +
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1alpha1',
        kind: 'Component',
        resources: certManagerFiles,
        patches: patches.map((patch) => ({
          target: { kind: patch.kind, name: patch.name },
          patch: stringify(
            patch.hasAnnotations
              ? Object.entries(patch.annotations).map(([key, value]) => ({
                  op: 'add',
                  path: `/metadata/annotations/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`,
                  value,
                }))
              : [{ op: 'add', path: '/metadata/annotations', value: patch.annotations }],
          ).trimEnd(),
        })),
      }),
  )

  for (const [component, objects] of optional) {
    const componentFiles = await addRendered(`components/${component.dir}`, objects)
    await add(
      `components/${component.dir}/kustomization.yaml`,
      CHART,
      comments(...component.comment) +
        stringify({
          apiVersion: 'kustomize.config.k8s.io/v1alpha1',
          kind: 'Component',
          resources: componentFiles,
        }),
    )
  }

  await add(
    'kustomization.yaml',
    CHART,
    comments(
      'The full install, the chart with its defaults: `kubectl apply -k manifests/` (needs',
      'cert-manager in the cluster).',
      '  manifests/base                       everything but certificate provisioning',
      '  manifests/components/cert-manager    serving certificate and caBundle injection (included here)',
      ...OPTIONAL_COMPONENTS.map(
        (component) => `  manifests/components/${component.dir.padEnd(15)} ${component.summary}`,
      ),
    ) +
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: ['base'],
        components: ['components/cert-manager'],
      }),
  )
  return files
}

async function render(helm: Helm, values: readonly string[]): Promise<Rendered[]> {
  const text = await mustHelm(helm, ['template', RELEASE, CHART_DIR, '-n', NAMESPACE, ...values])
  const out: Rendered[] = []
  // YAML 1.1, as Kubernetes tools read it: `defaultMode: 0440` is octal and stays written so.
  for (const document of parseAllDocuments(text, { version: '1.1' })) {
    if (!('contents' in document)) continue
    if (document.errors.length > 0) throw new Error(`helm template: ${document.errors[0]?.message}`)
    // helm's `# Source: <chart>/templates/<file>` line: the file's name, then dropped.
    let source: string | undefined
    for (const holder of [document, document.contents]) {
      if (holder === null || !holder.commentBefore) continue
      const lines = holder.commentBefore.split('\n')
      source ??= lines
        .map((line) => /^ ?Source: [^/]+\/templates\/(.+)$/.exec(line)?.[1])
        .find((template) => template !== undefined)
      const rest = lines.filter((line) => !/^ ?Source: /.test(line))
      holder.commentBefore = rest.length > 0 ? rest.join('\n') : null
    }
    if (source === undefined) throw new Error('helm template: a document without `# Source:`')
    document.directives.docStart = null
    for (const label of Object.keys(HELM_ONLY_LABELS))
      document.deleteIn(['metadata', 'labels', label])
    const object = document.toJS() as K8sObject | null
    if (object === null) continue
    const key = `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`
    out.push({ template: source, key, object, document })
  }
  return out
}

function byKey(objects: readonly Rendered[]): Map<string, Rendered> {
  const keyed = new Map<string, Rendered>()
  for (const rendered of objects) {
    if (keyed.has(rendered.key)) throw new Error(`${rendered.key} is rendered twice`)
    keyed.set(rendered.key, rendered)
  }
  return keyed
}

/** The documents grouped by their template's file name, in helm's order. */
function byTemplate(objects: readonly Rendered[]): Map<string, Rendered[]> {
  const grouped = new Map<string, Rendered[]>()
  for (const rendered of objects) {
    const group = grouped.get(rendered.template) ?? []
    group.push(rendered)
    grouped.set(rendered.template, group)
  }
  return grouped
}

function withoutPlaceholderCaBundle(object: K8sObject): void {
  const webhooks = object['webhooks']
  if (!Array.isArray(webhooks)) return
  for (const webhook of webhooks as { clientConfig?: Record<string, unknown> }[])
    if (webhook.clientConfig?.['caBundle'] === PLACEHOLDER_CA_BUNDLE)
      delete webhook.clientConfig['caBundle']
}

/** The labels every object of the chart carries (beside Helm's own). */
function commonLabels(objects: readonly Rendered[]): Record<string, string> {
  const [first, ...rest] = objects.map((rendered) => rendered.object.metadata.labels ?? {})
  return Object.fromEntries(
    Object.entries(first ?? {}).filter(([key, value]) =>
      rest.every((labels) => labels[key] === value),
    ),
  )
}

/** The release namespace, which the chart leaves to its user (templates/NOTES.txt). */
function namespaceText(labels: Record<string, string>): string {
  return (
    comments(
      "The chart does not own its namespace (Helm's convention; its NOTES.txt asks for this label):",
      'the webhook runs here, labelled for the restricted Pod Security Standard the pods meet. The',
      'webhook configurations exclude this namespace, so the service never admits its own objects',
      '(and a broken webhook cannot block its own recovery).',
    ) +
    stringify({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: NAMESPACE,
        labels: { ...labels, 'pod-security.kubernetes.io/enforce': 'restricted' },
      },
    })
  )
}

function documentText(document: Document): string {
  const text = document.toString({ lineWidth: 100 })
  return text.endsWith('\n') ? text : `${text}\n`
}

function comments(...lines: string[]): string {
  return lines.map((line) => `# ${line}\n`).join('')
}

// The header: two fixed lines naming the source and the command, and the digests.
const HEADER_FIRST = `# Generated by \`${COMMAND}\` from the Helm chart, do not edit: change the chart`
const HEADER_SECOND = /^# \((manifests\/charts\/[^)]+)\) and run the command again\.$/
const HEADER_DIGESTS = /^# chart sha256:([0-9a-f]{16}), file sha256:([0-9a-f]{16})$/

function header(source: string, chart: string, file: string): string {
  return (
    `${HEADER_FIRST}\n` +
    `# (manifests/${source}) and run the command again.\n` +
    `# chart sha256:${chart}, file sha256:${file}\n`
  )
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16)
}

/** The header and `body`, formatted as `npm run format` would leave them. */
async function withHeader(path: string, source: string, body: string, chart: string) {
  const placeholder = header(source, chart, '0'.repeat(16))
  const options = (await resolveConfig(join(MANIFESTS_DIR, path))) ?? {}
  const formatted = await format(`${placeholder}\n${body}`, { ...options, parser: 'yaml' })
  if (!formatted.startsWith(placeholder))
    throw new Error(`${path}: prettier changed the generated header`)
  const rest = formatted.slice(placeholder.length)
  return header(source, chart, digest(rest)) + rest
}

/** A digest of every file of the chart: what the generated files were rendered from. */
export async function chartDigest(): Promise<string> {
  const hash = createHash('sha256')
  const paths = (await readdir(CHART_DIR, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => relative(CHART_DIR, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort()
  for (const path of paths) hash.update(`${path}\0`).update(await readFile(join(CHART_DIR, path)))
  return hash.digest('hex').slice(0, 16)
}

/**
 * What is wrong with a committed file under manifests/ (outside the chart), without helm: no
 * header (written by hand), edited since it was generated, or generated from another chart.
 * Undefined when nothing is.
 */
export function headerProblem(path: string, text: string, chart: string): string | undefined {
  const [first, second, third] = text.split('\n', 3)
  const rest = text.split('\n').slice(3).join('\n')
  const source = HEADER_SECOND.exec(second ?? '')?.[1]
  const digests = HEADER_DIGESTS.exec(third ?? '')
  if (first !== HEADER_FIRST || source === undefined || digests === null)
    return `manifests/${path} has no generated header: everything in manifests/ but ${CHART} is generated from the chart by \`${COMMAND}\`; change the chart instead`
  if (digests[2] !== digest(rest))
    return `manifests/${path} was edited after \`${COMMAND}\` wrote it: change the chart (${source}) and run \`${COMMAND}\``
  if (digests[1] !== chart)
    return `manifests/${path} was generated from another version of the chart: run \`${COMMAND}\``
  return undefined
}

/** The committed files under manifests/ but the chart, keyed as `generate` keys them. */
export async function committedFiles(): Promise<GeneratedFiles> {
  const files: GeneratedFiles = new Map()
  for (const entry of await readdir(MANIFESTS_DIR, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = relative(MANIFESTS_DIR, join(entry.parentPath, entry.name)).split(sep).join('/')
    if (path.startsWith(`${CHART.split('/')[0]}/`)) continue
    files.set(path, await readFile(join(MANIFESTS_DIR, path), 'utf8'))
  }
  return files
}

/** The committed files that differ from the generated ones, one line each; empty when none. */
export function differences(committed: GeneratedFiles, generated: GeneratedFiles): string[] {
  const out: string[] = []
  for (const [path, text] of generated) {
    const current = committed.get(path)
    if (current === undefined) out.push(`manifests/${path}: missing`)
    else if (current !== text) out.push(`manifests/${path}: differs from what the chart renders`)
  }
  for (const path of committed.keys())
    if (!generated.has(path)) out.push(`manifests/${path}: not generated from the chart`)
  return out
}

async function main(args: readonly string[]): Promise<number> {
  const check = args.includes('--check')
  const log = (line: string) => process.stderr.write(`${line}\n`)
  // The chart's generated parts first: the render below includes them.
  const sources = await sourceStates()
  for (const { source, generated, problem } of sources) {
    if (problem === undefined || check) continue
    if (generated === undefined) throw new Error(problem)
    await writeFile(join(MANIFESTS_DIR, source.path), generated)
    log(`wrote manifests/${source.path}`)
  }
  const helm = await helmFor(process.env['E2E_HELM'] || (await ensureHelm(log)))
  let generated: GeneratedFiles
  try {
    generated = await generate(helm)
  } finally {
    await helm.close()
  }
  const committed = await committedFiles()
  const stale = differences(committed, generated)
  if (check) {
    stale.unshift(...sources.flatMap(({ problem }) => (problem === undefined ? [] : [problem])))
    for (const line of stale) log(line)
    log(stale.length === 0 ? 'manifests: up to date' : `manifests: out of date, run \`${COMMAND}\``)
    return stale.length === 0 ? 0 : 1
  }
  for (const [path, text] of generated) {
    if (committed.get(path) === text) continue
    await mkdir(dirname(join(MANIFESTS_DIR, path)), { recursive: true })
    await writeFile(join(MANIFESTS_DIR, path), text)
    log(`wrote manifests/${path}`)
  }
  let kept = 0
  for (const [path, text] of committed) {
    if (generated.has(path)) continue
    if (!text.startsWith(HEADER_FIRST)) {
      log(`manifests/${path} is not generated and not written by hand here: move it elsewhere`)
      kept++
      continue
    }
    await rm(join(MANIFESTS_DIR, path))
    await rmdir(dirname(join(MANIFESTS_DIR, path))).catch(() => undefined)
    log(`removed manifests/${path}`)
  }
  log(`manifests: ${generated.size} files generated from manifests/${CHART}`)
  return kept === 0 ? 0 : 1
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.exitCode = await main(process.argv.slice(2))
}
