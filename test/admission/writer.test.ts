import t from 'tap'
import { operatorWriter } from '../../src/admission/writer.ts'

t.test('the operator service account, in any namespace or one named', async (t) => {
  const cases: [string | undefined, unknown, 'operator' | 'other'][] = [
    [
      undefined,
      { username: 'system:serviceaccount:toolhive-system:toolhive-operator' },
      'operator',
    ],
    [undefined, { username: 'system:serviceaccount:platform:toolhive-operator' }, 'operator'],
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
    t.equal(operatorWriter(account)(userInfo), expected, `${account}: ${JSON.stringify(userInfo)}`)
  }
})
