/**
 * What a change the mutating rules make means for the object as it is stored: `audit` reports a
 * patch as the invariant it restores ("RunConfig checksum stale: pods did not roll after the
 * RunConfig changed"), not only as JSON Patch paths. Pure: a patch operation in, a sentence out.
 */

import { ANNOTATIONS } from './names.ts'

/** A change as JSON Patch names it: the operation, the JSON Pointer, and the value added. */
export interface Change {
  readonly op: string
  readonly path: string
  readonly value?: unknown
}

interface Invariant {
  /** The JSON Pointer tokens of the value the rule writes (`*`: any array index). */
  readonly tokens: readonly string[]
  /** The meaning when the stored object lacks the value. */
  readonly missing: string
  /** The meaning when it holds another value. */
  readonly wrong: string
}

const POD_ANNOTATIONS = ['spec', 'template', 'metadata', 'annotations']

const INVARIANTS: readonly Invariant[] = [
  {
    tokens: [...POD_ANNOTATIONS, ANNOTATIONS.runConfigChecksum],
    missing: 'RunConfig checksum missing: pods will not roll when the RunConfig changes',
    wrong: 'RunConfig checksum stale: pods did not roll after the RunConfig changed',
  },
  {
    tokens: [...POD_ANNOTATIONS, ANNOTATIONS.mcpServerGeneration],
    missing: 'MCPServer generation missing: the proxy cannot tell which generation it runs',
    wrong: 'MCPServer generation stale: pods did not roll after the MCPServer changed',
  },
  {
    tokens: ['spec', 'template', 'spec', 'containers', '*', 'env'],
    missing: 'THV_MCPSERVER_GENERATION missing: the proxy does not read its generation',
    wrong:
      "THV_MCPSERVER_GENERATION not read from the pod's own generation annotation: old and new pods may race",
  },
  {
    tokens: ['spec', 'template', 'spec', 'terminationGracePeriodSeconds'],
    missing: 'terminationGracePeriodSeconds unset: 30 s for sessions to finish',
    wrong: 'terminationGracePeriodSeconds unset: 30 s for sessions to finish',
  },
  {
    tokens: ['spec', 'replicas'],
    missing: 'stdio server above one replica: a stdio server runs exactly one',
    wrong: 'stdio server above one replica: a stdio server runs exactly one',
  },
  {
    tokens: ['metadata', 'annotations', ANNOTATIONS.contentChecksum],
    missing: 'content checksum missing: stamped from the data, labels and annotations',
    wrong: 'content checksum stale: it does not match the RunConfig',
  },
]

/**
 * What one change means: one sentence per invariant it restores (adding a whole map, such as
 * pod-template annotations that were absent, may restore several), or the operation and path
 * for a change no rule is known to make.
 */
export function changeMeanings(change: Change): string[] {
  const tokens = pointerTokens(change.path)
  const meanings: string[] = []
  for (const invariant of INVARIANTS) {
    const shared = Math.min(tokens.length, invariant.tokens.length)
    const matches = invariant.tokens
      .slice(0, shared)
      .every((token, i) => token === '*' || token === tokens[i])
    // A change above the value counts only when what it adds holds the value.
    if (!matches || !holds(change.value, invariant.tokens.slice(tokens.length))) continue
    meanings.push(change.op === 'add' ? invariant.missing : invariant.wrong)
  }
  return meanings.length > 0 ? [...new Set(meanings)] : [`${change.op} ${change.path}`]
}

/** Whether `value` has something at `rest` (nothing left to follow: it is the value itself). */
function holds(value: unknown, rest: readonly string[]): boolean {
  const [token, ...deeper] = rest
  if (token === undefined) return true
  if (Array.isArray(value))
    return token === '*' && value.some((item: unknown) => holds(item, deeper))
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, token)) return false
  return holds((value as Record<string, unknown>)[token], deeper)
}

function pointerTokens(path: string): string[] {
  if (path === '') return []
  return path
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
}
