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
 *
 * Coverage is asserted, not just counted: every `x-kubernetes-validations` rule of the four kinds
 * must be broken by some object the API server denies with that rule's message at the rule's
 * node (crd-parity/objects.ts holds the hand-written violators; a rule no object can reach would
 * be listed in UNREACHABLE_RULES with the reason: none is). And the webhooks are never stricter
 * than the CRD: every object the API server admits, `check` without CRDs admits too, but for the
 * MCPWebhookConfig cases in KNOWN_STRICTER (the rules of docs/enforcement.md#mcpwebhookconfig,
 * which its CRD does not state). The workload kinds have no such case: the webhooks alone deny none
 * of their objects at all, whatever the CRD says of it (docs/cli.md#the-crds-schemas-and-cel-rules:
 * the CRDs are the one statement of what they may hold).
 */

import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadObjects } from '../../src/cluster/load-objects.ts'
import { WORKLOAD_KINDS } from '../../src/policy/kinds.ts'
import type { KubeObject } from '../../src/policy/kube/object.ts'
import { runCli } from '../helpers/cli.ts'
import { causeOfRule, crdInfo, generated, UNREACHABLE_RULES } from './crd-parity/objects.ts'
import type { CrdInfo } from './crd-parity/objects.ts'
import { parseReport } from './crd-parity/report.ts'
import type { CheckVerdict } from './crd-parity/report.ts'
import { dryRunCreate } from './harness/dry-run.ts'
import type { DryRunAnswer } from './harness/dry-run.ts'
import { mustKubectl, startEnvironment } from './harness/environment.ts'
import { releaseSources } from './toolhive/releases.ts'

const RELEASES = (process.env['E2E_CRD_PARITY_RELEASES'] ?? 'v0.63.0,v0.33.0').split(',')
const NAMESPACE = 'parity'

