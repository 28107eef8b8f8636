/**
 * The Go side of the upstream differential test (test/e2e/upstream-parity: ToolHive's own
 * composite-tool, remote-URL and template checks), built against the newest release the suite
 * runs beside (OPERATOR_RELEASES) through the same wrapper module as the operator
 * (toolhive/releases.ts: its replacements, its go.sum, the Go it asks for), and cached outside the
 * repository under `~/.cache/mcp-admission/upstream-parity/`, keyed by release, Go version, the
 * replacements and a hash of the program's sources. Run directly
 * (`node test/e2e/harness/upstream-parity.ts`) to build ahead.
 */

import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { OPERATOR_RELEASES, ensureReleaseBuild } from '../toolhive/releases.ts'
import { compareReleases } from '../toolhive/upstream.ts'

const sources = join(dirname(fileURLToPath(import.meta.url)), '..', 'upstream-parity')

/** The release the ports are compared with: the newest the suite runs beside. */
export function parityRelease(releases: readonly string[] = OPERATOR_RELEASES): string {
  const [newest] = [...releases].sort((a, b) => compareReleases(b, a))
  if (newest === undefined) throw new Error('no ToolHive release to compare with')
  return newest
}

export interface UpstreamParity {
  readonly release: string
  readonly binary: string
}

/** The built program and the release it runs. */
export async function ensureUpstreamParity(
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<UpstreamParity> {
  const release = parityRelease()
  const { binary } = await ensureReleaseBuild(
    release,
    {
      what: 'upstream-parity',
      title: 'upstream-parity checker',
      wrapperModule: 'mcp-admission-e2e/upstream-parity',
      binary: 'upstream-parity',
      target: '.',
      sources,
    },
    log,
  )
  return { release, binary }
}

/** The program `test/e2e/run.ts` built (E2E_UPSTREAM_PARITY, `release=path`), or one built now. */
export async function upstreamParity(): Promise<UpstreamParity> {
  const fromRunner = /^(v[^=]+)=(.+)$/.exec(process.env['E2E_UPSTREAM_PARITY'] ?? '')
  if (fromRunner?.[1] !== undefined && fromRunner[2] !== undefined)
    return { release: fromRunner[1], binary: fromRunner[2] }
  return ensureUpstreamParity()
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.stdout.write(`${JSON.stringify(await ensureUpstreamParity())}\n`)
}
