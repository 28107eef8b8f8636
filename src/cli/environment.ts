/**
 * Values from the environment, read one way everywhere: an empty variable is unset (as a pod
 * spec's `value: ""` or a shell's `X= cmd` mean), a boolean is read as Go's strconv.ParseBool
 * reads one (what a platform engineer used to Kubernetes tooling expects), and a path list is
 * split as kubectl splits KUBECONFIG. A boolean in other words is an error naming the variable
 * (setting-values.ts): a value that is misread silently (`MCP_ADMISSION_RECONCILER_ONLY=false`
 * turning the mode on) is worse than a start that fails.
 */

import { delimiter } from 'node:path'

export type Environment = Readonly<Record<string, string | undefined>>

/** The variable's value, or undefined when it is unset or empty. */
export function environmentValue(env: Environment, name: string): string | undefined {
  const value = env[name]
  return value === undefined || value === '' ? undefined : value
}

/** strconv.ParseBool's words: nothing else is a boolean (no `yes`, no `on`, no spaces). */
const TRUE_WORDS: readonly string[] = ['1', 't', 'T', 'TRUE', 'true', 'True']
const FALSE_WORDS: readonly string[] = ['0', 'f', 'F', 'FALSE', 'false', 'False']

/** The boolean a text spells, or undefined when it spells none. */
export function parseBoolean(text: string): boolean | undefined {
  if (TRUE_WORDS.includes(text)) return true
  if (FALSE_WORDS.includes(text)) return false
  return undefined
}

/**
 * A list of paths as kubectl reads KUBECONFIG: split at the platform's list separator (`:`, `;`
 * on Windows), empty entries dropped, a path named twice kept once (the first).
 */
export function pathList(text: string): string[] {
  return [...new Set(text.split(delimiter).filter((path) => path !== ''))]
}
