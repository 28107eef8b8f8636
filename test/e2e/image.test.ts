/**
 * What the built image holds, read from its root file system (a mounted working container) and
 * its configuration: what the chart-pod test cannot see by running it. The final stage has no
 * shell and no package manager; /app holds dist/, the production dependencies and the samples,
 * with no dev dependency, test file or dependency source map, all readable and none writable by
 * the pod's user; `npm ls --omit=dev` over /app is clean; it starts as `npm start` does; and its
 * size, against the node_modules it would have had, stays within a budget (docs/image.md).
 */

import { execFile as execFileCallback } from 'node:child_process'
import { lstat, readdir, readFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { imageReport, megabytes } from './image/build.ts'
import { imageConfig, imageUnderTest, mountImage } from './harness/image.ts'

const execFile = promisify(execFileCallback)
const REPO = fileURLToPath(new URL('../../', import.meta.url))
/** The image's size may grow to this before someone must look at why (it is ~240 MB). */
const SIZE_BUDGET_BYTES = 300e6
const NONROOT = 65532
/** What a shell or a package manager would be called, in any directory. */
const FORBIDDEN = ['sh', 'bash', 'dash', 'ash', 'busybox', 'apt', 'apt-get', 'dpkg', 'rpm', 'npm']

const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
  bin: Record<string, string>
  scripts: Record<string, string>
}
const image = await imageUnderTest((line) => {
  t.comment(line)
})
const config = await imageConfig(image)
const mounted = await mountImage(image)
t.teardown(() => mounted.remove())
const root = mounted.root
const files = await walk(root)
const app = files.filter((file) => file.path.startsWith('/app/'))

t.test('it starts as `npm start` does, as a numeric non-root user', async (t) => {
  const [node, ...words] = (pkg.scripts['start'] ?? '').split(' ')
  t.equal(node, 'node')
  t.same(config.entrypoint, ['/nodejs/bin/node', ...words.slice(0, -1)], 'flags and entry')
  t.equal(words.at(-2), pkg.bin['mcp-admission'])
  t.same(config.cmd, words.slice(-1), 'serve by default')
  t.equal(config.workdir, '/app')
  t.equal(config.env['NODE_ENV'], 'production')
  t.match(config.user, new RegExp(`^${NONROOT}:${NONROOT}$`), 'USER is numeric: runAsNonRoot')
})

t.test('no shell, no package manager: node is its only program', async (t) => {
  for (const file of files.filter((f) => FORBIDDEN.includes(basename(f.path))))
    t.fail(`${file.path} is in the image`)
  t.notOk(
    files.some((file) => file.path.startsWith('/var/lib/dpkg/')),
    'no package database',
  )
  // The build stages' npm settings (a CA file where a proxy re-signs TLS) stay in those stages.
  t.same(
    files.filter((file) => /(^|\/)\.?npmrc$|npm-ca\.crt$/.test(file.path)).map((f) => f.path),
    [],
    'no npm configuration',
  )
  const programs = files.filter(
    (file) =>
      file.kind === 'file' &&
      (file.mode & 0o111) !== 0 &&
      !file.path.startsWith('/app/') &&
      !/\.so(\.[\d.]+)?$/.test(file.path),
  )
  t.same(
    programs.map((file) => file.path),
    ['/nodejs/bin/node'],
    'executables outside /app: node and shared libraries only',
  )
})

