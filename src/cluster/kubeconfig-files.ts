/**
 * The files a kubeconfig's current cluster and user name for TLS — `certificate-authority`,
 * `client-certificate`, `client-key` — read through the one bounded reader (files/bounded-read.ts)
 * and never by `@kubernetes/client-node`, whose synchronous, unbounded read blocks the event loop
 * for ever on a FIFO (SIGTERM included) and grows without end on `/dev/zero`. Regular files only,
 * of at most 1 MiB each; the `-data` forms are inline and stay the client's.
 */

import type { Cluster, User } from '@kubernetes/client-node'
import { MiB, readBoundedFile } from '../files/bounded-read.ts'
import { fileErrorReason } from '../files/file-errors.ts'

/** A CA bundle, a certificate chain or a key is some KiB; this is far above that. */
export const KUBECONFIG_TLS_FILE_MAX_BYTES = MiB

/** The paths (absolute, as the loader made them) the current cluster and user name. */
export interface TlsFilePaths {
  readonly ca?: string | undefined
  readonly cert?: string | undefined
  readonly key?: string | undefined
}

/** The bytes of each file named. */
export interface TlsFileContents {
  readonly ca?: Buffer | undefined
  readonly cert?: Buffer | undefined
  readonly key?: Buffer | undefined
}

/** A named file that cannot be read; `owner` is the cluster or user naming it (`user "u"`). */
export class KubeconfigFileError extends Error {
  override name = 'KubeconfigFileError'
  readonly owner: string

  constructor(owner: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.owner = owner
  }
}

/** The kubeconfig field of each path, in the words an error uses. */
const FIELDS = {
  ca: 'certificate-authority',
  cert: 'client-certificate',
  key: 'client-key',
} as const

/** The TLS files `cluster` and `user` name (the loader's `caFile`, `certFile`, `keyFile`). */
export function tlsFilePaths(cluster: Cluster, user: User | null): TlsFilePaths {
  return {
    ca: cluster.caFile || undefined,
    cert: user?.certFile || undefined,
    key: user?.keyFile || undefined,
  }
}

/**
 * Each named file's bytes; a KubeconfigFileError whose message is one line naming the field and
 * file (`client-certificate /dev/zero: not a regular file (a character device)`).
 */
export async function readTlsFiles(
  paths: TlsFilePaths,
  owners: { readonly cluster: string; readonly user: string },
): Promise<TlsFileContents> {
  const read = async (which: keyof TlsFilePaths): Promise<Buffer | undefined> => {
    const file = paths[which]
    if (file === undefined) return undefined
    try {
      return await readBoundedFile(file, KUBECONFIG_TLS_FILE_MAX_BYTES)
    } catch (error) {
      const owner = which === 'ca' ? owners.cluster : owners.user
      throw new KubeconfigFileError(owner, `${FIELDS[which]} ${file}: ${fileErrorReason(error)}`, {
        cause: error,
      })
    }
  }
  // One after another: the first problem is the one reported, the same on every run.
  const ca = await read('ca')
  const cert = await read('cert')
  const key = await read('key')
  return { ca, cert, key }
}
