/** A plain-http server on 127.0.0.1 for one test, closed (connections too) when the test ends. */

import { createServer } from 'node:http'
import type { RequestListener } from 'node:http'
import type { Test } from 'tap'

/** Starts `handler` on a free loopback port; resolves to its port. */
export async function loopbackServer(
  t: Pick<Test, 'teardown'>,
  handler: RequestListener,
): Promise<number> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return (server.address() as { port: number }).port
}
