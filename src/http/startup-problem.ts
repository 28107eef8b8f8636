/**
 * A start-up input that cannot work (a port in use, a missing file), named by the server setting
 * it came from. The HTTP layer knows its settings, not the flags that set them: the CLI turns the
 * setting into a flag name and prints one line (src/cli/startup-errors.ts).
 */

import type { ServerConfig } from './server-config.ts'
import { errorCode } from '../files/file-errors.ts'
import { errorMessage } from '../policy/messages/render.ts'

type StartupSetting = keyof ServerConfig

export class StartupProblem extends Error {
  override name = 'StartupProblem'
  readonly setting: StartupSetting
  /** The value as the user wrote it (a path, an address, a port). */
  readonly value: string
  /** What is wrong, in a few words: `no such file`, `address already in use`. */
  readonly reason: string

  constructor(setting: StartupSetting, value: string, reason: string, options?: ErrorOptions) {
    super(`${setting} ${value}: ${reason}`, options)
    this.setting = setting
    this.value = value
    this.reason = reason
  }
}

/** Which listener failed and how, as a problem with the setting the user can change. */
export function listenProblem(
  listener: { readonly host: StartupSetting; readonly port: StartupSetting },
  address: { readonly host: string; readonly port: number },
  error: unknown,
): StartupProblem {
  const port = String(address.port)
  switch (errorCode(error)) {
    case 'EADDRINUSE':
      return new StartupProblem(listener.port, port, 'address already in use', { cause: error })
    case 'EADDRNOTAVAIL':
      // The host is not an address of this machine.
      return new StartupProblem(listener.host, address.host, 'address not available', {
        cause: error,
      })
    case 'EACCES':
    case 'EPERM':
      return new StartupProblem(
        listener.port,
        port,
        'permission denied (ports below 1024 need privileges)',
        { cause: error },
      )
    default:
      return new StartupProblem(listener.port, port, `cannot listen: ${errorMessage(error)}`, {
        cause: error,
      })
  }
}