t.test('/app: the build output, production dependencies and samples only', async (t) => {
  t.same((await readdir(join(root, 'app'))).sort(), [
    'dist',
    'node_modules',
    'package.json',
    'samples',
  ])
  // What npm marks dev-only in the lockfile: the devDependencies and everything only they need.
  const lock = JSON.parse(await readFile(join(REPO, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>
  }
  const devOnly = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && entry.dev)
  t.ok(devOnly.length > 100, `${devOnly.length} dev-only packages in the lockfile`)
  const present = new Set(app.map((file) => file.path))
  const shipped = devOnly.filter(([path]) => present.has(`/app/${path}`)).map(([path]) => path)
  t.same(shipped.slice(0, 5), [], 'no dev dependency')
  // Ours (test/ is never copied) and what packages publish: a test directory at a package's root,
  // files named as tests.
  const tests = app.filter(
    (file) =>
      /^\/app\/(test|src)\//.test(file.path) ||
      /node_modules\/(@[^/]+\/)?[^/]+\/(test|tests|__tests__|spec|specs)\//.test(file.path) ||
      /\.(test|spec)\.[cm]?[jt]s$/.test(file.path),
  )
  t.same(tests.map((file) => file.path).slice(0, 5), [], 'no test files')
  const maps = app.filter((f) => f.path.startsWith('/app/node_modules/') && f.path.endsWith('.map'))
  t.same(maps.map((file) => file.path).slice(0, 5), [], "no dependency's source map")
  t.ok(
    app.some((file) => file.path === '/app/dist/main.js'),
    'dist/main.js',
  )
})

t.test('`npm ls --omit=dev` over /app is clean', async (t) => {
  // The project's npm (the one running the suite) with the project's Node, on the image's files;
  // it exits 1 on a missing, invalid or extraneous package (not on an absent optional peer).
  const listed = await execFile('npm', ['ls', '--omit=dev', '--all', '--json'], {
    cwd: join(root, 'app'),
    maxBuffer: 16 << 20,
  }).then(
    (result) => ({ code: 0, ...result }),
    (error: unknown) => error as { code: number; stdout: string; stderr: string },
  )
  const tree = JSON.parse(listed.stdout) as {
    problems?: string[]
    dependencies?: Record<string, unknown>
  }
  t.same(tree.problems ?? [], [], 'no problems')
  t.equal(listed.code, 0, 'exit 0')
  t.ok(tree.dependencies?.['fastify'], "the tree is the image's")
})

t.test("the pod's user reads every file it runs and writes none", async (t) => {
  const shipped = files.filter((f) => f.path.startsWith('/app/') || f.path.startsWith('/nodejs/'))
  const unreadable = shipped.filter(
    (file) => file.kind !== 'link' && (file.mode & (file.kind === 'dir' ? 0o005 : 0o004)) === 0,
  )
  t.same(unreadable.map((file) => file.path).slice(0, 5), [], 'all readable by others')
  const writable = files.filter(
    (file) =>
      file.kind !== 'link' &&
      file.path !== '/tmp' &&
      ((file.mode & 0o002) !== 0 ||
        (file.uid === NONROOT && !file.path.startsWith('/home/nonroot'))),
  )
  t.same(
    writable.map((file) => file.path).slice(0, 5),
    [],
    'none writable by 65532 but its home and /tmp',
  )
})

t.test('its size, against the node_modules it would have had', async (t) => {
  const report = await imageReport(image)
  const shipped = bytes(app.filter((file) => file.path.startsWith('/app/node_modules/')))
  // The repository's node_modules is what `npm ci` without --omit=dev installs.
  const full = bytes(await walk(join(REPO, 'node_modules'), '/node_modules'))
  t.comment(
    `image ${megabytes(report.bytes)} in ${report.layers.length} layers; node_modules ${megabytes(shipped)}, against ${megabytes(full)} with dev dependencies`,
  )
  t.ok(report.bytes < SIZE_BUDGET_BYTES, `under ${megabytes(SIZE_BUDGET_BYTES)}`)
  t.ok(shipped * 3 < full, 'production node_modules under a third of the full install')
})

interface Entry {
  /** As the image names it: /app/dist/main.js. */
  readonly path: string
  readonly kind: 'file' | 'dir' | 'link' | 'other'
  readonly mode: number
  readonly uid: number
  readonly size: number
  readonly inode: number
}

/** Every entry under `dir`, named as from `as`, without following links. */
async function walk(dir: string, as = '/'): Promise<Entry[]> {
  const entries: Entry[] = []
  for (const name of await readdir(dir, { recursive: true })) {
    const stats = await lstat(join(dir, name))
    entries.push({
      path: join(as, name),
      kind: stats.isSymbolicLink()
        ? 'link'
        : stats.isDirectory()
          ? 'dir'
          : stats.isFile()
            ? 'file'
            : 'other',
      mode: stats.mode & 0o7777,
      uid: stats.uid,
      size: stats.size,
      inode: stats.ino,
    })
  }
  return entries
}

/** Bytes of the regular files, a hard-linked file once (the `node` package links its binary). */
function bytes(entries: readonly Entry[]): number {
  const seen = new Set<number>()
  let total = 0
  for (const entry of entries) {
    if (entry.kind !== 'file' || seen.has(entry.inode)) continue
    seen.add(entry.inode)
    total += entry.size
  }
  return total
}
