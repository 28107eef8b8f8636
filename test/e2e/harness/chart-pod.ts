/**
 * The service run as the chart's pod runs it, without a container runtime: the Deployment's
 * container spec as `helm template` renders it, on the built image (its root file system and its
 * own configuration: entrypoint, command, environment, working directory), started in a private
 * mount namespace (`unshare`, as root) where the pod's volumes are bind mounts at their mount
 * paths (the service account's at the kubelet's path), the root file system is read-only, and
 * the process runs as the pod's user and groups with the pod's environment only. The network is
 * the host's: the API server is reached on loopback through KUBERNETES_SERVICE_HOST/PORT, as a
 * pod reaches it through the `kubernetes` Service.
 */

import { lstat, mkdir, realpath, stat } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startProcess } from './processes.ts'
import type { Managed } from './processes.ts'
import type { ImageConfig } from './image.ts'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
/** Where the ServiceAccount admission plugin mounts the token (kube-api-access-*). */
export const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount'
/** Docker's PATH for an image that sets none (the distroless image sets none). */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

type Json = Record<string, unknown>

export interface ChartContainer {
  readonly command: readonly string[] | undefined
  readonly args: readonly string[] | undefined
  /** `env` with `fieldRef`s resolved as the kubelet resolves them for this pod. */
  readonly env: Readonly<Record<string, string>>
  readonly runAsUser: number
  readonly runAsGroup: number
  readonly fsGroup: number | undefined
  readonly readOnlyRootFilesystem: boolean
  readonly automountServiceAccountToken: boolean
  readonly volumeMounts: readonly {
    readonly name: string
    readonly mountPath: string
    readonly readOnly: boolean
  }[]
  /** The volumes by name, as the chart renders them (`secret`, `configMap`, …). */
  readonly volumes: Readonly<Record<string, Json>>
  /** containerPort by port name. */
  readonly ports: Readonly<Record<string, number>>
  readonly readinessProbe: { readonly port: number; readonly path: string }
  readonly livenessProbe: { readonly port: number; readonly path: string }
}

/** The one container of the one Deployment in a chart's rendered objects. */
export function chartContainer(
  objects: readonly Json[],
  pod: { readonly namespace: string; readonly name: string },
): ChartContainer {
  const deployments = objects.filter((object) => object['kind'] === 'Deployment')
  if (deployments.length !== 1) throw new Error(`${deployments.length} Deployments rendered`)
  const podSpec = at(deployments[0], 'spec', 'template', 'spec')
  const containers = podSpec['containers'] as Json[]
  if (containers.length !== 1) throw new Error(`${containers.length} containers rendered`)
  const container = containers[0] as Json
  const podSecurity = (podSpec['securityContext'] ?? {}) as Json
  const security = { ...podSecurity, ...((container['securityContext'] ?? {}) as Json) }
  const ports = Object.fromEntries(
    ((container['ports'] ?? []) as Json[]).map((port) => [port['name'], port['containerPort']]),
  ) as Record<string, number>
  const probe = (name: string) => {
    const httpGet = at(container, name, 'httpGet')
    const port = httpGet['port']
    return {
      port: typeof port === 'number' ? port : (ports[String(port)] ?? Number.NaN),
      path: String(httpGet['path']),
    }
  }
  return {
    command: container['command'] as string[] | undefined,
    args: container['args'] as string[] | undefined,
    env: Object.fromEntries(
      ((container['env'] ?? []) as Json[]).map((entry) => [
        String(entry['name']),
        envValue(entry, pod),
      ]),
    ),
    runAsUser: security['runAsUser'] as number,
    runAsGroup: security['runAsGroup'] as number,
    fsGroup: podSecurity['fsGroup'] as number | undefined,
    readOnlyRootFilesystem: security['readOnlyRootFilesystem'] === true,
    // The API server's default is true; the ServiceAccount's own setting applies when unset.
    automountServiceAccountToken: podSpec['automountServiceAccountToken'] !== false,
    volumeMounts: ((container['volumeMounts'] ?? []) as Json[]).map((mount) => ({
      name: String(mount['name']),
      mountPath: String(mount['mountPath']),
      readOnly: mount['readOnly'] === true,
    })),
    volumes: Object.fromEntries(
      ((podSpec['volumes'] ?? []) as Json[]).map((volume) => [String(volume['name']), volume]),
    ),
    ports,
    readinessProbe: probe('readinessProbe'),
    livenessProbe: probe('livenessProbe'),
  }
}

function envValue(entry: Json, pod: { readonly namespace: string; readonly name: string }) {
  if (typeof entry['value'] === 'string') return entry['value']
  const fieldPath = (at(entry, 'valueFrom', 'fieldRef') as { fieldPath?: string }).fieldPath
  if (fieldPath === 'metadata.namespace') return pod.namespace
  if (fieldPath === 'metadata.name') return pod.name
  throw new Error(
    `env ${String(entry['name'])}: fieldRef ${String(fieldPath)} is not resolved here`,
  )
}

