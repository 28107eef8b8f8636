/**
 * The chart's generated parts, which `npm run manifests` writes from the tables before it renders
 * the chart (so the render, and the kustomize files after it, already say what the tables say):
 * two whole templates and a section of each values file. Each is a function of the tables and,
 * for a section, of the rest of its committed file, so test/manifests/generated.test.ts compares
 * the committed files with them, without helm.
 */

import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { KINDS_TEMPLATE, KINDS_TEMPLATE_HEADER, kindsTemplate } from './kinds-template.ts'
import { withRuleActionsSchema, withRuleActionsValues } from './rule-actions-values.ts'
import {
  VALUES,
  VALUES_SCHEMA,
  WEBHOOKS_TEMPLATE,
  WEBHOOKS_TEMPLATE_HEADER,
  webhooksTemplate,
  withWebhookSchema,
  withWebhookValues,
} from './webhooks-template.ts'

const MANIFESTS_DIR = fileURLToPath(new URL('../../manifests/', import.meta.url))
const COMMAND = 'npm run manifests'

/** A chart file that is generated whole, or that holds a generated section. */
export interface ChartSource {
  /** Relative to manifests/. */
  readonly path: string
  /** The tables it is generated from, as messages name them. */
  readonly tables: string
  /** The first line of its header, for a file generated whole; a section has none. */
  readonly header?: string
  /** For a section: which. */
  readonly section?: string
  /** The file as it should be, given the committed one (undefined: none); throws if it cannot be. */
  readonly generate: (committed: string | undefined) => Promise<string>
}

const whole = (text: () => string) => () => Promise.resolve(text())
const inPlace =
  (path: string, put: (committed: string) => Promise<string>) => (committed: string | undefined) =>
    committed === undefined
      ? Promise.reject(new Error(`manifests/${path} is missing`))
      : put(committed)

export const CHART_SOURCES: readonly ChartSource[] = [
  {
    path: KINDS_TEMPLATE,
    tables: 'the kind and rule tables (src/policy/kinds.ts, src/policy/rules.ts)',
    header: KINDS_TEMPLATE_HEADER,
    generate: whole(() => kindsTemplate()),
  },
  {
    path: WEBHOOKS_TEMPLATE,
    tables:
      'the webhook, rule and kind tables (src/policy/webhooks.ts, src/policy/rules.ts, src/policy/kinds.ts)',
    header: WEBHOOKS_TEMPLATE_HEADER,
    generate: whole(() => webhooksTemplate()),
  },
  {
    path: VALUES,
    tables: 'the webhook and rule tables (src/policy/webhooks.ts, src/policy/rules.ts)',
    section: 'the `webhooks:` and `ruleActions:` keys, their comments and entries',
    generate: inPlace(VALUES, async (committed) =>
      withRuleActionsValues(await withWebhookValues(committed)),
    ),
  },
  {
    path: VALUES_SCHEMA,
    tables: 'the webhook and rule tables (src/policy/webhooks.ts, src/policy/rules.ts)',
    section: 'the "webhooks" and "ruleActions" properties',
    generate: inPlace(VALUES_SCHEMA, async (committed) =>
      withRuleActionsSchema(await withWebhookSchema(committed)),
    ),
  },
]

/** The committed text of `path` (relative to manifests/), or undefined when there is none. */
export async function committedText(path: string): Promise<string | undefined> {
  return readFile(join(MANIFESTS_DIR, path), 'utf8').catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  })
}

/** What a source should be against what is committed. */
export interface SourceState {
  readonly source: ChartSource
  /** What to write; undefined when it cannot be generated (`problem` says why). */
  readonly generated: string | undefined
  /** What is wrong with the committed file, or undefined when it is what the tables generate. */
  readonly problem: string | undefined
}

export async function sourceState(
  source: ChartSource,
  committed: string | undefined,
): Promise<SourceState> {
  const file = `manifests/${source.path}`
  let generated: string
  try {
    generated = await source.generate(committed)
  } catch (error) {
    return { source, generated: undefined, problem: (error as Error).message }
  }
  if (committed === generated) return { source, generated, problem: undefined }
  const what = source.section === undefined ? file : `${file}, ${source.section},`
  const problem =
    committed === undefined
      ? `${file} is missing: run \`${COMMAND}\``
      : source.header !== undefined && !committed.includes(source.header)
        ? `${file} has no generated header: it is generated from ${source.tables} by \`${COMMAND}\``
        : `${what} differs from what is generated (edited by hand, or a table changed since): change ${source.tables}, not the file, and run \`${COMMAND}\``
  return { source, generated, problem }
}

/** Every source against its committed file. */
export async function sourceStates(): Promise<SourceState[]> {
  return Promise.all(
    CHART_SOURCES.map(async (source) => sourceState(source, await committedText(source.path))),
  )
}
