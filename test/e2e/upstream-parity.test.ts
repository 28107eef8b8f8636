/**
 * The differential test of the three ToolHive checks mcp-admission ports, against upstream's own
 * Go functions at the newest release the suite runs beside (upstream-parity/main.go, built through
 * the release wrapper by harness/upstream-parity.ts):
 *
 * - composite tools (src/policy/composite-tool.ts against ValidateCompositeToolConfig): every
 *   generated definition (upstream-parity/composite-cases.ts) is accepted by both or refused by
 *   both; every element Go's error names is one of our violation paths or a prefix of one (a
 *   missing default by step index, a cycle by a step on a cycle Go's named step reaches); for an
 *   input with one defect, we name nothing else. `parameters` that Go refuses are warned about by
 *   ours (a JSON Schema, whose checks it only warns about); what Go's types cannot decode, ours
 *   refuses; what Go's validation panics on is listed apart.
 * - remote URLs (src/policy/remote-url.ts against ValidateRemoteURL): the same text, or both
 *   accept.
 * - templates (src/policy/go/template.ts against ValidateTemplate and ExtractReferences): both
 *   parse or both refuse, and the same references when they parse.
 *
 * Each family prints a one-line summary; each disagreement fails with its input and both answers.
 */

import { execFile } from 'node:child_process'
import t from 'tap'
import { compositeToolFindings } from '../../src/policy/composite-tool.ts'
import { parseGoTemplate } from '../../src/policy/go/template.ts'
import { remoteUrlRefusal } from '../../src/policy/remote-url.ts'
import { upstreamParity } from './harness/upstream-parity.ts'
import { compositeCases } from './upstream-parity/composite-cases.ts'
import { answered, explained, goFindings } from './upstream-parity/composite-judge.ts'
import { TOOLHIVE_FUNCTIONS, templateCases } from './upstream-parity/template-cases.ts'
import { urlCases } from './upstream-parity/url-cases.ts'

interface GoAnswer {
  readonly error: string | null
  readonly decodeError?: string
  readonly references?: readonly string[]
  readonly extractPanic?: string
  readonly panic?: string
}

type GoCase =
  | { readonly kind: 'composite'; readonly spec: unknown }
  | { readonly kind: 'url'; readonly url: string; readonly allowPrivateEndpoint: boolean }
  | { readonly kind: 'template'; readonly text: string }

async function judgeWithGo(
  cases: readonly GoCase[],
): Promise<{ release: string; answers: GoAnswer[] }> {
  const { release, binary } = await upstreamParity()
  const answers = await new Promise<GoAnswer[]>((resolve, reject) => {
    const child = execFile(binary, { maxBuffer: 256 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${binary}: ${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout) as GoAnswer[])
    })
    child.stdin?.end(JSON.stringify(cases))
  })
  if (answers.length !== cases.length)
    throw new Error(`${binary}: ${answers.length} answers to ${cases.length} cases`)
  return { release, answers }
}

const composites = compositeCases()
const urls = urlCases()
const templates = templateCases()
const { release, answers } = await judgeWithGo([
  ...composites.map(({ spec }) => ({ kind: 'composite' as const, spec })),
  ...urls.map((c) => ({ kind: 'url' as const, ...c })),
  ...templates.map((text) => ({ kind: 'template' as const, text })),
])
const goComposites = answers.slice(0, composites.length)
const goUrls = answers.slice(composites.length, composites.length + urls.length)
const goTemplates = answers.slice(composites.length + urls.length)

