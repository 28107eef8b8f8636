/**
 * `npm run image`: the Dockerfile built with buildah (no daemon, no container runtime: RUN steps
 * in a chroot, on the host's network), then its size and layers printed. The end-to-end suite
 * builds it the same way before its tests (test/e2e/run.ts) and runs it as the chart's pod.
 *
 * Bases: the Dockerfile's own (the public Node and distroless images) when they can be pulled,
 * else bases made here from Debian's packages and the npm registry's Node 24 (./bases.ts).
 * `--bases public|local` (or MCP_ADMISSION_IMAGE_BASES) forces one. Every step is cached by
 * buildah's layer cache, keyed by each instruction and the content it copies: with nothing
 * changed a rebuild takes seconds; with only src/ changed, only tsc and the final COPY rerun.
 *
 * Usage: npm run image [-- --bases auto|public|local] [--tag NAME]…
 */

import { execFile as execFileCallback } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, promisify } from 'node:util'
import { run } from '../control-plane/binaries.ts'
import { ensureLocalBases } from './bases.ts'

const execFile = promisify(execFileCallback)
const REPO = fileURLToPath(new URL('../../../', import.meta.url))
/** A public base that cannot be pulled in this long is treated as unreachable. */
const PULL_TIMEOUT_MS = 180_000

export type BaseChoice = 'auto' | 'public' | 'local'

export interface BuiltImage {
  /** The image ID (sha256 hex), what the tests run. */
  readonly id: string
  /** `localhost/mcp-admission:<package version>`, and any extra tags asked for. */
  readonly names: readonly string[]
  readonly bases: 'public' | 'local'
  readonly seconds: number
}

export async function ensureImage(
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  options: { readonly bases?: BaseChoice; readonly tags?: readonly string[] } = {},
): Promise<BuiltImage> {
  const started = Date.now()
  const choice = options.bases ?? baseChoice(process.env['MCP_ADMISSION_IMAGE_BASES'])
  const dockerfile = await readFile(join(REPO, 'Dockerfile'), 'utf8')
  const defaults = globalArgs(dockerfile)
  const buildArgs: string[] = []
  let bases: 'public' | 'local' = 'public'
  if (choice !== 'local') {
    const unreachable = await pullPublicBases([defaults['BUILD_BASE'], defaults['RUNTIME_BASE']])
    if (unreachable !== undefined && choice === 'public') throw new Error(unreachable)
    if (unreachable !== undefined) {
      log(`image: the public bases cannot be pulled (${unreachable}); using local ones`)
      bases = 'local'
    }
  } else bases = 'local'
  if (bases === 'local') {
    const local = await ensureLocalBases(log)
    buildArgs.push('--build-arg', `BUILD_BASE=${local.build}`)
    buildArgs.push('--build-arg', `RUNTIME_BASE=${local.runtime}`)
  }

  const { version } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
    version: string
  }
  const names = [`localhost/mcp-admission:${version}`, ...(options.tags ?? [])]
  const work = await mkdtemp(join(tmpdir(), 'mcp-admission-image-'))
  try {
    const iidfile = join(work, 'iid')
    await run(
      'buildah',
      [
        'build',
        '--isolation=chroot',
        '--layers',
        // The bases are in the store by now: never ask a registry again.
        '--pull=never',
        `--iidfile=${iidfile}`,
        ...names.flatMap((name) => ['--tag', name]),
        ...buildArgs,
        '--file',
        join(REPO, 'Dockerfile'),
        REPO,
      ],
      REPO,
      log,
    )
    const id = (await readFile(iidfile, 'utf8')).trim().replace(/^sha256:/, '')
    return { id, names, bases, seconds: Math.round((Date.now() - started) / 1000) }
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

function baseChoice(value: string | undefined): BaseChoice {
  if (value === undefined || value === '' || value === 'auto') return 'auto'
  if (value === 'public' || value === 'local') return value
  throw new Error(`bases: expected auto, public or local, not ${value}`)
}

/** The Dockerfile's ARGs before its first FROM, with `${NAME}` references expanded. */
export function globalArgs(dockerfile: string): Record<string, string> {
  const args: Record<string, string> = {}
  for (const line of dockerfile.split('\n')) {
    if (/^FROM\s/i.test(line)) break
    const match = /^ARG\s+(\w+)=(\S+)\s*$/i.exec(line)
    if (match?.[1] === undefined || match[2] === undefined) continue
    args[match[1]] = match[2].replace(/\$\{(\w+)\}/g, (_, name: string) => args[name] ?? '')
  }
  return args
}

/** Pulls the bases; undefined when both are in the store, else why not. */
async function pullPublicBases(
  images: readonly (string | undefined)[],
): Promise<string | undefined> {
  for (const image of images) {
    if (image === undefined) return 'the Dockerfile names no default BUILD_BASE or RUNTIME_BASE'
    const pulled = await execFile('buildah', ['pull', '--quiet', image], {
      timeout: PULL_TIMEOUT_MS,
    }).then(
      () => undefined,
      (error: unknown) => {
        const stderr = (error as { stderr?: string }).stderr ?? String(error)
        return `${image}: ${stderr.trim().split('\n').at(-1) ?? ''}`
      },
    )
    if (pulled !== undefined) return pulled
  }
  return undefined
}

export interface ImageReport {
  readonly bytes: number
  readonly layers: readonly { readonly bytes: number; readonly createdBy: string }[]
}

/** The image's size and its layers (size, the instruction that made it), from buildah's store. */
export async function imageReport(image: string): Promise<ImageReport> {
  const { stdout } = await execFile('buildah', ['inspect', '--type', 'image', image], {
    maxBuffer: 16 << 20,
  })
  const inspected = JSON.parse(stdout) as {
    Manifest: string
    History: { created_by?: string; empty_layer?: boolean }[]
  }
  const manifest = JSON.parse(inspected.Manifest) as { layers: { size: number }[] }
  const history = inspected.History.filter((entry) => entry.empty_layer !== true)
  const layers = manifest.layers.map((layer, index) => ({
    bytes: layer.size,
    // `COPY dir:<digest> in ./dist` as buildah records it, shortened to `COPY dir in ./dist`.
    createdBy: (history[index]?.created_by ?? '')
      .replace(/^\/bin\/sh -c #\(nop\) /, '')
      .replace(/\b(dir|file):[0-9a-f]{64}/, '$1')
      .trim(),
  }))
  return { bytes: layers.reduce((sum, layer) => sum + layer.bytes, 0), layers }
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const { values } = parseArgs({
    options: {
      bases: { type: 'string', default: 'auto' },
      tag: { type: 'string', multiple: true, default: [] },
    },
  })
  const built = await ensureImage(undefined, {
    bases: baseChoice(values.bases),
    tags: values.tag,
  })
  const report = await imageReport(built.id)
  const lines = [
    `${built.names.join(', ')} (${built.id.slice(0, 12)}), ${built.bases} bases, built in ${built.seconds} s`,
    `size ${megabytes(report.bytes)} in ${report.layers.length} layers:`,
    ...report.layers.map(
      (layer) => `  ${megabytes(layer.bytes).padStart(9)}  ${layer.createdBy.slice(0, 100)}`,
    ),
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
}
