/** KubeView against a fake API server (real KubeApi, loopback HTTP): when it reports synced. */

import { pino } from 'pino'
import t from 'tap'
import { KubeView } from '../../src/cluster/kube-view.ts'
import { VIEW_RESOURCES } from '../../src/cluster/resources.ts'
import { startFakeKubeApi, statusObject } from '../helpers/fake-kube-api.ts'

t.test('onSynced is called once, when every resource has been listed', async (t) => {
  const fake = await startFakeKubeApi(t)
  fake.resourceVersion = '7'
  // What the view saw at each call: the hook exists to run before the view first reports synced.
  const calls: boolean[] = []
  const view = new KubeView({
    api: fake.api,
    logger: pino({ level: 'silent' }),
    reflector: { backoff: { initialMs: 1, maxMs: 5 } },
    onSynced: () => calls.push(view.isSynced()),
  })
  view.start()
  t.teardown(() => view.stop())

  const watches = await Promise.all(VIEW_RESOURCES.map(() => fake.nextWatch()))
  t.equal(view.isSynced(), true)
  t.same(calls, [true], 'once, with every resource listed')

  // A relist (the watch expired) is no new initial sync.
  const lists = () => fake.requests.filter((request) => !request.watch).length
  const listed = lists()
  watches[0]?.send('ERROR', statusObject(410, 'too old resource version'))
  await fake.nextWatch()
  t.equal(lists(), listed + 1, 'relisted')
  // The relist stores its objects before it watches again, so any call would have come by now.
  t.same(calls, [true], 'not called again')
})
