/**
 * A directory laid out as the kubelet's AtomicWriter lays out Secret and projected volumes (the
 * service account's token among them): the files in a timestamped `..<time>` directory, `..data`
 * a symlink to it, and each visible name a symlink through `..data`. An update writes a new
 * directory and renames a new `..data` over the old one, so a reader sees all old files or all
 * new ones, never a mix: that is what a token rotation looks like from inside a pod.
 */

import { chmod, chown, mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface KubeletVolumeOptions {
  /** The volume's `defaultMode` (e.g. 0o440 for the chart's Secret, 0o644 for kube-api-access). */
  readonly mode: number
  /** The pod's fsGroup: the kubelet gives it the volume's files, so the non-root user can read. */
  readonly gid: number
}

export class KubeletVolume {
  readonly dir: string
  readonly #options: KubeletVolumeOptions
  #generation = 0

  private constructor(dir: string, options: KubeletVolumeOptions) {
    this.dir = dir
    this.#options = options
  }

  /** A new volume in `dir` (created) holding `files`. */
  static async create(
    dir: string,
    files: Readonly<Record<string, string>>,
    options: KubeletVolumeOptions,
  ): Promise<KubeletVolume> {
    await mkdir(dir, { recursive: true })
    await chown(dir, 0, options.gid)
    await chmod(dir, 0o750)
    const volume = new KubeletVolume(dir, options)
    await volume.update(files)
    return volume
  }

  /** Replaces every file at once, as the kubelet does on a Secret change or token rotation. */
  async update(files: Readonly<Record<string, string>>): Promise<void> {
    const data = join(this.dir, '..data')
    const previous = await readlink(data).catch(() => undefined)
    const stamp = `..${new Date().toISOString().replace(/[-:T]/g, '_').replace('Z', '')}.${this.#generation++}`
    const generation = join(this.dir, stamp)
    await mkdir(generation)
    await chown(generation, 0, this.#options.gid)
    await chmod(generation, 0o750)
    for (const [name, content] of Object.entries(files)) {
      const file = join(generation, name)
      await writeFile(file, content)
      await chown(file, 0, this.#options.gid)
      await chmod(file, this.#options.mode)
    }
    const next = join(this.dir, '..data_tmp')
    await rm(next, { force: true })
    await symlink(stamp, next)
    await rename(next, data)
    for (const name of Object.keys(files)) {
      await symlink(join('..data', name), join(this.dir, name)).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      })
    }
    if (previous !== undefined) await rm(join(this.dir, previous), { recursive: true })
  }
}
