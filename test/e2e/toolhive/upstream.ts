/**
 * `npm run upstream`: one line saying which github.com/stacklok/toolhive release is the newest the
 * Go module proxy serves, against the releases the e2e suite runs beside (OPERATOR_RELEASES in
 * releases.ts), so a release newer than the suite tests is noticed (the newest served release is
 * supported: docs/e2e.md#beside-the-toolhive-operator). It asks the proxy of `GOPROXY` (its first
 * entry, unless `direct` or `off`) or https://proxy.golang.org for the module's version list, and
 * for `@latest` only when the list holds no release; each request gives up after 10 s.
 *
 * Exit status: 0 once the proxy answered, whatever the answer; 1 when it could not be asked (the
 * line says why). With `--info`, as .ci/run calls it, always 0: the line is information, never a
 * failure. Node's fetch goes through `HTTPS_PROXY` only with `NODE_USE_ENV_PROXY=1` (Node 24).
 */

import { OPERATOR_RELEASES } from './releases.ts'

export const MODULE = 'github.com/stacklok/toolhive'
export const DEFAULT_PROXY = 'https://proxy.golang.org'
const TIMEOUT_MS = 10_000
const RELEASES_FILE = 'test/e2e/toolhive/releases.ts'

/** The proxy to ask: `GOPROXY`'s first entry when it names one, else the public proxy. */
export function proxyFrom(goproxy: string | undefined): string {
  const first = (goproxy ?? '').split(/[,|]/)[0]?.trim() ?? ''
  if (first === '' || first === 'direct' || first === 'off') return DEFAULT_PROXY
  return first.replace(/\/+$/, '')
}

/**
 * A release `vX.Y.Z` as its numeric triple; undefined for anything else (a pre-release, a
 * pseudo-version, `+incompatible`), which is no release. Three numbers compared in order are
 * semver's precedence for releases, so no semver library is needed.
 */
export function releaseOf(version: string): readonly [number, number, number] | undefined {
  const match = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.exec(version)
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined
}

/** Negative when release `a` precedes `b`, 0 when equal, positive when it follows (releases only). */
export function compareReleases(a: string, b: string): number {
  const [x, y] = [releaseOf(a), releaseOf(b)]
  if (!x || !y) throw new Error(`not a release: ${x ? b : a}`)
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]
}

/** The releases of an `@v/list` answer (one version a line, in no order), newest first. */
export function releasesOfList(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((version) => releaseOf(version) !== undefined)
    .sort((a, b) => compareReleases(b, a))
}

/** The one line for `newest` upstream against the pinned releases. */
export function upstreamLine(newest: string, pinned: readonly string[]): string {
  const tested = pinned
    .filter((release) => releaseOf(release))
    .sort((a, b) => compareReleases(b, a))
  const [newestTested, oldest] = [tested[0], tested.at(-1)]
  const line = `upstream: newest ${MODULE} release ${newest}`
  if (newestTested === undefined || oldest === undefined)
    return `${line}; the e2e suite pins no release: add it to OPERATOR_RELEASES (${RELEASES_FILE})`
  const pins =
    newestTested === oldest
      ? `${newestTested} (newest tested, oldest)`
      : `${newestTested} (newest tested), ${oldest} (oldest)`
  const order = compareReleases(newest, newestTested)
  const verdict =
    order > 0
      ? `${newest} is newer than the suite tests: add it to OPERATOR_RELEASES (${RELEASES_FILE})`
      : order === 0
        ? 'the suite tests the newest'
        : `the suite tests a release newer than this proxy lists`
  return `${line}; the e2e suite pins ${pins}: ${verdict}`
}

/** The one line when the proxy could not be asked. */
export function failureLine(proxy: string, reason: string): string {
  return `upstream: could not ask ${proxy} for ${MODULE}'s releases: ${reason}`
}

/** Why a request failed, in a few words (fetch's own message is only "fetch failed"). */
export function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError')
    return `no answer within ${timeoutMs / 1000} s`
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  const detail = cause?.code ?? cause?.message
  return typeof detail === 'string' ? `${error.message} (${detail})` : error.message
}

/**
 * The newest release of the module that `proxy` serves. Throws with the reason when it cannot
 * tell: no answer in time, an HTTP error, or no release at all.
 */
export async function newestUpstream(
  proxy: string,
  timeoutMs = TIMEOUT_MS,
  fetchImpl: typeof fetch = fetch,
): Promise<string> {
  // The proxy protocol spells an upper-case letter `!` and its lower case; this module has none.
  const base = `${proxy}/${MODULE.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`)}`
  const get = async (path: string): Promise<string> => {
    const response = await fetchImpl(`${base}/${path}`, { signal: AbortSignal.timeout(timeoutMs) })
    const text = await response.text()
    if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status}`)
    return text
  }
  const [newest] = releasesOfList(await get('@v/list'))
  if (newest !== undefined) return newest
  let latest: unknown
  try {
    latest = (JSON.parse(await get('@latest')) as { Version?: unknown }).Version
  } catch (error) {
    throw new Error(`no release in @v/list, and @latest: ${reasonOf(error, timeoutMs)}`, {
      cause: error,
    })
  }
  if (typeof latest === 'string' && releaseOf(latest)) return latest
  throw new Error(`no release in @v/list or @latest (${String(latest)})`)
}

async function main(args: readonly string[]): Promise<number> {
  const info = args.includes('--info')
  const proxy = proxyFrom(process.env['GOPROXY'])
  try {
    process.stdout.write(`${upstreamLine(await newestUpstream(proxy), OPERATOR_RELEASES)}\n`)
    return 0
  } catch (error) {
    process.stdout.write(`${failureLine(proxy, reasonOf(error, TIMEOUT_MS))}\n`)
    return info ? 0 : 1
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.exitCode = await main(process.argv.slice(2))
}