function at(object: unknown, ...path: string[]): Json {
  let value = object
  for (const key of path) {
    value = (value as Json | undefined)?.[key]
    if (value === undefined) throw new Error(`rendered container has no ${path.join('.')}`)
  }
  return value as Json
}

export interface ChartPodOptions {
  readonly container: ChartContainer
  /** The image's configuration, as the runtime reads it (harness/image.ts). */
  readonly image: ImageConfig
  /** The image's root file system, mounted from a working container: the pod's root. */
  readonly root: string
  /** Host directories holding each mounted volume's files, by volume name. */
  readonly volumes: Readonly<Record<string, string>>
  /** The service account volume's host directory (mounted when the pod automounts it). */
  readonly serviceAccountDir: string
  /** What the kubelet adds: KUBERNETES_SERVICE_HOST/PORT, HOSTNAME. */
  readonly kubeletEnv: Readonly<Record<string, string>>
  readonly logFile: string
}

export interface ChartPod {
  readonly process: Managed
  /** The pod's process id: its root is /proc/PID/root, its mount namespace /proc/PID/ns/mnt. */
  readonly pid: number
  readonly argv: readonly string[]
  /** The environment it was given: the image's, the kubelet's, the container's. */
  readonly env: Readonly<Record<string, string>>
}

/** Device nodes a runtime gives every container (the OCI runtime spec's default devices). */
const DEVICES = ['null', 'zero', 'full', 'random', 'urandom', 'tty']

/**
 * Starts the container's process on the image's root, in its own mount namespace, as a runtime
 * would: mount points made in the container's writable layer, /proc and a minimal /dev, the
 * volumes bound at their paths, the root then read-only (readOnlyRootFilesystem); returns at once.
 */
export async function startChartPod(options: ChartPodOptions): Promise<ChartPod> {
  const { container, image, root } = options
  const mounts = container.volumeMounts.map((mount) => {
    const source = options.volumes[mount.name]
    if (source === undefined) throw new Error(`no host directory for volume ${mount.name}`)
    return { ...mount, source }
  })
  if (container.automountServiceAccountToken) {
    mounts.push({
      name: 'kube-api-access',
      mountPath: SERVICE_ACCOUNT_MOUNT,
      readOnly: true,
      source: options.serviceAccountDir,
    })
  }
  for (const mount of mounts) await refuseLinks(root, mount.mountPath)
  const command = container.command ?? image.entrypoint
  const args = container.command === undefined ? (container.args ?? image.cmd) : container.args
  const argv = [...command, ...(args ?? [])]
  const env = {
    // A runtime's PATH for an image that sets none.
    PATH: DEFAULT_PATH,
    ...image.env,
    ...options.kubeletEnv,
    ...container.env,
  }
  const at = (path: string) => quote(join(root, path))
  // `mount -n`: no userspace mount table to update.
  const script = [
    'set -eu',
    `mkdir -p ${[at('proc'), at('dev'), ...mounts.map((mount) => at(mount.mountPath))].join(' ')}`,
    `mount -n -t proc proc ${at('proc')}`,
    `mount -n -t tmpfs -o mode=0755,nosuid dev ${at('dev')}`,
    ...DEVICES.flatMap((device) => [
      `touch ${at(`dev/${device}`)}`,
      `mount -n --bind /dev/${device} ${at(`dev/${device}`)}`,
    ]),
    ...mounts.flatMap((mount) => [
      `mount -n --bind ${quote(mount.source)} ${at(mount.mountPath)}`,
      ...(mount.readOnly ? [`mount -n -o remount,bind,ro ${at(mount.mountPath)}`] : []),
    ]),
    ...(container.readOnlyRootFilesystem ? [`mount -n -o remount,bind,ro ${quote(root)}`] : []),
    [
      // env -i: the pod's environment and nothing else (a test runner's NODE_OPTIONS, say).
      'exec env -i',
      ...Object.entries(env).map(([name, value]) => quote(`${name}=${value}`)),
      // setpriv sets the groups and no_new_privs; unshare enters the root and the working
      // directory, then takes the user (keeping the groups), which clears every capability.
      // Only what unshare needs for that stays in the bounding set: the rest is dropped
      // (capabilities.drop: [ALL]; allowPrivilegeEscalation: false is no_new_privs).
      'setpriv',
      `--regid=${container.runAsGroup}`,
      // The kubelet adds fsGroup to the container's supplementary groups.
      container.fsGroup === undefined ? '--clear-groups' : `--groups=${container.fsGroup}`,
      '--no-new-privs',
      '--bounding-set=-all,+sys_chroot,+setuid',
      '--inh-caps=-all',
      '--',
      'unshare',
      `--root=${quote(root)}`,
      `--wd=${quote(image.workdir)}`,
      `--setuid=${container.runAsUser}`,
      '--',
      ...argv.map(quote),
    ].join(' '),
  ].join('\n')
  // unshare(1) without --fork execs the shell, which execs env, setpriv, unshare, node: one pid.
  const process = startProcess(
    'chart-pod',
    'unshare',
    ['--mount', '--propagation', 'private', '--', 'sh', '-c', script],
    { logFile: options.logFile, env: { PATH: DEFAULT_PATH } },
  )
  const pid = process.child.pid
  if (pid === undefined) throw new Error(`cannot start the pod:\n${await process.tail()}`)
  return { process, pid, argv, env }
}