t.test(`composite tools: ValidateCompositeToolConfig of ToolHive ${release}`, async (t) => {
  t.ok(composites.length >= 500, `${composites.length} definitions`)
  const tally = {
    accepted: 0,
    refused: 0,
    warned: 0,
    undecodable: 0,
    panics: 0,
    disagreements: 0,
  }
  composites.forEach((input, i) => {
    const go = goComposites[i]!
    const ours = compositeToolFindings(input.spec, 'spec')
    const paths = ours.violations.map((violation) => violation.field)
    const verdict =
      paths.join(', ') || `accepted${ours.warnings.length > 0 ? ' with warnings' : ''}`
    if (go.panic !== undefined) {
      // Go's validation crashes on it: nothing to compare with, reported.
      tally.panics++
      t.comment(`Go panics: ${input.name}: ${go.panic}; ours: ${verdict}`)
      return
    }
    if (go.decodeError !== undefined) {
      // The CRD admits what Go's types cannot hold: the operator cannot read it, ours refuses it.
      if (paths.length > 0) tally.undecodable++
      else {
        tally.disagreements++
        t.fail(`${input.name}: Go cannot decode it, ours accepts it`, {
          input: JSON.stringify(input.spec),
          go: go.decodeError,
        })
      }
      return
    }
    const findings = go.error === null ? [] : goFindings(go.error, input.spec)
    const refusing = findings.filter((finding) => !finding.warned)
    const problems: string[] = []
    if (refusing.length === 0 && paths.length > 0)
      problems.push(
        go.error === null
          ? 'Go accepts it, ours refuses it'
          : 'Go refuses it only for what ours warns about, ours refuses it',
      )
    if (refusing.length > 0 && paths.length === 0) problems.push('Go refuses it, ours accepts it')
    for (const finding of findings)
      if (!answered(finding, { paths, warnings: ours.warnings }, input.spec))
        problems.push(
          `ours does not ${finding.warned ? 'warn about' : 'name'} Go's ${JSON.stringify(finding.text)}`,
        )
    if (input.defects === 'one' || input.defects === 'cycle')
      for (const path of paths)
        if (!explained(path, findings, input.spec))
          problems.push(`ours also names ${path}, Go does not`)
    if (problems.length > 0) {
      tally.disagreements++
      t.fail(`${input.name}: ${problems.join('; ')}`, {
        input: JSON.stringify(input.spec),
        go: go.error,
        ours: ours.violations.map((v) => `${v.field}: ${v.detail}`),
        warnings: ours.warnings,
      })
    } else if (go.error === null) tally.accepted++
    else if (paths.length === 0) tally.warned++
    else tally.refused++
  })
  t.comment(
    `composite tools: ${composites.length} definitions against ToolHive ${release}: ${tally.accepted} accepted and ${tally.refused} refused by both, ${tally.warned} refused by Go for parameters ours warns about, ${tally.undecodable} Go cannot decode and ours refuses, ${tally.panics} Go panics on (apart), ${tally.disagreements} disagreements`,
  )
  t.equal(tally.disagreements, 0, 'no composite definition judged differently')
})

t.test(`remote URLs: ValidateRemoteURL of ToolHive ${release}`, async (t) => {
  t.ok(
    urls.length >= 1000,
    `${urls.length / 2} URLs, each with allowPrivateEndpoint true and false`,
  )
  const tally = { accepted: 0, refused: 0, disagreements: 0 }
  urls.forEach((input, i) => {
    const go = goUrls[i]!.error ?? undefined
    const ours = remoteUrlRefusal(input.url, { allowPrivateEndpoint: input.allowPrivateEndpoint })
    if (ours === go) {
      if (go === undefined) tally.accepted++
      else tally.refused++
      return
    }
    tally.disagreements++
    t.fail(`${JSON.stringify(input.url)} (allowPrivateEndpoint ${input.allowPrivateEndpoint})`, {
      go: go ?? 'accepted',
      ours: ours ?? 'accepted',
    })
  })
  t.comment(
    `remote URLs: ${urls.length} cases against ToolHive ${release}: ${tally.accepted} accepted and ${tally.refused} refused with the same text by both, ${tally.disagreements} disagreements`,
  )
  t.equal(tally.disagreements, 0, 'no URL judged differently')
})

t.test(`templates: ValidateTemplate and ExtractReferences of ToolHive ${release}`, async (t) => {
  t.ok(templates.length >= 300, `${templates.length} templates`)
  const tally = { parsed: 0, panics: 0, refused: 0, disagreements: 0 }
  templates.forEach((text, i) => {
    const go = goTemplates[i]!
    const ours = parseGoTemplate(text, TOOLHIVE_FUNCTIONS)
    const goReferences = go.error === null ? [...(go.references ?? [])] : undefined
    // ExtractReferences panics on a {{template}} call without an argument, which ours knows.
    const same = !ours.ok
      ? go.error !== null
      : go.extractPanic !== undefined
        ? ours.extractPanics === true
        : ours.extractPanics !== true &&
          JSON.stringify(ours.references) === JSON.stringify(goReferences)
    if (same) {
      if (ours.ok) tally.parsed++
      else tally.refused++
      if (go.extractPanic !== undefined) tally.panics++
      return
    }
    tally.disagreements++
    t.fail(JSON.stringify(text), {
      go:
        go.error ??
        (go.extractPanic ? { extractPanic: go.extractPanic } : { references: goReferences }),
      ours: ours.ok
        ? { references: ours.references, extractPanics: ours.extractPanics ?? false }
        : ours.error,
    })
  })
  t.comment(
    `templates: ${templates.length} texts against ToolHive ${release}: ${tally.parsed} parsed with the same references (${tally.panics} on which ExtractReferences panics, as ours says) and ${tally.refused} refused by both, ${tally.disagreements} disagreements`,
  )
  t.equal(tally.disagreements, 0, 'no template judged differently')
})
