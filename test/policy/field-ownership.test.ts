import t from 'tap'
import {
  conditionTypesOwnedByOthers,
  conflictingConditionTypes,
} from '../../src/policy/field-ownership.ts'

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