/**
 * A mount path must not pass through a link inside the image: followed from the host, an
 * absolute link would lead out of the container's root (runtimes resolve them inside it).
 */
async function refuseLinks(root: string, mountPath: string): Promise<void> {
  let path = root
  for (const part of mountPath.split('/').filter((p) => p !== '')) {
    path = join(path, part)
    const entry = await lstat(path).catch(() => undefined)
    if (entry === undefined) return
    if (entry.isSymbolicLink())
      throw new Error(`${mountPath}: ${relative(root, path)} is a link in the image`)
  }
}

/**
 * `argv` as a pod reads the cluster, without the rest of the pod: in a private mount namespace
 * (`unshare`, as root) with `serviceAccountDir` bind-mounted at the kubelet's path, and the
 * API server `server` (an https URL) named by KUBERNETES_SERVICE_HOST/PORT. One process: unshare
 * execs sh, which execs argv. `workDir` (created) holds the mount points.
 */
export async function withPodServiceAccount(
  serviceAccountDir: string,
  server: string,
  workDir: string,
  argv: readonly string[],
): Promise<{ readonly argv: string[]; readonly env: Record<string, string> }> {
  await mkdir(workDir, { recursive: true })
  const mounts = [{ mountPath: SERVICE_ACCOUNT_MOUNT, readOnly: true, source: serviceAccountDir }]
  const script = [
    'set -eu',
    ...(await mountCommands(mounts, workDir)),
    `exec ${argv.map(quote).join(' ')}`,
  ].join('\n')
  const url = new URL(server)
  return {
    argv: ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', script],
    env: { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port || '443' },
  }
}

/**
 * Mount commands for the volumes. A mount path that does not exist on the host is made in a
 * tmpfs that replaces its nearest existing ancestor (as the image's own, empty, directory): the
 * tmpfs is mounted aside, filled with the mount points and bind mounts, made read-only like the
 * rest of the root, then moved into place. Host directories are never created. The repository
 * (the image's files: node, dist/, node_modules) may live under that ancestor (a clone in /tmp,
 * where the chart mounts its serving certificates): it is bound back in, read-only, at its path.
 */
async function mountCommands(
  mounts: readonly { mountPath: string; readOnly: boolean; source: string }[],
  workDir: string,
): Promise<string[]> {
  const byAncestor = new Map<string, { mountPath: string; readOnly: boolean; source: string }[]>()
  for (const mount of mounts) {
    const ancestor = await existingAncestor(mount.mountPath)
    if (ancestor === '/') {
      throw new Error(`${mount.mountPath}: would hide ${ancestor}, which the pod needs`)
    }
    byAncestor.set(ancestor, [...(byAncestor.get(ancestor) ?? []), mount])
  }
  const commands: string[] = []
  const moves: string[] = []
  let index = 0
  for (const [ancestor, group] of byAncestor) {
    const aside = `mount-${index++}`
    const asidePath = join(workDir, aside)
    commands.push(
      `mkdir -p ${quote(asidePath)}`,
      `mount -n -t tmpfs -o mode=0755 pod ${quote(asidePath)}`,
    )
    for (const mount of group) {
      const target = join(asidePath, relative(ancestor, await underRealAncestor(mount.mountPath)))
      commands.push(
        `mkdir -p ${quote(target)}`,
        `mount -n --bind ${quote(mount.source)} ${quote(target)}`,
      )
      if (mount.readOnly) commands.push(`mount -n -o remount,bind,ro ${quote(target)}`)
    }
    const repo = REPO.replace(/\/+$/, '')
    if (repo.startsWith(`${ancestor}/`)) {
      const target = join(asidePath, relative(ancestor, repo))
      commands.push(
        `mkdir -p ${quote(target)}`,
        `mount -n --bind ${quote(repo)} ${quote(target)}`,
        `mount -n -o remount,bind,ro ${quote(target)}`,
      )
    }
    commands.push(`mount -n -o remount,ro ${quote(asidePath)}`)
    moves.push(`mount -n --move ${quote(aside)} ${quote(ancestor)}`)
  }
  // Moved last, by paths relative to workDir: once one covers an ancestor of workDir (/tmp),
  // workDir is reachable only through the shell's working directory.
  return [...commands, `cd ${quote(workDir)}`, ...moves, `cd ${quote(REPO)}`]
}

/** The nearest directory on the path that exists on the host, symlinks resolved (/var/run → /run). */
async function existingAncestor(path: string): Promise<string> {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (await isDirectory(dir)) return realpath(dir)
    if (dir === '/') return '/'
  }
}

/** `path` with its existing ancestor's symlinks resolved, so it lies under that ancestor. */
async function underRealAncestor(path: string): Promise<string> {
  const ancestor = await existingAncestor(path)
  let existing = dirname(path)
  while (!(await isDirectory(existing))) existing = dirname(existing)
  return join(ancestor, relative(existing, path))
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false
}

/** `value` as one single-quoted word of a POSIX shell. */
function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`
}
