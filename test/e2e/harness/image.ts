/**
 * The built image as the tests see it: its configuration as buildah stores it (what a kubelet's
 * runtime reads: entrypoint, command, environment, working directory, user), and its root file
 * system mounted from a throwaway working container, as a runtime prepares a container's root.
 */

import { execFile as execFileCallback, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { ensureImage } from '../image/build.ts'

const execFile = promisify(execFileCallback)

/** The image under test: the one test/e2e/run.ts built (E2E_IMAGE), else built (or reused) now. */
export async function imageUnderTest(log: (line: string) => void): Promise<string> {
  const given = process.env['E2E_IMAGE']
  if (given !== undefined && given !== '') return given
  return (await ensureImage(log)).id
}

export interface ImageConfig {
  readonly entrypoint: readonly string[]
  readonly cmd: readonly string[]
  readonly env: Readonly<Record<string, string>>
  readonly workdir: string
  readonly user: string
}

/** The OCI configuration of `image` (`buildah inspect`). */
export async function imageConfig(image: string): Promise<ImageConfig> {
  const { stdout } = await execFile('buildah', ['inspect', '--type', 'image', image], {
    maxBuffer: 16 << 20,
  })
  const config = (
    JSON.parse(stdout) as {
      OCIv1: {
        config: {
          Entrypoint?: string[]
          Cmd?: string[]
          Env?: string[]
          WorkingDir?: string
          User?: string
        }
      }
    }
  ).OCIv1.config
  return {
    entrypoint: config.Entrypoint ?? [],
    cmd: config.Cmd ?? [],
    env: Object.fromEntries(
      (config.Env ?? []).map((entry) => [
        entry.slice(0, entry.indexOf('=')),
        entry.slice(entry.indexOf('=') + 1),
      ]),
    ),
    workdir: config.WorkingDir || '/',
    user: config.User ?? '',
  }
}

export interface MountedImage {
  /** The container's root on the host: the image's layers with a writable layer on top. */
  readonly root: string
  /** Unmounts and removes the working container, and with it anything written to it. */
  remove(): Promise<void>
}

/**
 * A new working container of `image`, mounted. Removed by `remove()`, or when the process exits
 * without it (a test file that throws before its teardown), so none is left behind.
 */
export async function mountImage(image: string): Promise<MountedImage> {
  const container = (await execFile('buildah', ['from', '--pull=never', image])).stdout.trim()
  const atExit = () => {
    try {
      execFileSync('buildah', ['rm', container], { stdio: 'ignore' })
    } catch {
      // Already gone.
    }
  }
  process.once('exit', atExit)
  try {
    const root = (await execFile('buildah', ['mount', container])).stdout.trim()
    return {
      root,
      remove: async () => {
        process.off('exit', atExit)
        await execFile('buildah', ['rm', container])
      },
    }
  } catch (error) {
    process.off('exit', atExit)
    await execFile('buildah', ['rm', container]).catch(() => undefined)
    throw error
  }
}
