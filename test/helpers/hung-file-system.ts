/**
 * A file system that has stopped answering, for tests of read deadlines and shutdown. To libuv a
 * hung mount (NFS, a FUSE daemon that is gone) is a thread pool whose threads are all held by
 * calls that do not return; here each is held by a blocking open of a FIFO with no writer (opened
 * without O_NONBLOCK), so any file operation queued meanwhile waits.
 */

import { execFileSync } from 'node:child_process'
import { closeSync, constants, openSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

/** Holds every thread of the pool (FIFOs made in `dir`); `release` gives each open its writer. */
export async function hungFileSystem(dir: string): Promise<{ release: () => Promise<void> }> {
  const threads = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4)
  const fifos = Array.from({ length: threads }, (_, i) => join(dir, `held-${i}`))
  for (const fifo of fifos) execFileSync('mkfifo', [fifo])
  // Queued first, these take the threads before anything queued after them.
  const opens = fifos.map((fifo) => open(fifo, 'r'))
  return {
    release: async () => {
      const writers: number[] = []
      for (const fifo of fifos) writers.push(await writerOf(fifo))
      for (const handle of await Promise.all(opens)) await handle.close()
      for (const fd of writers) closeSync(fd)
    },
  }
}

/** A write end of `fifo`, once its reader's open is under way (until then: ENXIO). */
async function writerOf(fifo: string): Promise<number> {
  for (;;) {
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error
      await sleep(10)
    }
  }
}