for (const release of RELEASES) {
  t.test(`check --crds and kube-apiserver agree on ToolHive ${release}'s CRDs`, async (t) => {
    const { crds, examples } = await releaseSources(release)
    // The release's CRDs alone: no identity, no service, no webhooks (see above).
    const { plane, kubectl } = await startEnvironment(t, {
      crds: [crds],
      identity: false,
      service: false,
    })
    const work = await mkdtemp(join(tmpdir(), 'mcp-admission-parity-'))
    t.teardown(() => rm(work, { recursive: true, force: true }))
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
    objects.forEach((object, i) => {
      const api = answers[i]!
      const problem = compare(api, ours.get(labelOf(object)))
      if (problem !== undefined) mismatches.push(`${labelOf(object)} (${what(object)}): ${problem}`)
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

    // Every CEL rule of the four kinds is broken by some object: the API server denies it with
    // the rule's message at the rule's node. A rule no object can break is listed, with why.
    const causesByKind = new Map<string, string[]>()
    objects.forEach((object, i) => {
      const kind = String(object.kind)
      causesByKind.set(kind, [...(causesByKind.get(kind) ?? []), ...answers[i]!.causes])
    })
    const rules = [...infos.values()].flatMap((info) => info.rules)
    const unreachable = (rule: { kind: string; message: string }) =>
      UNREACHABLE_RULES.some((u) => u.kind === rule.kind && u.message === rule.message)
    const broken = (rule: (typeof rules)[number]) =>
      (causesByKind.get(rule.kind) ?? []).some((cause) => causeOfRule(rule, cause))
    t.same(
      rules.filter((rule) => !broken(rule) && !unreachable(rule)).map(ruleName),
      [],
      `${release}: every CEL rule of the four kinds is broken by an object the API server denies with its message (${rules.filter(broken).length} of ${rules.length})`,
    )
    t.same(
      rules.filter((rule) => broken(rule) && unreachable(rule)).map(ruleName),
      [],
      'no rule listed as unreachable is broken after all',
    )

    // The webhooks are never stricter than the CRD (issue 28, item 3): what the API server
    // admits with the release's CRDs alone, `check` admits with mcp-admission's own rules alone
    // (no --crds), but for the known cases: MCPWebhookConfig has rules of its own
    // (docs/enforcement.md#mcpwebhookconfig).
    const webhooksOnly = await runCli(['check', '--namespace', NAMESPACE, file])
    t.not(webhooksOnly.code, 2, webhooksOnly.stderr)
    const byWebhooks = parseReport(webhooksOnly.stdout)

    // For the workload kinds there is no known case, nor anything stricter to know of: the
    // webhooks alone deny none of their objects, those the API server denies included, so they
    // repeat no rule of a CRD (docs/cli.md#the-crds-schemas-and-cel-rules).
    const workloads = objects.filter((o) => (WORKLOAD_KINDS as readonly unknown[]).includes(o.kind))
    const workloadDenials: string[] = []
    for (const object of workloads) {
      const verdict = byWebhooks.get(labelOf(object))
      if (verdict === undefined || verdict.webhookDenied) {
        const causes = verdict?.causes.join('; ') ?? 'not in the report'
        workloadDenials.push(`${String(object.kind)} ${what(object)}: ${causes}`)
      }
    }
    t.same(
      workloadDenials.slice(0, 25),
      [],
      `${release}: the webhooks alone deny ${workloadDenials.length} of ${workloads.length} workload objects`,
    )

    const stricter = new Map<string, string[]>()
    objects.forEach((object, i) => {
      if (answers[i]!.code >= 400) return
      const verdict = byWebhooks.get(labelOf(object))
      if (verdict === undefined || verdict.webhookDenied)
        stricter.set(
          `${String(object.kind)} ${what(object)}`,
          verdict?.causes ?? ['not in the report'],
        )
    })
    t.comment(
      `${release}: ${objects.length - denied} objects the CRDs admit, ${stricter.size} of them denied by the webhooks alone (all known)`,
    )
    t.same(
      [...stricter].filter(([key, causes]) => !knownStricter(release, key, causes)),
      [],
      'the webhooks alone deny nothing the CRDs admit but the known cases',
    )
    t.same(
      knownOf(release)
        .filter((known) => !stricter.has(known.object))
        .map((known) => known.object),
      [],
      'every known case is still denied (else drop it from KNOWN_STRICTER)',
    )
  })
}

const labelOf = (object: KubeObject) =>
  `${String(object.kind)} ${NAMESPACE}/${String(object.metadata?.name)}`
/** What an object is: a label for generated ones, `example` for the release's own. */
const what = (object: KubeObject) => (object as { label?: string }).label ?? 'example'
const ruleName = (rule: { kind: string; path: string; message: string }) =>
  `${rule.kind} ${rule.path}: ${rule.message}`

/**
 * Objects the CRDs admit and mcp-admission's own rules deny, on purpose: the rules of
 * docs/enforcement.md#mcpwebhookconfig (the CRD of either tested release states none of them), and
 * VirtualMCPCompositeToolDefinition's CRD states none of upstream's workflow rules
 * (docs/enforcement.md, "Composite tool definitions"); only for those two kinds, as the type says.
 * `object` is `Kind label` (labels from crd-parity/objects.ts and variants.ts; `example` for a
 * release's own), `cause` the start of the denial's cause, `releases` those it is denied at (all
 * when absent).
 */
interface KnownStricter {
  readonly object: `MCPWebhookConfig ${string}` | `VirtualMCPCompositeToolDefinition ${string}`
  readonly cause: string
  readonly releases?: readonly string[]
}
const KNOWN_STRICTER: readonly KnownStricter[] = [
  // A webhook's name is unique within the config, across validating and mutating.
  {
    object: 'MCPWebhookConfig spec rules: filled',
    cause: 'spec.mutating[0].name: Duplicate value: "abc"',
  },
  {
    object: 'MCPWebhookConfig edge: the same name in validating and mutating',
    cause: 'spec.mutating[0].name: Duplicate value: "policy"',
  },
  // ... and unique once sanitised (it becomes part of file and variable identifiers).
  {
    object: 'MCPWebhookConfig edge: names equal once sanitised',
    cause: 'spec.validating[1].name: Duplicate value: "a_b": collides with "a-b"',
  },
  // timeout 0 (the default) or between 1s and 30s; the CRD takes any duration.
  ...['500ms', '45s', '1m30s'].map((timeout): KnownStricter => ({
    object: `MCPWebhookConfig edge: timeout ${timeout}`,
    cause: `spec.validating[0].timeout: Invalid value: "${timeout}": must be between 1s and 30s`,
  })),
  // url absolute with scheme and host, http(s), no user-info or fragment, https unless
  // insecureSkipVerify; the CRD's `format: uri` takes all of these.
  {
    object: 'MCPWebhookConfig edge: http url',
    cause: 'spec.validating[0].url: Invalid value: "http://policy.example.com": must use https',
  },
  {
    object: 'MCPWebhookConfig edge: url with user info',
    cause:
      'spec.validating[0].url: Invalid value: "https://REDACTED@policy.example.com": must not contain user information',
  },
  {
    object: 'MCPWebhookConfig edge: url with a fragment',
    cause:
      'spec.validating[0].url: Invalid value: "https://policy.example.com/#REDACTED": must not contain a fragment',
  },
  {
    object: 'MCPWebhookConfig edge: url with another scheme',
    cause:
      'spec.validating[0].url: Invalid value: "ftp://policy.example.com": scheme must be http or https',
  },
  {
    object: 'MCPWebhookConfig edge: url without host',
    cause: 'spec.validating[0].url: Invalid value: "https:///path": must be an absolute URL',
  },
  // Client certificate and key refs both or neither.
  {
    object: 'MCPWebhookConfig edge: client cert without key',
    cause: 'spec.validating[0].tlsConfig.clientKeySecretRef: Required value',
  },
  // A secret ref names a valid Secret (DNS subdomain) and key ([-._a-zA-Z0-9]+).
  {
    object: 'MCPWebhookConfig edge: secret ref name not a Secret name',
    cause:
      'spec.validating[0].hmacSecretRef.name: Invalid value: "Hmac_Secret": a lowercase RFC 1123 subdomain',
  },
  {
    object: 'MCPWebhookConfig edge: secret ref key with a slash',
    cause: 'spec.validating[0].hmacSecretRef.key: Invalid value: "a/b": a valid secret key',
  },
  {
    object: 'MCPWebhookConfig edge: secret ref empty',
    cause: 'spec.validating[0].hmacSecretRef.name: Required value',
  },
  // v0.33.0's interactive deploy example retries with `maxRetries`, a field ToolHive never had:
  // its retryCount is 0, which that release's own operator and vmcp refuse as well.
  {
    object: 'VirtualMCPCompositeToolDefinition example',
    cause: 'spec.steps[3].onError.retryCount: Invalid value: 0: must be at least 1',
    releases: ['v0.33.0'],
  },
]

/** The known cases of `release`. */
function knownOf(release: string): readonly KnownStricter[] {
  return KNOWN_STRICTER.filter((k) => k.releases === undefined || k.releases.includes(release))
}

function knownStricter(release: string, object: string, causes: readonly string[]): boolean {
  const known = knownOf(release).find((k) => k.object === object)
  return known !== undefined && causes.some((cause) => cause.startsWith(known.cause))
}

function pathOf(object: KubeObject, infos: ReadonlyMap<string, CrdInfo>): string {
  const plural = infos.get(String(object.kind))!.plural
  return `/apis/${String(object.apiVersion)}/namespaces/${NAMESPACE}/${plural}`
}

function compare(api: DryRunAnswer, mine: CheckVerdict | undefined): string | undefined {
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
  const causes = (mine.crdDenied ? mine.causes : []).map((c) => unredacted(c, api.causes))
  // check lists at most 20 violations or 4 KiB (docs/wire.md#behaviour-on-the-wire) and counts the
  // rest (`and 7 more errors`), the API server lists every one: those listed must be among the API
  // server's, and the count must make up the whole.
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
