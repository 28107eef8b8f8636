/**
 * Issue 28's proof: `check --crds` gives the API server's verdict. The real kube-apiserver serves
 * a ToolHive release's own CRDs (no operator, and no mcp-admission webhooks registered: what is
 * compared is the CRD's verdict alone, which is all `--crds` adds; with our webhooks registered
 * both sides would run the same webhook code and prove nothing more). The same objects — every
 * ToolHive object in the release's examples, invalid variants derived from the schema of the four
 * kinds mcp-admission knows, and hand-written violators of the rules the issue names — go to a
 * server-side dry-run CREATE (what `kubectl create --dry-run=server --validate=warn` sends) and,
 * all at once, to `check --crds`. Every object must get the same verdict, the same
 * `field: message` causes (as a set: the API server's order follows Go map iteration) and the
 * same unknown-field warnings. A denial by one of our webhooks in `check` counts as the CRD's
 * admission. `check --kubeconfig` with the control plane's admin kubeconfig, which reads the same
 * CRDs back from the API server, must print exactly what `check --crds` prints.
 */

import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadObjects } from '../../src/cluster/load-objects.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { runCli } from '../helpers/cli.ts'
import { variantsOf } from './crd-parity/variants.ts'
import { startControlPlane } from './harness/control-plane.ts'
import { dryRunCreate } from './harness/dry-run.ts'
import type { DryRunAnswer } from './harness/dry-run.ts'
import { kubectlFor, mustKubectl } from './harness/kubectl.ts'
import { installReleaseCrds } from './harness/operator.ts'
import { releaseSources } from './toolhive/releases.ts'

const RELEASES = (process.env['E2E_CRD_PARITY_RELEASES'] ?? 'v0.63.0,v0.33.0').split(',')
const NAMESPACE = 'parity'
const GROUP = 'toolhive.stacklok.dev'

/** A valid spec of each kind mcp-admission knows: the variants break one thing at a time. */
const BASES: Record<string, Record<string, unknown>> = {
  MCPServer: { image: 'ghcr.io/example/server:1.0.0' },
  MCPRemoteProxy: { remoteUrl: 'https://mcp.example.com/mcp' },
  VirtualMCPServer: { groupRef: { name: 'group' }, incomingAuth: { type: 'anonymous' } },
  MCPWebhookConfig: { validating: [{ name: 'policy', url: 'https://policy.example.com' }] },
}

/** The violators issue 28 names (what v0.50–v0.55 added), on each workload kind. */
const NAMED_VIOLATORS: Record<string, unknown>[] = [
  { sessionStorage: { provider: 'memory', tls: {} } },
  {
    sessionStorage: {
      provider: 'redis',
      address: 'redis:6379',
      tls: { insecureSkipVerify: true, caCertSecretRef: { name: 'ca', key: 'ca.crt' } },
    },
  },
  {
    sessionStorage: {
      provider: 'redis',
      address: 'redis:6379',
      tls: { caCertSecretRef: { name: '', key: '' } },
    },
  },
  { proxyReadTimeout: '-1s' },
  { replica: 3 },
]

/** Hand-written violators of rules the generic variants do not reach, by kind. */
const HAND_VIOLATORS: Record<string, Record<string, unknown>[]> = {
  MCPServer: [{ sessionStorage: { provider: 'redis' } }],
  MCPRemoteProxy: [{ sessionStorage: { provider: 'redis' } }],
  VirtualMCPServer: [
    { sessionStorage: { provider: 'redis' } },
    { incomingAuth: { type: 'oidc' } },
    { config: { sessionStorage: { provider: 'redis', address: 'r:6379', tls: {} } } },
    { embeddingServerRef: { name: 'e' }, config: { optimizer: { embeddingProvider: 'openai' } } },
    {
      config: {
        optimizer: { embeddingProvider: 'openai', embeddingHeaders: { Authorization: 'x' } },
      },
    },
  ],
  MCPWebhookConfig: [{}],
}

interface CrdInfo {
  readonly plural: string
  readonly storage: string
  readonly specSchema: Record<string, unknown> | undefined
  readonly messages: readonly string[]
}

