/**
 * Slow-API-server fallbacks are seen, not noisy (docs/enforcement.md#a-slow-api-server): each is
 * counted by the owner's kind, and the log says the first at once and then at most one line per
 * interval with how many came meanwhile.
 */

import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { createAdmission } from '../../src/admission/webhook.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { ClusterReadError } from '../../src/cluster/view.ts'
import type { ObjectKey, ReadOptions } from '../../src/cluster/view.ts'
import { buildAdmissionApp } from '../../src/http/app.ts'
import { FALLBACK_LOG_MESSAGE, fallbackLog } from '../../src/http/fallback-log.ts'
import { createMetrics } from '../../src/metrics/metrics.ts'
import { ANNOTATIONS } from '../../src/policy/names.ts'
import { memoryLogger } from '../helpers/app.ts'
import { review } from '../helpers/objects.ts'
import { proxyDeployment, workload } from '../helpers/proxy.ts'

t.test('the first fallback is logged at once, the rest once per interval', async (t) => {
  const { logger, lines } = memoryLogger('info')
  const log = fallbackLog(logger, 40)
  const said = () => lines().filter((line) => line['msg'] === FALLBACK_LOG_MESSAGE)
  log.record('MCPServer')
  t.match(said(), [{ fallbacks: 1, kinds: { MCPServer: 1 }, level: 'info' }])
  for (let i = 0; i < 5; i++) log.record('MCPServer')
  log.record('VirtualMCPServer')
  t.equal(said().length, 1, 'nothing more within the interval')
  await sleep(60)
  t.match(said()[1], { fallbacks: 6, kinds: { MCPServer: 5, VirtualMCPServer: 1 } })
  await sleep(100)
  t.equal(said().length, 2, 'a quiet interval says nothing')
  log.record('MCPRemoteProxy')
  t.match(said()[2], { fallbacks: 1, kinds: { MCPRemoteProxy: 1 } }, 'after quiet, at once again')
  log.record('MCPRemoteProxy')
  log.flush()
  t.match(said()[3], { fallbacks: 1 }, 'flushed at shutdown')
  log.flush()
  t.equal(said().length, 4)
})

t.test('the app counts each fallback by the owner kind and logs it', async (t) => {
  const view = new MemoryView([workload('MCPServer', 'demo')])
  const cached = view.get.bind(view)
  view.get = (key: ObjectKey, options: ReadOptions = {}) =>
    options.live
      ? Promise.reject(
          new ClusterReadError(`${key.kind} ${key.namespace}/${key.name}`, new Error('slow'), {
            deadlineMissed: true,
          }),
        )
      : cached(key)
  const metrics = createMetrics()
  const { logger, lines } = memoryLogger('info')
  const app = buildAdmissionApp({ admission: createAdmission({ view }), logger, metrics })
  t.teardown(() => app.close())
  const send = async (username: string) => {
    const deployment = proxyDeployment('MCPServer', 'demo', {
      podAnnotations: {
        [ANNOTATIONS.runConfigChecksum]: 'c0ffee',
        [ANNOTATIONS.mcpServerGeneration]: '1',
      },
    })
    const body = review(deployment) as unknown as { request: Record<string, unknown> }
    body.request['userInfo'] = { username }
    const reply = await app.inject({
      method: 'POST',
      url: '/mutate',
      headers: { 'content-type': 'application/json' },
      payload: body,
    })
    return reply.json<{ response: { allowed: boolean } }>().response.allowed
  }
  t.equal(await send('system:serviceaccount:toolhive-system:toolhive-operator'), true)
  t.equal(await send('system:serviceaccount:toolhive-system:toolhive-operator'), true)
  t.equal(await send('kubernetes-admin'), false, 'refused: not counted')
  const text = await metrics.registry.metrics()
  t.match(text, /^mcp_admission_live_read_fallbacks_total\{kind="MCPServer"\} 2$/m)
  t.equal(lines().filter((line) => line['msg'] === FALLBACK_LOG_MESSAGE).length, 1)
})
