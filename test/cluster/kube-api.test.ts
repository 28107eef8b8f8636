/** KubeApi on a keep-alive connection: many requests over one socket leave nothing behind. */

import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createServer } from 'node:http'
import type { Socket } from 'node:net'
import { KubeConfig } from '@kubernetes/client-node'
import t from 'tap'
import { KubeApi } from '../../src/cluster/kube-api.ts'

t.test('reads over one pooled socket do not pile up timeout listeners', async (t) => {
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'application/json')
    response.end('{"kind":"ConfigMap"}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  // Client sockets as Node creates them (the agent that owns them is private to KubeApi).
  const clients: Socket[] = []
  const onSocket = (message: unknown) => clients.push((message as { socket: Socket }).socket)
  subscribe('net.client.socket', onSocket)
  t.teardown(() => unsubscribe('net.client.socket', onSocket))

  const { port } = server.address() as { port: number }
  const config = new KubeConfig()
  config.loadFromOptions({
    // client-node accepts a plain-http server only with skipTLSVerify set.
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  })
  const api = new KubeApi(config)
  t.teardown(() => {
    api.close()
  })
  for (let i = 0; i < 50; i++) t.same(await api.get('/api/v1/x'), { kind: 'ConfigMap' })

  t.equal(clients.length, 1, 'one keep-alive connection served every read')
  const listeners = clients[0]?.listenerCount('timeout') ?? -1
  t.ok(listeners >= 0 && listeners <= 2, `timeout listeners left on the socket: ${listeners}`)
})
