/**
 * Returns the memory a one-off load left behind to the operating system. Parsing a large view
 * (YAML above all) makes V8 grow its heap to several times what stays live, and V8 keeps those
 * pages until its memory reducer runs, which an always-busy server may never trigger: the process
 * would carry the load's peak as RSS for its whole life. A full, compacting "last resort" GC right
 * after the load, before the server reports ready, gives the pages back at once.
 *
 * The gc function is taken the way jest's leak detector takes it: `--expose-gc` set at run time
 * and the function read from a fresh context, so the service needs no extra Node flag.
 */

import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

type Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void

let gc: Gc | undefined

/** Runs a synchronous compacting GC that releases free heap pages; returns false if it cannot. */
export function releaseFreeHeap(): boolean {
  try {
    if (gc === undefined) {
      setFlagsFromString('--expose-gc')
      gc = runInNewContext('gc') as Gc
    }
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
    return true
  } catch {
    // Not worth failing a start for: the process keeps the peak, as it would have anyway.
    return false
  }
}
