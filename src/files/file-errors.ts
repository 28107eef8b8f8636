/**
 * A file-system error in a few words (`no such file`, `permission denied`), the same for every
 * file the service or the CLI reads: a certificate, a client CA, a kubeconfig, a pod's service
 * account. Here beside the one file reader, below http/, cluster/ and cli/, so that none of them
 * imports it from a layer above its own.
 */

import { getSystemErrorMessage } from 'node:util'
import { errorMessage } from '../policy/messages/render.ts'

/** Node's error code of a failed system call, if the error has one. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined
  return typeof error.code === 'string' ? error.code : undefined
}

/**
 * Words for a file-system error code; for any other system error the system's own words
 * (`name too long`), never Node's message, which repeats the whole path after the syscall.
 */
export function fileErrorReason(error: unknown): string {
  switch (errorCode(error)) {
    case 'ENOENT':
      return 'no such file'
    case 'EISDIR':
      return 'is a directory'
    case 'ENOTDIR':
      // A path component is a file: `/etc/hosts/ca.crt`.
      return 'not a directory'
    case 'EACCES':
    case 'EPERM':
      return 'permission denied'
    default: {
      const errno = (error as NodeJS.ErrnoException | undefined)?.errno
      return typeof errno === 'number' ? getSystemErrorMessage(errno) : errorMessage(error)
    }
  }
}