for (const release of RELEASES) {
  t.test(`check --crds and kube-apiserver agree on ToolHive ${release}'s CRDs`, async (t) => {
    const { crds, examples } = await releaseSources(release)
    const plane = await startControlPlane()
    const work = await mkdtemp(join(tmpdir(), 'mcp-admission-parity-'))
    t.teardown(async () => {
      await plane.stop()
      await rm(work, { recursive: true, force: true })
    })
    const kubectl = kubectlFor(plane.kubeconfig)
    await installReleaseCrds(kubectl, crds)
    await mustKubectl(kubectl, ['create', 'namespace', NAMESPACE])

    const infos = new Map(
      (await loadObjects([crds])).map((crd) => [
        String((crd.spec as any).names.kind),
        crdInfo(crd),
      ]),
    )
    const objects = [
      ...(await loadObjects([examples])).filter((o) => infos.has(String(o.kind))),
      ...generated(infos),
    ].map((object, i) => ({
      ...object,
      metadata: { ...object.metadata, name: `o-${i}`, namespace: NAMESPACE },
    }))
    t.comment(`${release}: ${objects.length} objects`)

    const file = join(work, 'objects.json')
    await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }))
    const check = await runCli(['check', '--crds', crds, '--namespace', NAMESPACE, file])
    t.not(check.code, 2, check.stderr)
    const ours = parseReport(check.stdout)

    // The same CRDs read from the cluster (`--kubeconfig`) give the same report, word for word.
    const fromCluster = await runCli([
      'check',
      '--kubeconfig',
      plane.kubeconfig,
      '--namespace',
      NAMESPACE,
      file,
    ])
    t.equal(fromCluster.stderr, '', 'check --kubeconfig read the CRDs')
    t.equal(fromCluster.code, check.code, 'check --kubeconfig: the same exit code as --crds')
    t.ok(
      fromCluster.stdout === check.stdout,
      `check --kubeconfig prints what check --crds prints (${firstDifference(fromCluster.stdout, check.stdout)})`,
    )

    const answers = await inBatches(objects, 4, (object) =>
      dryRunCreate(plane, pathOf(object, infos), object),
    )
    const mismatches: string[] = []
    const seenMessages = new Set<string>()
    objects.forEach((object, i) => {
      const api = answers[i]!
      const label = `${String(object.kind)} ${NAMESPACE}/${object.metadata.name}`
      const mine = ours.get(label)
      for (const cause of api.causes) seenMessages.add(cause.replace(/^[^:]*: Invalid value: /, ''))
      const problem = compare(api, mine)
      if (problem !== undefined)
        mismatches.push(`${label} (${String((object as any).label ?? 'example')}): ${problem}`)
    })
    if (process.env['E2E_PARITY_MISMATCHES']) {
      await writeFile(
        `${process.env['E2E_PARITY_MISMATCHES']}-${release}.txt`,
        mismatches.join('\n'),
      )
    }
    t.same(
      mismatches.slice(0, 25),
      [],
      `${mismatches.length} of ${objects.length} objects disagree`,
    )

    const denied = answers.filter((a) => a.code >= 400).length
    t.comment(`${release}: ${denied} denied, ${objects.length - denied} admitted, by both`)
    const rules = [...new Set([...infos.values()].flatMap((i) => i.messages))]
    const uncovered = rules.filter((m) => ![...seenMessages].some((s) => s.includes(m)))
    t.comment(
      `${release}: ${rules.length - uncovered.length} of ${rules.length} CEL rule messages of the four kinds produced by a variant`,
    )
    for (const message of uncovered) t.comment(`  no variant breaks: ${message}`)
  })
}

function crdInfo(crd: KubeObject): CrdInfo {
  const spec = crd.spec as any
  const storage = (spec.versions as any[]).find((v) => v.storage === true)
  const root = storage?.schema?.openAPIV3Schema
  const messages: string[] = []
  const walk = (node: any) => {
    if (typeof node !== 'object' || node === null) return
    for (const rule of node['x-kubernetes-validations'] ?? [])
      messages.push(String(rule.message ?? `failed rule: ${rule.rule}`).trim())
    for (const child of Object.values(node.properties ?? {})) walk(child)
    walk(node.items)
    walk(node.additionalProperties)
  }
  if (Object.hasOwn(BASES, spec.names.kind)) walk(root?.properties?.spec)
  return {
    plural: spec.names.plural,
    storage: storage?.name,
    specSchema: root?.properties?.spec,
    messages,
  }
}

/** Schema-derived variants and the named violators, for the four kinds. */
function generated(infos: ReadonlyMap<string, CrdInfo>): KubeObject[] {
  const objects: KubeObject[] = []
  for (const [kind, base] of Object.entries(BASES)) {
    const info = infos.get(kind)
    if (info?.specSchema === undefined) continue
    const object = (spec: unknown, label: string) => ({
      apiVersion: `${GROUP}/${info.storage}`,
      kind,
      metadata: { name: 'x' },
      spec,
      label, // an unknown top-level field too: both sides must name it
    })
    objects.push(object(base, 'base'))
    for (const variant of variantsOf(info.specSchema, base))
      objects.push(object(variant.spec, variant.label))
    for (const violator of HAND_VIOLATORS[kind] ?? []) {
      objects.push(
        object(
          kind === 'MCPWebhookConfig' ? violator : { ...base, ...violator },
          JSON.stringify(violator),
        ),
      )
    }
    if (kind !== 'MCPWebhookConfig') {
      for (const violator of NAMED_VIOLATORS)
        objects.push(object({ ...base, ...violator }, JSON.stringify(violator)))
    }
  }
  return objects
}

