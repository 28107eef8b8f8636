import t from 'tap'
import { createAdmission } from '../../src/admission/webhook.ts'
import { operatorWriter } from '../../src/admission/writer.ts'
import { MemoryView } from '../../src/cluster/memory-view.ts'
import { review, runConfigMap } from '../helpers/objects.ts'

t.test('the operator service account, in any namespace or one named', async (t) => {
  const cases: [string | undefined, unknown, 'operator' | 'other'][] = [
    [
      undefined,
      { username: 'system:serviceaccount:toolhive-system:toolhive-operator' },
      'operator',
    ],
    // The default names the namespace ToolHive's install guide uses.
    [undefined, { username: 'system:serviceaccount:platform:toolhive-operator' }, 'other'],
    [
      'toolhive-operator',
      { username: 'system:serviceaccount:platform:toolhive-operator' },
      'operator',
    ],
    [undefined, { username: 'system:serviceaccount:toolhive-system:default' }, 'other'],
    [undefined, { username: 'system:serviceaccount:a:toolhive-operator:x' }, 'other'],
    [undefined, { username: 'toolhive-operator' }, 'other'],
    [undefined, { username: 'kubernetes-admin' }, 'other'],
    [undefined, { username: 42 }, 'other'],
    [undefined, {}, 'other'],
    [undefined, null, 'other'],
    [undefined, 'system:serviceaccount:toolhive-system:toolhive-operator', 'other'],
    ['ops/thv', { username: 'system:serviceaccount:ops:thv' }, 'operator'],
    ['ops/thv', { username: 'system:serviceaccount:toolhive-system:thv' }, 'other'],
    ['thv', { username: 'system:serviceaccount:anywhere:thv' }, 'operator'],
  ]
  for (const [account, userInfo, expected] of cases) {
    t.equal(
      operatorWriter(account)(userInfo).writer,
      expected,
      `${account}: ${JSON.stringify(userInfo)}`,
    )
  }
})

t.test('only a namespace and a name make the exact operator account', async (t) => {
  const username = 'system:serviceaccount:ops:thv'
  t.same(operatorWriter('ops/thv')({ username }), { writer: 'operator', exactOperator: true })
  // A name alone is the operator for the metric's label, never trusted beyond it.
  t.same(operatorWriter('thv')({ username }), { writer: 'operator', exactOperator: false })
  t.same(operatorWriter('other/thv')({ username }), { writer: 'other', exactOperator: false })
  t.same(
    operatorWriter()({ username: 'system:serviceaccount:toolhive-system:toolhive-operator' }),
    {
      writer: 'operator',
      exactOperator: true,
    },
  )
})

t.test(
  'the admission names the writer of each routed review, by the account it is given',
  async (t) => {
    const admission = createAdmission({ view: new MemoryView(), operatorServiceAccount: 'ops/thv' })
    const writerFor = async (username: string) => {
      const body = review(runConfigMap()) as unknown as { request: Record<string, unknown> }
      body.request['userInfo'] = { username }
      const outcome = await admission.review(body, 'mutate')
      return outcome.ok ? outcome.decision?.writer : undefined
    }
    t.equal(await writerFor('system:serviceaccount:ops:thv'), 'operator')
    t.equal(await writerFor('system:serviceaccount:toolhive-system:toolhive-operator'), 'other')
  },
)
