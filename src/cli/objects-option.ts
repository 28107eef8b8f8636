/**
 * Files named by an option rather than as operands (`--objects`): a problem with one says which
 * option named it (`--objects cluster.yaml: no such file or directory`), as a bad flag value does.
 */

import { ObjectFileError } from '../cluster/load-objects.ts'

/** Runs `load`; an ObjectFileError it throws is said again with `flag` in front. */
export async function namedBy<T>(flag: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (error) {
    if (error instanceof ObjectFileError) throw new ObjectFileError(`${flag} ${error.message}`)
    throw error
  }
}