function pathOf(object: KubeObject, infos: ReadonlyMap<string, CrdInfo>): string {
  const plural = infos.get(String(object.kind))!.plural
  return `/apis/${String(object.apiVersion)}/namespaces/${NAMESPACE}/${plural}`
}

interface OurVerdict {
  readonly crdDenied: boolean
  readonly causes: string[]
  readonly warnings: string[]
}

/** `check`'s report by object label: the CRD's denial and causes, and the unknown-field warnings. */
function parseReport(report: string): Map<string, OurVerdict> {
  const verdicts = new Map<string, OurVerdict>()
  let current: OurVerdict | undefined
  for (const line of report.split('\n')) {
    const denied = /^DENIED {3}(.+) by (its CustomResourceDefinition|the \w+ webhook):$/.exec(line)
    const admitted = /^admitted (.+): /.exec(line)
    if (denied || admitted) {
      current = {
        crdDenied: denied?.[2] === 'its CustomResourceDefinition',
        causes: [],
        warnings: [],
      }
      verdicts.set((denied ?? admitted)![1]!, current)
    } else if (line.startsWith('    warning: ')) {
      current?.warnings.push(line.slice('    warning: '.length))
    } else if (line.startsWith('    ') && current?.crdDenied) {
      current.causes.push(line.slice(4))
    }
  }
  return verdicts
}

function compare(api: DryRunAnswer, mine: OurVerdict | undefined): string | undefined {
  if (mine === undefined) return 'not in the check report'
  const apiDenied = api.code >= 400
  if (apiDenied !== mine.crdDenied) {
    return `API server ${apiDenied ? `denied (${api.causes.join('; ')})` : 'admitted'}, check ${mine.crdDenied ? `denied (${mine.causes.join('; ')})` : 'admitted'}`
  }
  const sorted = (list: readonly string[]) => [...list].sort().join('\n')
  // check's warnings include our webhooks' own: each of the API server's must be among them, and
  // each unknown field check names must be one the API server names.
  const missing = api.warnings.filter((w) => !mine.warnings.includes(w))
  const extra = mine.warnings.filter(
    (w) => w.startsWith('unknown field') && !api.warnings.includes(w),
  )
  if (missing.length > 0 || extra.length > 0) {
    return `warnings differ: only the API server's ${JSON.stringify(missing)}, only check's ${JSON.stringify(extra)}`
  }
  const causes = mine.causes.map((c) => unredacted(c, api.causes))
  // check lists at most 20 violations or 4 KiB (DESIGN §5) and counts the rest (`and 7 more
  // errors`), the API server lists every one: those listed must be among the API server's, and
  // the count must make up the whole.
  const more = /^and (\d+) more errors?$/.exec(causes.at(-1) ?? '')
  const listed = more ? causes.slice(0, -1) : causes
  const agree = more
    ? listed.every((c) => api.causes.includes(c)) &&
      listed.length + Number(more[1]) === api.causes.length
    : sorted(api.causes) === sorted(listed)
  if (!agree) {
    return `causes differ:\n  API server: ${[...api.causes].sort().join('\n              ')}\n  check:      ${[...mine.causes].sort().join('\n              ')}`
  }
  return undefined
}

/**
 * check's report redacts what looks like a secret (a value under a secret-like key, text after a
 * `#` that may be a URL fragment's token) where the API server prints it: such a cause stands for
 * the API server's cause it matches with REDACTED read as any text.
 */
function unredacted(cause: string, apiCauses: readonly string[]): string {
  if (!cause.includes('REDACTED')) return cause
  const pattern = new RegExp(
    `^${cause
      .split('REDACTED')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  )
  return apiCauses.find((c) => pattern.test(c)) ?? cause
}

/** Where two reports part, for a failure message (not the two whole reports). */
function firstDifference(a: string, b: string): string {
  const [left, right] = [a.split('\n'), b.split('\n')]
  const i = left.findIndex((line, n) => line !== right[n])
  if (i < 0 && left.length === right.length) return 'identical'
  const at = i < 0 ? left.length : i
  return `line ${at + 1}: ${JSON.stringify(left[at])} vs ${JSON.stringify(right[at])}`
}

async function inBatches<T, R>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = []
  for (let i = 0; i < items.length; i += size) {
    results.push(...(await Promise.all(items.slice(i, i + size).map(fn))))
  }
  return results
}
