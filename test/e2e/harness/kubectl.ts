/** Runs the machine's `kubectl` against the test control plane, the way a user would. */

import { execFile } from 'node:child_process'

export interface KubectlResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export type Kubectl = (args: readonly string[], stdin?: string) => Promise<KubectlResult>

/** A kubectl bound to `kubeconfig`. It never throws on a non-zero exit: tests assert on it. */
export function kubectlFor(kubeconfig: string): Kubectl {
  return (args, stdin) =>
    new Promise((resolve, reject) => {
      const child = execFile(
        'kubectl',
        [`--kubeconfig=${kubeconfig}`, ...args],
        { timeout: 60_000, maxBuffer: 16 << 20 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
          if (error && code === -1) reject(new Error(`kubectl: ${error.message}`))
          else resolve({ code, stdout, stderr })
        },
      )
      // Most commands never read standard input, and kubectl may exit before it is written: the
      // pipe's EPIPE is no failure of ours (the exit code and stderr say what happened). Unheard,
      // it was an uncaught exception that failed whichever test was polling with `get`.
      child.stdin?.on('error', () => undefined)
      child.stdin?.end(stdin ?? '')
    })
}

/** Like `kubectl`, but fails with its stderr when the exit code is not 0. */
export async function mustKubectl(
  kubectl: Kubectl,
  args: readonly string[],
  stdin?: string,
): Promise<string> {
  const result = await kubectl(args, stdin)
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`)
  return result.stdout
}
