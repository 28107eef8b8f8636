import t from 'tap'
import {
  conditionTypesOwnedByOthers,
  conditionTypesToLeave,
  conflictingConditionTypes,
  statusFieldManagers,
} from '../../../src/policy/kube/field-ownership.ts'

const SELF = 'mcp-admission-status'
const condition = (...fields: string[]) =>
  Object.fromEntries(['.', ...fields].map((field) => [field, {}]))
const entry = (manager: string, conditions: Record<string, unknown>, extra = {}) => ({
  manager,
  operation: 'Update',
  subresource: 'status',
  fieldsV1: { 'f:status': { 'f:conditions': { '.': {}, ...conditions }, ...extra } },
})

t.test('condition types another manager owns any part of', async (t) => {
  const managedFields = [
    entry('thv-operator', {
      'k:{"type":"Ready"}': condition('f:status', 'f:reason', 'f:message'),
      // An Update that changed only the message still owns that part of the condition.
      'k:{"type":"SessionStorageWarning"}': { 'f:message': {} },
    }),
    entry(SELF, { 'k:{"type":"StdioReplicaCapped"}': condition('f:status') }),
    { manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
  ]
  t.same([...conditionTypesOwnedByOthers(managedFields, SELF)].sort(), [
    'Ready',
    'SessionStorageWarning',
  ])
})

t.test('what it cannot read owns nothing', async (t) => {
  const inputs: unknown[] = [
    undefined,
    null,
    'x',
    [null, 1, 'x', {}],
    [{ manager: 'op', fieldsV1: null }],
    [{ manager: 'op', fieldsV1: { 'f:status': { 'f:conditions': [] } } }],
    [entry('op', { 'k:not json': {}, 'k:{"name":"x"}': {}, 'k:{"type":7}': {}, 'f:x': {} })],
  ]
  for (const input of inputs) t.same([...conditionTypesOwnedByOthers(input, SELF)], [])
})

t.test('conflict causes name the condition by its key', async (t) => {
  const fields = [
    '.status.conditions[type="SessionStorageWarning"].observedGeneration',
    '.status.conditions[type="Valid"].message',
    '.status.conditions[type="with \\"quote\\""].status',
    '.status.configHash',
    '.spec.replicas',
    '.status.conditions[type=unquoted].x',
  ]
  t.same([...conflictingConditionTypes(fields)].sort(), [
    'SessionStorageWarning',
    'Valid',
    'with "quote"',
  ])
})

t.test('which of its conditions the reconciler leaves alone', async (t) => {
  const desired = [
    { type: 'SessionStorageWarning', observedGeneration: 2 },
    { type: 'StdioReplicaCapped', observedGeneration: 2 },
    { type: 'Absent', observedGeneration: 2 },
  ]
  const whole = ['f:type', 'f:status', 'f:reason', 'f:message', 'f:lastTransitionTime']
  const present = [{ type: 'SessionStorageWarning' }, { type: 'StdioReplicaCapped' }]
  const cases: [name: string, managedFields: unknown[], expected: string[]][] = [
    [
      'wholly its own: nothing left',
      [
        entry(SELF, {
          'k:{"type":"SessionStorageWarning"}': condition(...whole, 'f:observedGeneration'),
          'k:{"type":"StdioReplicaCapped"}': condition(...whole, 'f:observedGeneration'),
        }),
      ],
      [],
    ],
    [
      // An operator's Update that dropped observedGeneration leaves no owner, only the claim pruned.
      'a field it set was removed by someone else',
      [
        entry(SELF, {
          'k:{"type":"SessionStorageWarning"}': condition(...whole),
          'k:{"type":"StdioReplicaCapped"}': condition(...whole, 'f:observedGeneration'),
        }),
      ],
      ['SessionStorageWarning'],
    ],
    [
      'present but owned by nobody (written before, or given up)',
      [
        entry(SELF, {
          'k:{"type":"StdioReplicaCapped"}': condition(...whole, 'f:observedGeneration'),
        }),
      ],
      ['SessionStorageWarning'],
    ],
    [
      'another manager owns part of it',
      [
        entry(SELF, {
          'k:{"type":"SessionStorageWarning"}': condition(...whole, 'f:observedGeneration'),
          'k:{"type":"StdioReplicaCapped"}': condition(...whole, 'f:observedGeneration'),
        }),
        entry('thv-operator', { 'k:{"type":"StdioReplicaCapped"}': { 'f:message': {} } }),
      ],
      ['StdioReplicaCapped'],
    ],
  ]
  for (const [name, managedFields, expected] of cases) {
    t.same([...conditionTypesToLeave(managedFields, SELF, present, desired)].sort(), expected, name)
  }
  t.same(
    [...conditionTypesToLeave(undefined, SELF, undefined, desired)],
    [],
    'nothing there yet: everything is its to stamp',
  )
  const noGeneration = [{ type: 'SessionStorageWarning' }]
  t.same(
    [
      ...conditionTypesToLeave(
        [entry(SELF, { 'k:{"type":"SessionStorageWarning"}': condition(...whole) })],
        SELF,
        present,
        noGeneration,
      ),
    ],
    [],
    'without a generation, observedGeneration is not one of its fields',
  )
})

t.test('the managers of a status field owned whole', async (t) => {
  const managedFields = [
    entry(SELF, {}, { 'f:validationStatus': {}, 'f:validationErrors': {} }),
    entry('thv-operator', {}, { 'f:validationStatus': {} }),
    // An entry with no manager's name is someone's all the same.
    { operation: 'Update', fieldsV1: { 'f:status': { 'f:validationStatus': {} } } },
    { manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:spec': { 'f:name': {} } } },
    null,
    { manager: 'broken', fieldsV1: { 'f:status': 'x' } },
  ]
  t.same([...statusFieldManagers(managedFields, 'validationStatus')], [SELF, 'thv-operator', ''])
  t.same([...statusFieldManagers(managedFields, 'validationErrors')], [SELF])
  t.same([...statusFieldManagers(managedFields, 'observedGeneration')], [])
  t.same([...statusFieldManagers(undefined, 'validationStatus')], [], 'no managedFields: no owner')
})
